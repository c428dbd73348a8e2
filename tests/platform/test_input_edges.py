"""Input on the edges of what can be stored or gated: each is a 400 naming the field, the
payload is kept in the quarantine, and in a batch only the bad item is refused."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator

from reviewqueue.audit.models import QuarantinedPayload
from reviewqueue.reviews.models import Answer, AnswerVersion, Decision
from reviewqueue.reviews.services.reevaluation import answer_reevaluate
from reviewqueue.sources.models import Revision
from tests.conftest import answer_body, revision_body
from tests.reviews.conftest import current_verdict_id, hold, sources  # noqa: F401

pytestmark = pytest.mark.django_db

REVISION = "/api/v1/documents/pricing/revisions/r1"
UNSTORABLE = ["nul\x00", "lone \ud800 surrogate"]
# PostgreSQL would give these back as another value: 1e16 as the integer 10000000000000000.
FLOATS_CHANGED_BY_STORAGE = [1e16, 1e19, -1.5e300, -0.0]


def send(client: Any, url: str, body: Any, method: str = "post") -> Any:
    """Send `body` as JSON escaped to ASCII: the test client's own encoder cannot write a lone
    surrogate, which a JSON sender can."""
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


def fields(response: Any) -> list[str]:
    return [e["field"] for e in response.json()["errors"]]


def batch(client: Any, *answers: Any) -> list[dict[str, Any]]:
    response = send(client, "/api/v1/answers/batch", {"answers": list(answers)})
    assert response.status_code == 200, response.content
    return response.json()["results"]  # type: ignore[no-any-return]


def stored_trace_ids() -> set[str]:
    return set(Answer.objects.values_list("trace_id", flat=True))


# --- Values the gate cannot take --------------------------------------------------------------

@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**40, *UNSTORABLE,
                                   *FLOATS_CHANGED_BY_STORAGE])
def test_a_fact_value_the_gate_or_postgresql_cannot_hold_is_refused_naming_the_field(
    service_api: Any, owner: Any, value: int | str
) -> None:
    body = revision_body()
    body["facts"][0]["value"] = value
    response = send(service_api, REVISION, body, "put")
    assert response.status_code == 400
    assert fields(response) == ["facts[0].value"]
    assert not Revision.objects.exists()
    assert [e["field"] for e in QuarantinedPayload.objects.get().errors] == ["facts[0].value"]


def test_a_fact_value_on_the_64_bit_edge_is_published(service_api: Any, owner: Any) -> None:
    body = revision_body()
    body["facts"][0]["value"] = 2**63 - 1
    assert send(service_api, REVISION, body, "put").status_code == 201


@pytest.mark.parametrize("value", [10**40, -(2**63) - 1, *UNSTORABLE, *FLOATS_CHANGED_BY_STORAGE])
def test_a_claim_value_the_gate_or_postgresql_cannot_hold_is_refused_naming_the_field(
    publish: Any, service_api: Any, value: int | str
) -> None:
    publish()
    body = answer_body(claims=[{"key": "trial_days", "value": value, "cite": "d1"}])
    response = send(service_api, "/api/v1/answers", body)
    assert response.status_code == 400
    assert fields(response) == ["claims[0].value"]
    assert not Answer.objects.exists()
    assert QuarantinedPayload.objects.get().trace_id == "t-1"


def test_a_claim_value_too_large_for_a_float_is_refused_naming_the_field(
    publish: Any, service_api: Any
) -> None:
    publish()
    # 1e400 is valid JSON; Python reads it as infinity, which the gate refuses.
    body = json.dumps(answer_body()).replace('"value": 14', '"value": 1e400')
    response = service_api.post("/api/v1/answers", data=body, content_type="application/json")
    assert response.status_code == 400
    assert fields(response) == ["claims[0].value"]
    assert not Answer.objects.exists()
    assert "1e400" in QuarantinedPayload.objects.get().body


def test_a_float_below_the_limit_is_gated_and_stored_as_the_same_value(
    service_api: Any, owner: Any, reviewer: Any, token_client: Any
) -> None:
    value = 9999999999999998.0  # the largest float PostgreSQL gives back as a float
    body = revision_body()
    body["facts"][0]["value"] = value
    assert send(service_api, REVISION, body, "put").status_code == 201
    answer = answer_body(claims=[{"key": "trial_days", "value": value, "cite": "d1"}])
    response = send(service_api, "/api/v1/answers", answer)
    assert response.status_code == 201, response.content
    verdict = response.json()["verdict"]
    assert verdict["reason"] != "unsupported_claim", verdict
    stored = AnswerVersion.objects.get().claims[0]["value"]
    assert stored == value and isinstance(stored, float)
    assert Revision.objects.get().facts.get().value == value
    # Gated again on what the database gives back: the same fingerprint, no new verdict.
    assert answer_reevaluate(answer_id=Answer.objects.get().pk, trigger="revision") is None


# --- Text PostgreSQL cannot store: NUL, lone surrogates ---------------------------------------

@pytest.mark.parametrize("value", UNSTORABLE)
def test_an_edit_claiming_an_unstorable_value_is_refused_naming_the_field(
    hold: Any, reviewer: Any, token_client: Any, value: str  # noqa: F811
) -> None:
    trace = hold()
    body = {"action": "edit", "verdict": current_verdict_id(trace),
            "answer": "The free trial lasts 14 days [d1].",
            "claims": [{"key": "trial_days", "value": value, "cite": "d1"}]}
    response = send(token_client(reviewer), f"/api/v1/answers/{trace}/decisions", body)
    assert response.status_code == 400
    assert fields(response) == ["claims[0].value"]
    assert AnswerVersion.objects.filter(answer__trace_id=trace).count() == 1
    assert not Decision.objects.exists()
    assert QuarantinedPayload.objects.get().status_code == 400


@pytest.mark.parametrize("value", [10**40, *UNSTORABLE, 1e19])
def test_a_batch_item_with_a_value_the_gate_or_postgresql_cannot_hold_is_that_items_error(
    publish: Any, service_api: Any, value: int | str
) -> None:
    publish()
    bad = answer_body("b-2", claims=[{"key": "trial_days", "value": value, "cite": "d1"}])
    results = batch(service_api, answer_body("b-1"), bad, answer_body("b-3"))
    assert [r["status_code"] for r in results] == [201, 400, 201]
    assert [e["field"] for e in results[1]["errors"]] == ["claims[0].value"]
    assert stored_trace_ids() == {"b-1", "b-3"}
    assert QuarantinedPayload.objects.get().trace_id == "b-2"


# --- The quarantine keeps any text ------------------------------------------------------------

def test_a_field_name_with_a_lone_surrogate_is_refused_and_kept(
    publish: Any, service_api: Any
) -> None:
    publish()
    body = answer_body()
    body["bogus\ud800"] = 1
    response = send(service_api, "/api/v1/answers", body)
    assert response.status_code == 400
    assert fields(response) == ["bogus\ufffd"]
    kept = QuarantinedPayload.objects.get()
    assert [e["field"] for e in kept.errors] == ["bogus\ufffd"]
    assert "bogus\\ud800" in kept.body
    assert not Answer.objects.exists()


def test_a_trace_id_with_a_lone_surrogate_is_refused_and_kept(
    publish: Any, service_api: Any
) -> None:
    publish()
    response = send(service_api, "/api/v1/answers", answer_body("t\ud800"))
    assert response.status_code == 400
    assert fields(response) == ["trace_id"]
    kept = QuarantinedPayload.objects.get()
    assert kept.trace_id == "t\ufffd"
    assert "t\\ud800" in kept.body
    assert not Answer.objects.exists()


def test_a_batch_item_with_a_lone_surrogate_is_kept_and_the_good_item_lands(
    publish: Any, service_api: Any
) -> None:
    publish()
    bad = answer_body("b-2")
    bad["question"] = "q\ud800"
    results = batch(service_api, answer_body("b-1"), bad)
    assert [r["status_code"] for r in results] == [201, 400]
    assert [e["field"] for e in results[1]["errors"]] == ["question"]
    assert stored_trace_ids() == {"b-1"}
    kept = QuarantinedPayload.objects.get()
    assert (kept.trace_id, kept.status_code) == ("b-2", 400)
    assert "q\\ud800" in kept.body


def test_a_batch_item_whose_trace_id_has_a_lone_surrogate_is_that_items_error(
    publish: Any, service_api: Any
) -> None:
    publish()
    results = batch(service_api, answer_body("b-1"), answer_body("b\ud800"))
    assert [r["status_code"] for r in results] == [201, 400]
    assert [e["field"] for e in results[1]["errors"]] == ["trace_id"]
    assert stored_trace_ids() == {"b-1"}
    assert QuarantinedPayload.objects.get().trace_id == "b\ufffd"


@pytest.mark.parametrize("trace_id", [
    {"x": "y" * 1000},
    5,
    json.loads("[" * 900 + "]" * 900),  # as deep as the JSON parser lets through
])
def test_a_batch_item_whose_trace_id_is_no_string_is_that_items_error_and_not_echoed(
    publish: Any, service_api: Any, trace_id: Any
) -> None:
    publish()
    results = batch(service_api, answer_body("b-1"), {**answer_body(), "trace_id": trace_id})
    assert [r["status_code"] for r in results] == [201, 400]
    assert results[1]["trace_id"] is None
    assert [e["field"] for e in results[1]["errors"]] == ["trace_id"]
    assert stored_trace_ids() == {"b-1"}
    assert QuarantinedPayload.objects.get().trace_id == ""


# --- One result per batch item ------------------------------------------------------------------

def test_a_null_batch_item_is_that_items_error(publish: Any, service_api: Any) -> None:
    publish()
    results = batch(service_api, answer_body("b-1"), None)
    assert [r["status_code"] for r in results] == [201, 400]
    assert [e["field"] for e in results[1]["errors"]] == ["answers[1]"]
    assert stored_trace_ids() == {"b-1"}
    assert QuarantinedPayload.objects.get().body == "null"


# --- No silent coercion to a string ---------------------------------------------------------

def test_a_number_where_a_cite_belongs_is_refused(publish: Any, service_api: Any) -> None:
    publish()
    response = send(service_api, "/api/v1/answers",
                    answer_body(claims=[{"key": "trial_days", "value": 14, "cite": 5}]))
    assert response.status_code == 400
    assert fields(response) == ["claims[0].cite"]
    assert not Answer.objects.exists()
    assert [e["field"] for e in QuarantinedPayload.objects.get().errors] == ["claims[0].cite"]


def test_a_number_where_an_owner_belongs_is_refused(
    service_api: Any, make_user: Any
) -> None:
    make_user("5", "owner")  # DRF's CharField would take 5 for "5" and publish
    body = revision_body()
    body["owner"] = 5
    response = send(service_api, REVISION, body, "put")
    assert response.status_code == 400
    assert fields(response) == ["owner"]
    assert not Revision.objects.exists()
    assert [e["field"] for e in QuarantinedPayload.objects.get().errors] == ["owner"]


# --- Bodies that are not JSON, and the schema ---------------------------------------------------

@pytest.mark.parametrize("url", ["/api/v1/answers", "/api/v1/answers/batch",
                                 "/api/v1/documents/pricing/revisions/r1"])
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_body_that_is_not_json_is_a_clear_415_and_kept(
    service_api: Any, service: Any, url: str, content_type: str
) -> None:
    send = service_api.put if "documents" in url else service_api.post
    response = send(url, data="trace_id=t-1", content_type=content_type)
    assert response.status_code == 415
    assert response.json()["error"] == "unsupported_media_type"
    assert content_type in response.json()["detail"]
    assert fields(response) == ["body"]
    assert QuarantinedPayload.objects.get().body == "trace_id=t-1"


# None: the test client sends no Content-Type at all; "": what DRF reads when a server leaves
# the header out of the request (gunicorn does).
NO_CONTENT_TYPE = [None, ""]


@pytest.mark.parametrize("url", ["/api/v1/answers", "/api/v1/answers/batch",
                                 "/api/v1/documents/pricing/revisions/r1"])
@pytest.mark.parametrize("content_type", NO_CONTENT_TYPE)
def test_a_json_body_with_no_content_type_is_a_415_naming_body_and_kept(
    service_api: Any, owner: Any, url: str, content_type: str | None
) -> None:
    """`requests.post(url, data=json.dumps(body))` sends no Content-Type: DRF read such a
    body as `{}`, and a whole answer was told that each of its fields was missing."""
    if "documents" in url:
        method, body = "PUT", revision_body()
    else:
        method, body = "POST", answer_body() if url.endswith("answers") else {
            "answers": [answer_body()]}
    text = json.dumps(body)
    response = service_api.generic(method, url, text, content_type=content_type)
    assert response.status_code == 415, response.content
    assert response.json()["error"] == "unsupported_media_type"
    assert "Content-Type: application/json" in response.json()["detail"]
    assert fields(response) == ["body"]
    assert QuarantinedPayload.objects.get().body == text
    assert not Answer.objects.exists() and not Revision.objects.exists()


@pytest.mark.django_db
def test_a_body_is_kept_as_it_was_sent_in_its_charset(service_api: Any) -> None:
    # Read in the charset it names, as the API read it; a byte no charset can read is kept
    # as its escape, not replaced.
    latin = json.dumps({**answer_body("t-café-1"), "asked_by": "nobody"}, ensure_ascii=False)
    response = service_api.post("/api/v1/answers", data=latin.encode("latin-1"),
                                content_type="application/json; charset=iso-8859-1")
    assert response.status_code == 400, response.content
    assert "asked_by" in fields(response)
    assert QuarantinedPayload.objects.get().body == latin

    broken = b'{"trace_id": "t-\xff", "question": 1}'
    assert service_api.post("/api/v1/answers", data=broken,
                            content_type="application/json").status_code == 400
    assert QuarantinedPayload.objects.latest("pk").body == '{"trace_id": "t-\\xff", ' \
        '"question": 1}'


@pytest.mark.parametrize("charset", ["punycode", "idna"])
def test_a_body_in_a_charset_that_reads_only_strictly_is_a_400_and_kept(
    service_api: Any, charset: str
) -> None:
    """punycode and idna take no error handler but "strict": the refused body is kept read
    as UTF-8, as one in a charset that reads no text, not turned into a server error."""
    body = '{"trace_id": 5}'
    service_api.raise_request_exception = False
    response = service_api.generic("POST", "/api/v1/answers", body.encode(),
                                   content_type=f"application/json; charset={charset}")
    assert response.status_code == 400, response.content
    assert QuarantinedPayload.objects.get().body == body


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)  # type: ignore[no-any-return]


def test_the_schema_offers_json_bodies_only(schema: dict[str, Any]) -> None:
    bodies = {(method, path): list(operation["requestBody"]["content"])
              for path, operations in schema["paths"].items()
              for method, operation in operations.items() if "requestBody" in operation}
    assert ("post", "/api/v1/answers/{trace_id}/decisions") in bodies
    assert ("post", "/api/v1/jobs") in bodies
    assert {key: ["application/json"] for key in bodies} == bodies


@pytest.mark.parametrize(("path", "method", "statuses"), [
    ("/api/v1/answers/batch", "post", {"200", "400", "413"}),
    ("/api/v1/answers/{trace_id}", "get", {"200", "404"}),
    ("/api/v1/documents/{document_id}/revisions/{revision}", "put", {"400", "409", "413"}),
    ("/api/v1/documents/{document_id}", "get", {"200", "404"}),
    ("/api/v1/documents/{document_id}", "delete", {"200", "404"}),
])
def test_the_schema_documents_the_error_responses(
    schema: dict[str, Any], path: str, method: str, statuses: set[str]
) -> None:
    assert statuses <= set(schema["paths"][path][method]["responses"])


def test_every_operation_documents_the_refusals_it_can_give_with_the_error_body(
    schema: dict[str, Any]
) -> None:
    error = {"$ref": "#/components/schemas/Error"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert {"401", "403", "429"} <= set(responses), (method, path)
            if "{" in path:
                assert "404" in responses, (method, path)
            for status, response in responses.items():
                if status.startswith("4"):
                    assert response["content"]["application/json"]["schema"] == error, \
                        (method, path, status)


def test_the_schema_describes_each_batch_result(schema: dict[str, Any]) -> None:
    item = schema["components"]["schemas"]["BatchItemOut"]
    assert {"index", "status_code", "trace_id", "verdict", "errors"} <= set(item["properties"])
    assert set(item["required"]) == {"index", "status_code", "trace_id"}


def test_a_refusal_has_the_documented_error_body(reviewer: Any, token_client: Any,
                                                 schema: dict[str, Any]) -> None:
    body = token_client(reviewer).post("/api/v1/answers", {}, format="json").json()
    assert set(schema["components"]["schemas"]["Error"]["required"]) <= set(body)


def test_the_schema_gives_the_batch_size_limits(schema: dict[str, Any]) -> None:
    answers = schema["components"]["schemas"]["BatchInRequest"]["properties"]["answers"]
    assert (answers["minItems"], answers["maxItems"]) == (1, 500)


@pytest.mark.parametrize("day", ["2026-W43-2", "20261020", "2026-1-5", "2026-10-20T00:00"])
def test_a_day_is_written_yyyy_mm_dd_and_nothing_else(publish: Any, service_api: Any,
                                                     day: str) -> None:
    publish()
    response = send(service_api, "/api/v1/answers", {**answer_body(), "as_of": day})
    assert response.status_code == 400, response.content
    assert fields(response) == ["as_of"]
    assert "YYYY-MM-DD" in response.json()["errors"][0]["message"]
    fact = {"key": "k", "value": 1, "valid_from": day, "valid_until": None}
    response = send(service_api, "/api/v1/documents/other/revisions/r1",
                    revision_body(facts=[fact]), method="put")
    assert response.status_code == 400, response.content
    assert fields(response) == ["facts[0].valid_from"]
    assert not Answer.objects.exists() and not Revision.objects.filter(
        document__key="other").exists()


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x"])
def test_a_body_that_is_not_json_gets_a_status_the_schema_documents(
    schema: dict[str, Any], make_user: Any, token_client: Any, content_type: str
) -> None:
    """Every operation reading a body, sent a body that is not JSON by a caller who may call it:
    the refusal it gets is one its schema lists, with the error body."""
    clients = {role: token_client(make_user(f"probe-{role}", role))
               for role in ("service", "reviewer", "admin")}
    seen = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if "requestBody" not in operation:
                continue
            url = re.sub(r"\{[^}]+\}", "x", path)
            client = clients["admin" if path.startswith("/api/v1/jobs") else
                             "reviewer" if path.startswith("/api/v1/answers/{") else "service"]
            response = getattr(client, method)(url, data="not=json", content_type=content_type)
            assert str(response.status_code) in operation["responses"], (method, path,
                                                                          response.status_code)
            assert "error" in response.json(), (method, path)
            seen.append((method, path, response.status_code))
    assert ("post", "/api/v1/answers", 415) in seen
    assert len(seen) >= 6


def test_the_schema_says_request_bodies_take_no_undeclared_field(
    schema: dict[str, Any], service_api: Any, owner: Any
) -> None:
    components = schema["components"]["schemas"]
    assert components["AnswerInRequest"]["additionalProperties"] is False
    assert components["RevisionInRequest"]["additionalProperties"] is False
    response = service_api.put("/api/v1/documents/pricing/revisions/r1",
                               {**revision_body(), "colour": "red"}, format="json")
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["colour"]


# --- Operations that read no body, and the options of a release -------------------------------

@pytest.mark.parametrize(("body", "content_type", "status", "field"), [
    ('{"x": 1}', "application/json", 400, "body"),
    ("[]", "application/json", 400, "body"),
    ("{bad json", "application/json", 400, None),
    ("a=b", "application/x-www-form-urlencoded", 415, None),
])
def test_a_body_where_an_operation_reads_none_is_refused_not_ignored(
    hold: Any, reviewer: Any, service_api: Any, token_client: Any, body: str,  # noqa: F811
    content_type: str, status: int, field: str | None,
) -> None:
    from reviewqueue.reviews.models import ReviewItem
    from reviewqueue.sources.models import Document

    trace = hold()
    api = token_client(reviewer)
    response = api.post(f"/api/v1/answers/{trace}/claim", data=body, content_type=content_type)
    assert response.status_code == status, response.content
    if field:
        assert fields(response) == [field]
    assert ReviewItem.objects.get(answer__trace_id=trace).leased_by is None
    response = service_api.delete("/api/v1/documents/pricing", data=body,
                                  content_type=content_type)
    assert response.status_code == status, response.content
    assert not Document.objects.get(key="pricing").withdrawn_at
    # Nothing, or {}, asks for nothing: the claim goes through.
    assert api.post(f"/api/v1/answers/{trace}/claim").status_code == 200
    assert send(api, f"/api/v1/answers/{trace}/claim", {}).status_code == 200


@pytest.mark.parametrize(("body", "field"), [
    ({"force": "true"}, "force"), ({"force": 1}, "force"),
    ([], "body"), (None, "body"),  # the body as a whole
])
def test_a_release_takes_an_object_whose_force_is_true_or_false(
    hold: Any, reviewer: Any, token_client: Any, body: Any, field: str  # noqa: F811
) -> None:
    trace = hold()
    api = token_client(reviewer)
    api.post(f"/api/v1/answers/{trace}/claim")
    response = send(api, f"/api/v1/answers/{trace}/release", body)
    assert response.status_code == 400, response.content
    assert fields(response) == [field]
    assert api.post(f"/api/v1/answers/{trace}/release").json()["released"] is True


@pytest.mark.parametrize("content_type", NO_CONTENT_TYPE)
def test_a_body_with_no_content_type_where_none_is_read_is_refused_not_ignored(
    hold: Any, reviewer: Any, service_api: Any, token_client: Any,  # noqa: F811
    content_type: str | None,
) -> None:
    """DRF read a body with no Content-Type as `{}`, which asks for nothing: a withdrawal
    `only_if_revision` went ahead, and so did a claim, a release and a restore."""
    from reviewqueue.reviews.models import ReviewItem
    from reviewqueue.sources.models import Document

    trace = hold()
    api = token_client(reviewer)

    def refused(client: Any, method: str, url: str, body: str) -> None:
        response = client.generic(method, url, body, content_type=content_type)
        assert response.status_code == 415, (url, response.content)
        assert fields(response) == ["body"]
        assert QuarantinedPayload.objects.latest("pk").body == body

    refused(api, "POST", f"/api/v1/answers/{trace}/claim", '{"force": true}')
    assert ReviewItem.objects.get(answer__trace_id=trace).leased_by is None
    assert api.post(f"/api/v1/answers/{trace}/claim").status_code == 200
    refused(api, "POST", f"/api/v1/answers/{trace}/release", '{"force": true}')
    assert ReviewItem.objects.get(answer__trace_id=trace).leased_by == reviewer
    refused(service_api, "DELETE", "/api/v1/documents/pricing", '{"only_if_revision": "r0"}')
    assert not Document.objects.get(key="pricing").withdrawn_at
    assert service_api.delete("/api/v1/documents/pricing").status_code == 200
    refused(service_api, "POST", "/api/v1/documents/pricing/restore", '{"force": true}')
    assert Document.objects.get(key="pricing").withdrawn_at


def test_the_schema_documents_the_refusal_of_a_body_where_none_is_read(
    schema: dict[str, Any]
) -> None:
    claim = schema["paths"]["/api/v1/answers/{trace_id}/claim"]["post"]
    withdraw = schema["paths"]["/api/v1/documents/{document_id}"]["delete"]
    for operation in (claim, withdraw):
        assert "requestBody" not in operation
        assert "takes none" in operation["responses"]["400"]["description"]


def test_a_form_body_where_none_is_read_is_a_415_the_schema_documents(
    hold: Any, reviewer: Any, token_client: Any, schema: dict[str, Any]  # noqa: F811
) -> None:
    trace = hold()
    response = token_client(reviewer).post(f"/api/v1/answers/{trace}/claim", "a=b",
                                           content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    for path, method in [("/api/v1/answers/{trace_id}/claim", "post"),
                         ("/api/v1/documents/{document_id}", "delete")]:
        assert "415" in schema["paths"][path][method]["responses"], path
        assert "no Content-Type" in schema["paths"][path][method]["responses"]["415"][
            "description"], path


def test_a_body_too_large_where_none_is_read_is_a_413_the_schema_documents(
    hold: Any, reviewer: Any, token_client: Any, schema: dict[str, Any], settings: Any,  # noqa: F811
) -> None:
    trace = hold()
    settings.API_MAX_BODY_BYTES = 100
    response = token_client(reviewer).post(f"/api/v1/answers/{trace}/claim",
                                           json.dumps({"x": "a" * 200}),
                                           content_type="application/json")
    assert response.status_code == 413
    for path, method in [("/api/v1/answers/{trace_id}/claim", "post"),
                         ("/api/v1/documents/{document_id}", "delete"),
                         ("/api/v1/documents/{document_id}/restore", "post")]:
        assert "413" in schema["paths"][path][method]["responses"], path


def test_the_schema_gives_the_queue_page_size_bounds(schema: dict[str, Any], reviewer: Any,
                                                     token_client: Any) -> None:
    limit = next(p for p in schema["paths"]["/api/v1/queue"]["get"]["parameters"]
                 if p["name"] == "limit")["schema"]
    assert (limit["minimum"], limit["maximum"]) == (1, 200)
    api = token_client(reviewer)
    assert api.get("/api/v1/queue?limit=200").status_code == 200
    for refused in (0, 201):
        response = api.get(f"/api/v1/queue?limit={refused}")
        assert response.status_code == 400 and fields(response) == ["limit"]


def test_the_queue_api_reads_newest_first_when_asked(
    schema: dict[str, Any], reviewer: Any, token_client: Any, hold: Any  # noqa: F811
) -> None:
    order = next(p for p in schema["paths"]["/api/v1/queue"]["get"]["parameters"]
                 if p["name"] == "order")["schema"]
    assert sorted(order["enum"]) == ["newest", "oldest"]
    first, second = hold("t-1"), hold("t-2")
    api = token_client(reviewer)

    def listed(query: str) -> list[str]:
        return [row["trace_id"] for row in api.get(f"/api/v1/queue{query}").json()["results"]]

    assert listed("") == [first, second]
    assert listed("?order=newest") == [second, first]
    response = api.get("/api/v1/queue?order=sideways")
    assert response.status_code == 400 and fields(response) == ["order"]


@pytest.mark.parametrize("body", ["null", "[]", "5", '"x"'])
@pytest.mark.parametrize("url", ["/api/v1/answers/t-1/decisions", "/api/v1/answers/t-1/release",
                                 "/api/v1/jobs", "/api/v1/answers", "/api/v1/answers/batch"])
def test_a_body_that_is_not_an_object_is_refused_naming_the_body(
    token_client: Any, service: Any, reviewer: Any, url: str, body: str
) -> None:
    ingest = url.startswith("/api/v1/answers") and not url.startswith("/api/v1/answers/t-1")
    user = service if ingest else reviewer
    response = token_client(user).generic("POST", url, body, content_type="application/json")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "body"


def test_an_unknown_field_named_like_drf_s_own_key_is_named_as_sent(
    publish: Any, service_api: Any
) -> None:
    """DRF files errors of a whole object under "non_field_errors": a body sending a field of
    that name was told "body: Unknown field.", as if the whole body were unknown."""
    body = answer_body("t-nfe")
    body["non_field_errors"] = 1
    body["claims"][0]["non_field_errors"] = 2
    response = send(service_api, "/api/v1/answers", body)
    assert response.status_code == 400, response.content
    assert {"field": "non_field_errors", "message": "Unknown field."} in \
        response.json()["errors"]
    assert {"field": "claims[0].non_field_errors", "message": "Unknown field."} in \
        response.json()["errors"]
    assert "body" not in fields(response)
    [item] = batch(service_api, {**answer_body("t-nfe-2"), "non_field_errors": 1})
    assert item["status_code"] == 400
    assert {"field": "non_field_errors", "message": "Unknown field."} in item["errors"]
