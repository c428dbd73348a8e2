from __future__ import annotations

import gc
import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.audit.models import AuditEvent, QuarantinedPayload
from reviewqueue.reviews.models import Answer, AnswerVersion, ReviewItem, Verdict
from tests.conftest import answer_body, frozen_and_walked

pytestmark = pytest.mark.django_db


def test_a_supported_answer_is_a_candidate(publish: Any, submit: Any) -> None:
    publish()
    response = submit()
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "candidate"
    assert body["verdict"]["decision"] == "candidate"
    assert body["verdict"]["reason"] == "supported"
    assert body["review_url"] is None
    assert not ReviewItem.objects.exists()


def test_a_conflicted_answer_is_held_with_a_review_url(publish: Any, submit: Any) -> None:
    publish()
    publish(
        "pricing-eu",
        facts=[
            {
                "key": "trial_days",
                "value": 30,
                "valid_from": "2026-10-01",
                "valid_until": "2026-10-31",
                "span": "p1",
            }
        ],
    )
    response = submit(
        retrieved=[
            {"cite": "d1", "document_id": "pricing", "revision": "r1"},
            {"cite": "d2", "document_id": "pricing-eu", "revision": "r1"},
        ]
    )
    body = response.json()
    assert response.status_code == 201
    assert body["status"] == "held"
    assert body["verdict"]["reason"] == "conflicting_sources"
    assert body["review_url"].endswith("/answers/t-1/")
    item = ReviewItem.objects.get()
    assert item.primary_reason == "conflicting_sources"


def test_a_claim_citing_an_unknown_marker_abstains(publish: Any, submit: Any) -> None:
    publish()
    body = submit(claims=[{"key": "trial_days", "value": 14, "cite": "d9"}]).json()
    assert body["status"] == "abstained"
    assert body["verdict"]["reason"] == "unknown_citation"


def test_an_answer_generated_from_an_old_revision_is_held_as_superseded(
    publish: Any, submit: Any
) -> None:
    publish()
    publish(revision="r2")
    body = submit().json()
    assert body["status"] == "held"
    assert body["verdict"]["reason"] == "superseded_revision"


def test_a_revision_never_received_is_invalid_metadata(submit: Any, owner: Any) -> None:
    body = submit().json()
    assert body["status"] == "held"
    assert body["verdict"]["reason"] == "invalid_metadata"


def test_a_withdrawn_document_leaves_the_citation_unresolved(
    publish: Any, submit: Any, service_api: Any
) -> None:
    publish()
    service_api.delete("/api/v1/documents/pricing")
    body = submit().json()
    assert body["status"] == "abstained"
    assert body["verdict"]["reason"] == "unknown_citation"
    assert "withdrawn" in json.dumps(body["verdict"]["findings"])


def test_the_asker_may_not_read_a_retrieved_document(publish: Any, submit: Any) -> None:
    publish(principals=["group:hr"])
    body = submit(asked_by=["user:customer-7"]).json()
    assert body["status"] == "abstained"
    assert body["verdict"]["reason"] == "unauthorized_evidence"


def test_replaying_the_same_body_returns_the_same_result_and_stores_nothing(
    publish: Any, submit: Any
) -> None:
    publish()
    first = submit().json()
    counts = (Answer.objects.count(), Verdict.objects.count(), AuditEvent.objects.count())
    again = submit()
    assert again.status_code == 200
    assert again.json() == first
    assert (Answer.objects.count(), Verdict.objects.count(), AuditEvent.objects.count()) == counts


def test_who_asked_in_another_order_is_a_replay(publish: Any, submit: Any) -> None:
    """The same people asking, listed in another order: the same body, answered as the
    first (14.0 for 14 is not the same: see below)."""
    publish()
    first = submit(asked_by=["user:customer-7", "group:sales"])
    again = submit(asked_by=["group:sales", "user:customer-7"])

    assert first.status_code == 201
    assert again.status_code == 200, again.content
    assert again.json() == first.json()
    assert Answer.objects.count() == 1


def test_the_same_trace_id_with_another_body_is_409(publish: Any, submit: Any) -> None:
    publish()
    submit()
    response = submit(answer="Something else entirely [d1].")
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "conflict"
    # The refusal names what differs, as any other refusal names its field.
    assert body["detail"] == ("trace_id 't-1' was already submitted with a different body "
                              "(it differs in answer)")
    assert body["errors"] == [{"field": "answer", "message": "differs from the body first "
                                                             "submitted with this trace_id"}]
    assert QuarantinedPayload.objects.get().trace_id == "t-1"


def test_a_409_names_every_field_that_differs_even_after_an_edit(
    publish: Any, submit: Any, service_api: Any
) -> None:
    publish()
    submit()
    AnswerVersion.objects.create(answer=Answer.objects.get(), number=2, text="Edited [d1].",
                                 claims=[])  # an edit does not change what was first sent
    assert submit().status_code == 200
    body = {**answer_body(claims=[{"key": "trial_days", "value": 30, "cite": "d1"}]),
            "index_release": "other"}
    results = service_api.post("/api/v1/answers/batch", {"answers": [body]},
                               format="json").json()["results"]
    assert results[0]["status_code"] == 409
    assert [e["field"] for e in results[0]["errors"]] == ["index_release", "claims"]
    # 14.0 is not 14 to the gate, nor to the replay check.
    body = answer_body(claims=[{"key": "trial_days", "value": 14.0, "cite": "d1"}])
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 409
    assert [e["field"] for e in response.json()["errors"]] == ["claims"]


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda b: b.pop("question"), "question"),
        (lambda b: b.update(trace_id="has spaces"), "trace_id"),
        (lambda b: b.update(asked_by="user:x"), "asked_by"),
        (lambda b: b.update(asked_by=["nobody"]), "asked_by[0]"),
        (lambda b: b.update(as_of="20-10-2026"), "as_of"),
        (lambda b: b["claims"][0].pop("cite"), "claims[0].cite"),
        (lambda b: b["claims"][0].update(value=[14]), "claims[0].value"),
        (
            lambda b: b["claims"].append({"key": "k", "value": 1, "cite": "d1", "x": 1}),
            "claims[1].x",
        ),
        (lambda b: b["retrieved"][0].pop("revision"), "retrieved[0].revision"),
        (lambda b: b["retrieved"].append(dict(b["retrieved"][0])), "retrieved[1].cite"),
        (lambda b: b.update(extra="field"), "extra"),
        (lambda b: b.update(claims=[{"key": "k", "value": 1, "cite": "d1"}] * 1001), "claims"),
    ],
)
def test_bad_answers_name_the_field_and_are_quarantined(
    publish: Any, service_api: Any, mutate: Any, field: str
) -> None:
    publish()
    body = answer_body()
    mutate(body)
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 400, response.content
    assert field in [e["field"] for e in response.json()["errors"]]
    assert not Answer.objects.exists()
    assert QuarantinedPayload.objects.get().status_code == 400


def claims_too_many_with_one_bad() -> list[dict[str, Any]]:
    """1001 claims, one past the limit, the fourth without its cite."""
    claims = [{"key": f"k{i}", "value": i, "cite": "d1"} for i in range(1001)]
    del claims[3]["cite"]
    return claims


def test_a_list_too_long_is_named_in_the_same_round_as_its_bad_item(
    publish: Any, service_api: Any
) -> None:
    """The caller used to fix the item, send again, and only then learn the list was too
    long."""
    publish()
    body = answer_body(claims=claims_too_many_with_one_bad())
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 400, response.content
    assert [(e["field"], e["message"]) for e in response.json()["errors"]] == [
        ("claims", "Ensure this field has no more than 1000 elements."),
        ("claims[3].cite", "This field is required."),
    ]


def test_malformed_json_is_400_and_quarantined(service_api: Any, service: Any) -> None:
    response = service_api.post(
        "/api/v1/answers", data="{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"] == "parse_error"
    assert QuarantinedPayload.objects.get().body == "{not json"


def test_an_oversized_body_is_413_and_kept_truncated(
    service_api: Any, settings: Any, service: Any
) -> None:
    settings.API_MAX_BODY_BYTES = 2048
    body = answer_body(answer="x" * 5000)
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 413
    reply = response.json()
    assert reply["error"] == "payload_too_large"
    # Named in `errors` as a body that does not parse is, for clients that read only those.
    assert reply["errors"] == [{"field": "body", "message": reply["detail"]}]
    kept = QuarantinedPayload.objects.get()
    assert kept.status_code == 413
    assert kept.size_bytes > 2048


def test_a_large_body_refused_for_one_field_is_kept_whole(
    publish: Any, service_api: Any
) -> None:
    """300 KB, over the 64 KiB kept of an oversized body: the bad field at its end is kept."""
    publish()
    body = answer_body(answer="The free trial lasts 14 days [d1]. " + "x" * 300_000)
    body["claims"].append({"key": "seats", "value": [1], "cite": "d1"})
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 400
    kept = QuarantinedPayload.objects.get()
    assert not kept.truncated and kept.size_bytes > 300_000
    assert json.loads(kept.body)["claims"][1]["value"] == [1]


def test_a_reviewer_token_cannot_submit(token_client: Any, reviewer: Any) -> None:
    response = token_client(reviewer).post("/api/v1/answers", answer_body(), format="json")
    assert response.status_code == 403


def test_ingest_runs_the_same_number_of_queries_for_1_and_50_claims(
    publish: Any, service_api: Any
) -> None:
    facts = [
        {"key": f"k{i}", "value": i, "valid_from": "2026-10-01", "valid_until": "2026-10-31"}
        for i in range(50)
    ]
    publish(facts=facts)

    def queries_for(trace_id: str, n: int) -> int:
        claims = [{"key": f"k{i}", "value": i, "cite": "d1"} for i in range(n)]
        with CaptureQueriesContext(connection) as ctx:
            response = service_api.post(
                "/api/v1/answers", answer_body(trace_id, claims=claims), format="json"
            )
        assert response.status_code == 201, response.content
        return len(ctx.captured_queries)

    assert queries_for("one", 1) == queries_for("fifty", 50)


def test_get_answer_shows_status_verdicts_and_decisions(
    publish: Any, submit: Any, service_api: Any
) -> None:
    publish()
    submit()
    body = service_api.get("/api/v1/answers/t-1").json()
    assert body["status"] == "candidate"
    assert len(body["verdicts"]) == 1
    assert body["verdicts"][0]["trigger"] == "ingest"
    assert body["decisions"] == []


def test_a_review_token_reads_what_an_edit_starts_from(
    publish: Any, submit: Any, token_client: Any, reviewer: Any,
) -> None:
    publish()
    submit(claims=[{"key": "trial_days", "value": 14, "cite": "d1", "subject": "EU"}])
    review_only = token_client(reviewer, scopes=["review"])
    body = review_only.get("/api/v1/answers/t-1").json()
    assert (body["version"], body["answer"], body["claims"]) == (
        1, "The free trial lasts 14 days [d1].",
        [{"key": "trial_days", "value": 14, "cite": "d1", "subject": "EU"}])
    assert body["verdict"]["id"] == body["verdicts"][0]["id"]
    # A token with neither scope is told which one it lacks.
    refused = token_client(reviewer, scopes=["submit"]).get("/api/v1/answers/t-1")
    assert refused.status_code == 403
    assert refused.json()["detail"] == "This token lacks the `read` or the `review` scope."


def test_a_reviewer_cannot_read_an_answer_citing_a_document_they_may_not_read(
    publish: Any, submit: Any, token_client: Any, reviewer: Any, hr_reviewer: Any
) -> None:
    publish(principals=["group:hr"])
    submit(asked_by=["group:hr"])
    assert token_client(reviewer).get("/api/v1/answers/t-1").status_code == 404
    assert token_client(hr_reviewer).get("/api/v1/answers/t-1").status_code == 200


def test_ingest_writes_an_audit_event_without_answer_text(publish: Any, submit: Any) -> None:
    publish()
    submit(answer="The secret-marker-771 trial lasts 14 days [d1].")
    event = AuditEvent.objects.get(action="answer.ingested")
    assert event.trace_id == "t-1"
    assert "secret-marker-771" not in json.dumps([event.before, event.after])


class TestBatch:
    def test_good_items_land_and_bad_ones_are_reported_in_order(
        self, publish: Any, service_api: Any
    ) -> None:
        publish()
        bad = answer_body("b-2")
        bad["claims"][0].pop("key")
        response = service_api.post(
            "/api/v1/answers/batch",
            {"answers": [answer_body("b-1"), bad, answer_body("b-3"), "not an object"]},
            format="json",
        )
        assert response.status_code == 200
        results = response.json()["results"]
        assert [r["status_code"] for r in results] == [201, 400, 201, 400]
        assert results[1]["errors"][0]["field"] == "claims[0].key"
        assert set(Answer.objects.values_list("trace_id", flat=True)) == {"b-1", "b-3"}
        assert QuarantinedPayload.objects.count() == 2

    def test_a_batch_runs_with_the_cyclic_collector_off_and_turns_it_back_on(
        self, publish: Any, service_api: Any, monkeypatch: Any
    ) -> None:
        from reviewqueue.reviews import api

        publish()
        seen: list[bool] = []
        ingest = api.answers_ingest

        def watched(**kwargs: Any) -> Any:
            seen.append(gc.isenabled())
            return ingest(**kwargs)

        monkeypatch.setattr(api, "answers_ingest", watched)
        response = service_api.post("/api/v1/answers/batch", {"answers": [answer_body("g-1")]},
                                    format="json")
        assert response.json()["results"][0]["status_code"] == 201
        assert seen == [False]
        assert gc.isenabled()

        def failing(**kwargs: Any) -> Any:
            raise RuntimeError("the database went away")

        monkeypatch.setattr(api, "answers_ingest", failing)
        with pytest.raises(RuntimeError):
            service_api.post("/api/v1/answers/batch", {"answers": [answer_body("g-2")]},
                             format="json")
        assert gc.isenabled()

    def test_a_collector_someone_turned_off_stays_off(self) -> None:
        from reviewqueue.gcpause import collector_paused

        gc.disable()
        try:
            with collector_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()
        finally:
            gc.enable()

    def test_the_served_app_keeps_its_startup_objects_out_of_full_collections(self) -> None:
        # In a process as gunicorn starts one: loading the WSGI app leaves what it loaded (most
        # objects alive) out of the collector's passes, so a full pass walks few of them.
        frozen, walked = frozen_and_walked("import reviewqueue.wsgi")
        assert frozen > 10 * walked, (frozen, walked)

    def test_an_item_with_too_many_claims_names_them_and_its_bad_claim(
        self, publish: Any, service_api: Any
    ) -> None:
        publish()
        response = service_api.post(
            "/api/v1/answers/batch",
            {"answers": [answer_body("b-1", claims=claims_too_many_with_one_bad()),
                         answer_body("b-2")]},
            format="json",
        )
        assert response.status_code == 200
        first, second = response.json()["results"]
        assert [e["field"] for e in first["errors"]] == ["claims", "claims[3].cite"]
        assert second["status_code"] == 201

    def test_more_than_500_items_is_refused(self, service_api: Any, service: Any) -> None:
        response = service_api.post(
            "/api/v1/answers/batch",
            {"answers": [answer_body(f"x{i}") for i in range(501)]},
            format="json",
        )
        assert response.status_code == 400
        assert response.json()["errors"][0]["field"] == "answers"


def test_healthz_reports_database_and_broker(client: Any) -> None:
    body = client.get("/healthz").json()
    assert body["database"]["ok"] is True
    assert "broker" in body


def test_the_openapi_schema_lists_the_ingest_endpoints(client: Any) -> None:
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/v1/answers" in paths
    assert "/api/v1/documents/{document_id}/revisions/{revision}" in paths


def test_every_property_of_the_schema_has_a_type(client: Any) -> None:
    """A client generated from the schema gets typed findings, warnings and revisions used,
    not bare JSON."""
    schemas = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()[
        "components"]["schemas"]
    untyped = [f"{name}.{prop}" for name, schema in schemas.items()
               for prop, spec in (schema.get("properties") or {}).items()
               if not {"type", "$ref", "oneOf", "anyOf", "allOf", "enum"} & spec.keys()]
    assert untyped == []
    verdict = schemas["VerdictOut"]["properties"]
    assert verdict["findings"]["items"]["properties"]["step"] == {
        "type": "string", "description": "row of the decision order, 0 to 7b"}
    assert verdict["revisions_used"]["items"]["required"] == [
        "cite", "document", "revision", "current"]
    # A value's limit, as the server holds it, for a client to check before sending.
    for name in ("ClaimInRequest", "FactInRequest"):
        assert {"type": "string", "maxLength": 2000} in (
            schemas[name]["properties"]["value"]["oneOf"])


def test_one_answer_writes_its_rows_in_one_statement_and_reuses_prepared_plans(
    publish: Any, service_api: Any
) -> None:
    """An answer, its version, citations and verdict go in with one INSERT, and the hot
    statements are planned once per connection, not once per request."""
    publish()
    publish(document_id="terms")
    retrieved = [{"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
                 {"cite": "d2", "document_id": "terms", "revision": "r1"}]
    service_api.post("/api/v1/answers", answer_body("warm", retrieved=retrieved), format="json")

    def prepared() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements")
            return int(cursor.fetchone()[0])

    before = prepared()
    with CaptureQueriesContext(connection) as ctx:
        response = service_api.post("/api/v1/answers", answer_body("t-2", retrieved=retrieved),
                                    format="json")
    assert response.status_code == 201, response.content
    assert prepared() == before > 0
    writes = [q["sql"] for q in ctx.captured_queries
              if "INSERT INTO" in q["sql"] and "reviews_" in q["sql"]]
    assert len(writes) == 1, writes
    answer = Answer.objects.get(trace_id="t-2")
    assert answer.current_version.answer_id == answer.pk
    assert answer.current_verdict.version_id == answer.current_version_id
    assert sorted(answer.retrieved.values_list("cite", "document_key")) == [
        ("d1", "pricing"), ("d2", "terms")]
    assert response.json()["verdict"]["id"] == answer.current_verdict_id
