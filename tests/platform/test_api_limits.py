"""What the API accepts the gate can take: every limit is a 400 naming the field, with the
payload quarantined and, in a batch, the other items stored; never a server error. Also the
edges of the API itself: bodies nested too deeply, ids with spaces around them, reserved
trace ids, unknown addresses and what the schema says."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator

import gating
from reviewqueue.audit.models import QuarantinedPayload
from reviewqueue.jobs.models import Job
from reviewqueue.reviews.api import TRACE_ID, fast_answer_input
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services.reevaluation import answers_reevaluate
from reviewqueue.sources.models import Document
from tests.conftest import answer_body, revision_body

pytestmark = pytest.mark.django_db


def fields(response: Any) -> list[str]:
    return [e["field"] for e in response.json()["errors"]]


def batch(client: Any, *answers: Any) -> list[dict[str, Any]]:
    response = client.post("/api/v1/answers/batch", {"answers": list(answers)}, format="json")
    assert response.status_code == 200, response.content
    return response.json()["results"]  # type: ignore[no-any-return]


def publish_facts(client: Any, document: str, count: int, **fact: Any) -> None:
    facts = [{"subject": f"s{i}", "key": "trial_days", "value": 14, "valid_from": "2026-10-01",
              "span": "p1", **fact} for i in range(count)]
    response = client.put(f"/api/v1/documents/{document}/revisions/r1",
                          revision_body(facts=facts), format="json")
    assert response.status_code == 201, response.content


def eleven_cites(trace_id: str) -> dict[str, Any]:
    retrieved = [{"cite": f"d{i}", "document_id": "h", "revision": "r1", "span": "p1"}
                 for i in range(1, 12)]
    return answer_body(trace_id, retrieved=retrieved, claims=[
        {"subject": "s1", "key": "trial_days", "value": 14, "cite": "d1"}])


# --- Evidence facts over the gate's limit ------------------------------------------------------

def test_a_document_cited_past_the_gates_fact_limit_is_a_400_naming_retrieved(
    service_api: Any, owner: Any
) -> None:
    publish_facts(service_api, "h", 1000)
    response = service_api.post("/api/v1/answers", eleven_cites("t-big"), format="json")
    assert response.status_code == 400, response.content
    assert fields(response) == ["retrieved"]
    assert "11000 facts" in response.json()["detail"]
    assert not Answer.objects.exists()
    assert QuarantinedPayload.objects.get().trace_id == "t-big"
    # Ten cites of the same document are within the limit and gated as usual.
    body = eleven_cites("t-ten")
    body["retrieved"].pop()
    assert service_api.post("/api/v1/answers", body, format="json").status_code == 201


def test_in_a_batch_only_the_answer_past_the_fact_limit_is_refused(
    service_api: Any, owner: Any, publish: Any
) -> None:
    publish()
    publish_facts(service_api, "h", 1000)
    results = batch(service_api, answer_body("b-1"), eleven_cites("b-2"), answer_body("b-3"))
    assert [r["status_code"] for r in results] == [201, 400, 201]
    assert [e["field"] for e in results[1]["errors"]] == ["retrieved"]
    assert results[1]["trace_id"] == "b-2"
    assert set(Answer.objects.values_list("trace_id", flat=True)) == {"b-1", "b-3"}
    assert QuarantinedPayload.objects.get().trace_id == "b-2"


# --- Knowledge-base facts over the gate's limit ------------------------------------------------

@pytest.fixture
def crowded_key(service_api: Any, owner: Any, publish: Any) -> None:
    """pricing as usual, and 11,000 more facts on trial_days in eleven other documents."""
    publish()
    for n in range(11):
        publish_facts(service_api, f"kb{n}", 1000)


def test_a_claim_whose_key_brings_too_many_knowledge_base_facts_is_refused(
    service_api: Any, crowded_key: None
) -> None:
    response = service_api.post("/api/v1/answers", answer_body("t-kb"), format="json")
    assert response.status_code == 400, response.content
    assert fields(response) == ["claims[0].key"]
    assert "subject" in response.json()["errors"][0]["message"]
    assert QuarantinedPayload.objects.get().trace_id == "t-kb"
    # Naming the subject leaves eleven facts to compare: gated as usual.
    narrowed = answer_body("t-kb2", claims=[
        {"subject": "s1", "key": "trial_days", "value": 14, "cite": "d1"}])
    assert service_api.post("/api/v1/answers", narrowed, format="json").status_code == 201


def test_a_reevaluation_past_the_limit_fails_and_keeps_the_answer(
    service_api: Any, publish: Any, submit: Any, owner: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    publish()
    assert submit("t-old").status_code == 201
    verdict = Answer.objects.get(trace_id="t-old").current_verdict_id
    for n in range(11):
        publish_facts(service_api, f"kb{n}", 1000)
    with django_capture_on_commit_callbacks(execute=True):
        publish(revision="r2")  # re-evaluates t-old, which now brings 11,000 facts
    job = Job.objects.filter(document_key="pricing").latest("created_at")
    assert (job.done, job.failed) == (0, 1)
    answer = Answer.objects.get(trace_id="t-old")
    assert answer.current_verdict_id == verdict


# --- The gate's own input errors, the last line of defence ------------------------------------

@pytest.fixture
def gate_refuses_boom(monkeypatch: pytest.MonkeyPatch) -> None:
    evaluate = gating.evaluate

    def picky(claims: Any, evidence: Any, options: gating.Options) -> gating.Verdict:
        if "boom" in (options.answer_text or ""):
            raise gating.InputError("evidence[0].facts", "too many facts")
        return evaluate(claims, evidence, options)

    monkeypatch.setattr(gating, "evaluate", picky)


def test_an_input_error_of_the_gate_is_a_400_and_kept(
    publish: Any, submit: Any, gate_refuses_boom: None
) -> None:
    publish()
    response = submit("t-boom", answer="boom [d1]")
    assert response.status_code == 400
    assert fields(response) == ["retrieved"]
    assert QuarantinedPayload.objects.get().trace_id == "t-boom"
    assert not Answer.objects.exists()


def test_an_input_error_of_the_gate_fails_one_batch_item(
    publish: Any, service_api: Any, gate_refuses_boom: None
) -> None:
    publish()
    results = batch(service_api, answer_body("b-1"), answer_body("b-2", answer="boom [d1]"),
                    answer_body("b-2", answer="boom [d1]"), answer_body("b-3"))
    assert [r["status_code"] for r in results] == [201, 400, 400, 201]
    assert set(Answer.objects.values_list("trace_id", flat=True)) == {"b-1", "b-3"}
    assert QuarantinedPayload.objects.filter(trace_id="b-2").count() == 2


def test_an_input_error_of_the_gate_in_reevaluation_is_a_failure_not_a_loss(
    publish: Any, submit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish()
    submit("t-1")
    answer = Answer.objects.get(trace_id="t-1")

    def refuse(*args: Any) -> gating.Verdict:
        raise gating.InputError("kb_facts", "too many kb facts")

    monkeypatch.setattr(gating, "evaluate", refuse)
    outcome = answers_reevaluate(answer_ids=[answer.pk], trigger="manual")
    assert (outcome.done, len(outcome.errors)) == (0, 1)
    assert Answer.objects.get(pk=answer.pk).current_verdict_id == answer.current_verdict_id


# --- Answer text over the gate's byte limit ---------------------------------------------------

LONG_JAPANESE = "試用期間は十四日です。" * 7637 + "[d1]"  # 84,011 characters, 252,011 bytes


def test_an_answer_over_the_gates_byte_limit_is_a_400_naming_answer(
    publish: Any, submit: Any, service_api: Any
) -> None:
    publish()
    assert len(LONG_JAPANESE) < 200_000 < len(LONG_JAPANESE.encode())
    response = submit("t-ja", answer=LONG_JAPANESE)
    assert response.status_code == 400
    assert fields(response) == ["answer"]
    assert QuarantinedPayload.objects.get().trace_id == "t-ja"
    assert fast_answer_input(answer_body("t-ja", answer=LONG_JAPANESE)) is None
    results = batch(service_api, answer_body("b-ja", answer=LONG_JAPANESE), answer_body("b-1"))
    assert [r["status_code"] for r in results] == [400, 201]
    assert [e["field"] for e in results[0]["errors"]] == ["answer"]


def test_an_answer_on_the_byte_limit_is_gated(publish: Any, submit: Any) -> None:
    publish()
    room = gating.MAX_TEXT_BYTES - len("[d1]")
    text = "[d1]" + "あ" * (room // 3) + "a" * (room % 3)
    assert len(text.encode()) == gating.MAX_TEXT_BYTES
    assert submit("t-edge", answer=text).status_code == 201


# --- JSON nested too deeply -------------------------------------------------------------------

@pytest.mark.parametrize(("method", "url"), [
    ("post", "/api/v1/answers"), ("post", "/api/v1/answers/batch"),
    ("put", "/api/v1/documents/pricing/revisions/r1"), ("post", "/api/v1/jobs"),
])
def test_json_nested_too_deeply_is_a_400_and_kept(
    service_api: Any, admin_user: Any, token_client: Any, method: str, url: str
) -> None:
    client = token_client(admin_user) if url == "/api/v1/jobs" else service_api
    body = "[" * 5000 + "]" * 5000
    response = getattr(client, method)(url, data=body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "parse_error"
    assert "nested too deeply" in response.json()["detail"]
    kept = QuarantinedPayload.objects.get()
    assert (kept.status_code, kept.endpoint) == (400, url)


@pytest.mark.parametrize("depth", [100, 900, 980, 1000])
def test_no_nesting_depth_is_a_server_error(service_api: Any, depth: int) -> None:
    nested = "[" * depth + "]" * depth
    for url, body in (("/api/v1/answers", nested),
                      ("/api/v1/answers/batch", f'{{"answers": [{nested}]}}'),
                      ("/api/v1/answers", f'{{"trace_id": {nested}}}')):
        response = service_api.post(url, data=body, content_type="application/json")
        assert response.status_code in (200, 400), (url, depth, response.status_code)


# --- A key given twice in one object ----------------------------------------------------------

@pytest.mark.parametrize(("url", "body", "key"), [
    ("/api/v1/answers", '{"trace_id": "t-dup", "trace_id": "t-other"}', "trace_id"),
    ("/api/v1/answers/batch", '{"answers": [{"claims": [], "claims": []}]}', "claims"),
    ("/api/v1/documents/pricing/revisions/r1", '{"title": "A", "owner": "o", "title": "B"}',
     "title"),
])
def test_a_key_given_twice_is_a_400_naming_it_and_nothing_is_stored(
    service_api: Any, url: str, body: str, key: str
) -> None:
    method = service_api.put if "/documents/" in url else service_api.post
    response = method(url, data=body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "parse_error"
    assert f'the key "{key}" appears twice in one object' in response.json()["detail"]
    assert [e["field"] for e in response.json()["errors"]] == ["body"]
    assert not Answer.objects.exists() and not Document.objects.exists()
    assert QuarantinedPayload.objects.get().body == body


# --- An address that is not UTF-8 -------------------------------------------------------------

def _served(path: str) -> tuple[str, dict[str, Any]]:
    """What the WSGI application (as gunicorn and runserver run it) answers to a PUT of a
    revision at `path`, given as the server gives it: the address's bytes as latin-1 text."""
    from urllib.parse import unquote_to_bytes

    from reviewqueue.wsgi import application

    started: list[str] = []
    body = b"".join(application({
        "REQUEST_METHOD": "PUT", "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),
        "SERVER_NAME": "testserver", "SERVER_PORT": "80", "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""), "CONTENT_LENGTH": "0",
    }, lambda status, headers: started.append(status)))
    return started[0], json.loads(body)


@pytest.mark.parametrize("path", ["/api/v1/documents/%FF/revisions/r1",
                                  "/api/v1/documents/pricing/revisions/%ED%A0%80"])
def test_an_address_that_is_not_utf8_is_refused_not_stored_as_percent_text(path: str) -> None:
    """Django would keep the bytes as the text "%FF", the id that /documents/%25FF names."""
    status, body = _served(path)
    assert status == "400 Bad Request"
    assert body["errors"] == [{"field": "path", "message": "is not valid UTF-8"}]


def test_an_address_in_utf8_goes_on_to_the_app(db: Any) -> None:
    status, body = _served("/api/v1/documents/caf%C3%A9/revisions/r1")
    assert status.startswith("401"), body  # the app's own answer: no token was given


def test_an_id_written_with_percent_signs_is_still_taken(service_api: Any, owner: Any) -> None:
    response = service_api.put("/api/v1/documents/100%25FF/revisions/r1", revision_body(),
                               format="json")
    assert response.status_code == 201
    assert Document.objects.get().key == "100%FF"


# --- Ids are taken as sent: spaces around them are refused, never trimmed ---------------------

@pytest.mark.parametrize(("url", "field"), [
    ("/api/v1/documents/%20pricing/revisions/r1", "document_id"),
    ("/api/v1/documents/pricing/revisions/r1%20", "revision"),
])
def test_an_id_with_spaces_in_the_address_is_refused(
    service_api: Any, owner: Any, url: str, field: str
) -> None:
    response = service_api.put(url, revision_body(), format="json")
    assert response.status_code == 400
    assert fields(response) == [field]
    assert not Document.objects.exists()
    assert QuarantinedPayload.objects.get().status_code == 400


def test_a_span_with_spaces_in_a_revision_is_refused(service_api: Any, owner: Any) -> None:
    body = revision_body(passages=[{"span": " p1", "text": "The trial lasts 14 days."}])
    response = service_api.put("/api/v1/documents/pricing/revisions/r1", body, format="json")
    assert response.status_code == 400
    assert fields(response) == ["passages[0].span"]


@pytest.mark.parametrize(("change", "field"), [
    ({"trace_id": " t-ws2 "}, "trace_id"),
    ({"retrieved": [{"cite": "d1", "document_id": " pricing", "revision": "r1"}]},
     "retrieved[0].document_id"),
    ({"retrieved": [{"cite": "d1 ", "document_id": "pricing", "revision": "r1"}]},
     "retrieved[0].cite"),
    ({"retrieved": [{"cite": "d1", "document_id": "pricing", "revision": "\tr1"}]},
     "retrieved[0].revision"),
    ({"retrieved": [{"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1 "}]},
     "retrieved[0].span"),
    ({"claims": [{"key": "trial_days", "value": 14, "cite": " d1"}]}, "claims[0].cite"),
])
def test_an_id_with_spaces_in_an_answer_is_refused(
    publish: Any, service_api: Any, change: dict[str, Any], field: str
) -> None:
    publish()
    body = {**answer_body("t-ws"), **change}
    assert fast_answer_input(body) is None
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 400
    assert fields(response) == [field]
    assert not Answer.objects.exists()
    [result] = batch(service_api, body)
    assert [e["field"] for e in result["errors"]] == [field]


# --- The trace_id the batch endpoint's address takes ------------------------------------------

@pytest.mark.parametrize("trace_id", ["batch", ".", ".."])
def test_a_trace_id_no_address_could_name_is_refused(publish: Any, service_api: Any,
                                                     trace_id: str) -> None:
    """/api/v1/answers/batch is the batch endpoint; clients drop . and .. from an address."""
    publish()
    body = answer_body(trace_id)
    assert fast_answer_input(body) is None
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 400
    assert fields(response) == ["trace_id"]
    [result] = batch(service_api, body)
    assert [e["field"] for e in result["errors"]] == ["trace_id"]
    assert not Answer.objects.exists()
    assert QuarantinedPayload.objects.filter(trace_id=trace_id).count() == 2


@pytest.mark.parametrize("field", ["document_id", "revision"])
@pytest.mark.parametrize("value", ["a/b", ".", ".."])
def test_a_cited_document_or_revision_no_address_could_name_is_refused(
    publish: Any, service_api: Any, field: str, value: str
) -> None:
    """Such a document could never be published (PUT /documents/a/b/... is no address), so
    the answer would wait for it for ever."""
    publish()
    body = answer_body()
    body["retrieved"][0][field] = value
    assert fast_answer_input(body) is None
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 400
    assert fields(response) == [f"retrieved[0].{field}"]
    [result] = batch(service_api, body)
    assert [e["field"] for e in result["errors"]] == [f"retrieved[0].{field}"]
    assert not Answer.objects.exists()


# --- Unknown addresses under /api/ ------------------------------------------------------------

@pytest.mark.parametrize(("method", "url"), [
    ("get", "/api/v1/nothing-here"), ("post", "/api/v1/answers/"), ("get", "/api/v1/jobs/x"),
    ("get", "/api/v2/answers"), ("delete", "/api/"),
])
def test_an_unknown_api_address_is_a_json_404(service_api: Any, method: str, url: str) -> None:
    response = getattr(service_api, method)(url, {}, format="json")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["error"] == "not_found" and body["errors"] == []
    assert url in body["detail"]


def test_a_trailing_slash_is_pointed_out(service_api: Any) -> None:
    response = service_api.post("/api/v1/answers/", answer_body(), format="json")
    assert response.status_code == 404
    assert "Did you mean /api/v1/answers, without the trailing slash?" in response.json()["detail"]


@pytest.mark.parametrize("accept", [
    "text/html", "text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2",  # Java's default
])
def test_the_api_answers_json_whatever_the_client_accepts(service_api: Any, publish: Any,
                                                          accept: str) -> None:
    publish()
    found = service_api.get("/api/v1/documents/pricing", HTTP_ACCEPT=accept)
    missing = service_api.get("/api/v1/documents/none", HTTP_ACCEPT=accept)
    assert (found.status_code, missing.status_code) == (200, 404)
    assert found["Content-Type"] == missing["Content-Type"] == "application/json"
    assert found.json()["document_id"] == "pricing"
    assert missing.json()["error"] == "not_found"


@pytest.mark.parametrize("path", ["/api/v1/answers", "/api/v1/answers/batch",
                                  "/api/v1/documents/d1/revisions/r1"])
def test_a_method_the_operation_lacks_is_405_with_a_body_or_without(service_api: Any,
                                                                    path: str) -> None:
    for body in ('{"a": 1}', ""):
        response = service_api.delete(path, data=body, content_type="application/json")
        assert response.status_code == 405, response.content
    assert not QuarantinedPayload.objects.filter(endpoint=path, status_code=400).exists()


@pytest.mark.parametrize("fmt", ["api", "html", "jsn"])
def test_a_format_the_api_does_not_have_is_answered_in_json(service_api: Any, publish: Any,
                                                            fmt: str) -> None:
    publish()
    response = service_api.get(f"/api/v1/documents/pricing?format={fmt}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json()["document_id"] == "pricing"


@pytest.mark.parametrize("caller", ["reviewer", "read-only service"])
def test_a_method_no_caller_may_use_is_405_whatever_the_role_or_scopes(
        caller: str, reviewer: Any, service: Any, token_client: Any) -> None:
    # The schema lists every operation: a 403 here told a reviewer, or a service whose token
    # lacks `submit`, that another role or scope would let them DELETE the list of answers.
    api = (token_client(reviewer) if caller == "reviewer"
           else token_client(service, scopes=["read"]))
    response = api.delete("/api/v1/answers")
    assert response.status_code == 405, response.content
    assert response.json()["error"] == "method_not_allowed"
    assert response["Allow"] == "POST, OPTIONS"


def test_a_method_no_caller_may_use_still_asks_who_is_calling(client: Any) -> None:
    response = client.delete("/api/v1/answers")
    assert response.status_code == 401, response.content


def test_a_method_the_operation_has_is_still_403_for_a_role_that_may_not_use_it(
        reviewer: Any, token_client: Any, publish: Any) -> None:
    publish()
    response = token_client(reviewer).delete("/api/v1/documents/pricing")
    assert response.status_code == 403, response.content
    assert response.json()["detail"] == "Your role does not allow this."


def test_a_method_named_like_a_view_attribute_is_405_with_a_body(service_api: Any) -> None:
    response = service_api.generic("DISPATCH", "/api/v1/answers", '{"a": 1}',
                                   content_type="application/json")
    assert response.status_code == 405, response.content


def test_an_unknown_page_is_still_html(client: Any) -> None:
    response = client.get("/no-such-page")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


# --- The schema says what the validation does -------------------------------------------------

@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return schema["components"]["schemas"]  # type: ignore[no-any-return]


def test_the_schema_requires_at_least_one_principal(
    components: dict[str, Any], service_api: Any, owner: Any
) -> None:
    assert components["RevisionInRequest"]["properties"]["allowed_principals"]["minItems"] == 1
    body = {**revision_body(), "allowed_principals": []}
    response = service_api.put("/api/v1/documents/pricing/revisions/r1", body, format="json")
    assert response.status_code == 400
    assert fields(response) == ["allowed_principals"]


def test_the_schema_gives_the_trace_id_pattern(
    components: dict[str, Any], publish: Any, service_api: Any
) -> None:
    pattern = components["AnswerInRequest"]["properties"]["trace_id"]["pattern"]
    assert pattern == TRACE_ID.pattern
    assert re.search(pattern, "has space") is None
    publish()
    response = service_api.post("/api/v1/answers", answer_body("has space"), format="json")
    assert response.status_code == 400
    assert fields(response) == ["trace_id"]
    assert json.dumps(response.json()["errors"][0]["message"]).count("letters, digits") == 1


# --- A body sent in chunks --------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)  # the app's own transactions, as under gunicorn
def test_a_body_sent_in_chunks_is_read_whole(service: Any, owner: Any) -> None:
    """As gunicorn hands it on: the chunks undone, no Content-Length."""
    from reviewqueue.accounts.services import token_issue
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.wsgi import application

    token = token_issue(user=service, actor=SYSTEM, scopes=["publish"], name="chunks")
    data = json.dumps(revision_body()).encode()
    started: list[str] = []
    reply = b"".join(application({
        "REQUEST_METHOD": "PUT", "PATH_INFO": "/api/v1/documents/pricing/revisions/r1",
        "SERVER_NAME": "testserver", "SERVER_PORT": "80", "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(data), "HTTP_TRANSFER_ENCODING": "chunked",
        "CONTENT_TYPE": "application/json", "HTTP_AUTHORIZATION": f"Token {token}",
    }, lambda status, headers: started.append(status)))
    assert started[0].startswith("201"), reply
    assert Document.objects.get().key == "pricing"


@pytest.mark.django_db(transaction=True)
def test_a_body_in_chunks_is_read_whole_under_the_development_server(
    service: Any, owner: Any, settings: Any
) -> None:
    """`make demo`'s server hands on the connection as it came, chunks and all, behind a limit
    of 0 bytes: the chunks are undone here. Malformed chunks are refused as such."""
    from django.core.handlers.wsgi import LimitedStream

    from reviewqueue.accounts.services import token_issue
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.wsgi import application

    token = token_issue(user=service, actor=SYSTEM, scopes=["publish"], name="chunks")
    data = json.dumps(revision_body()).encode()
    cut = len(data) // 3
    sent = (f"{cut:x};note=1\r\n".encode() + data[:cut] + b"\r\n"
            + f"{len(data) - cut:X}\r\n".encode() + data[cut:] + b"\r\n0\r\nX-Trailer: 1\r\n\r\n"
            + b"GET /next HTTP/1.1\r\n")

    headers: dict[str, str] = {}

    def put(body: bytes, path: str = "/api/v1/documents/pricing/revisions/r1",
            length: int = 0) -> tuple[str, Any]:
        connection = io.BytesIO(body)
        started: list[str] = []

        def start(status: str, sent: list[tuple[str, str]]) -> None:
            started.append(status)
            headers.clear()
            headers.update(sent)

        reply = b"".join(application({
            "REQUEST_METHOD": "PUT", "PATH_INFO": path,
            "SERVER_NAME": "testserver", "SERVER_PORT": "80", "wsgi.url_scheme": "http",
            "wsgi.input": LimitedStream(connection, length), "HTTP_TRANSFER_ENCODING": "chunked",
            "CONTENT_TYPE": "application/json", "HTTP_AUTHORIZATION": f"Token {token}",
            **({"CONTENT_LENGTH": str(length)} if length else {}),
        }, start))
        return started[0], (reply, connection.read())

    status, (reply, left) = put(sent)
    assert status.startswith("201"), reply
    assert left == b"GET /next HTTP/1.1\r\n"  # the next request is left whole
    assert Document.objects.get().key == "pricing"
    # Malformed: refused, with no length, so that the server closes the connection.
    for bad in (b"zz\r\n{}\r\n0\r\n\r\n", b"0x2\r\n{}\r\n0\r\n\r\n", b"-2\r\n{}\r\n",
                b"2\r\n{}{}\r\n0\r\n\r\n"):
        status, (reply, _) = put(bad, "/api/v1/documents/faq/revisions/r1")
        assert status.startswith("400"), bad
        assert reply == b"The body's chunks are malformed (Transfer-Encoding: chunked)."
        assert "Content-Length" not in headers
    # A chunk past the limit is read only to it (no allocation of the size it claims): too
    # large, and the connection closes, the rest of the body being still on it.
    settings.API_MAX_BODY_BYTES = 1024
    status, (reply, left) = put(b"FFFFFFFFFFFF\r\n" + b"x" * 2000,
                                "/api/v1/documents/faq/revisions/r1")
    assert status.startswith("413") and "Content-Length" not in headers
    assert len(left) == 2000 - 1025
    settings.API_MAX_BODY_BYTES = 5 * 1024 * 1024
    # With a Content-Length too, the chunks are still undone (Transfer-Encoding wins).
    status, (reply, _) = put(sent.replace(b"/api", b"/x"), "/api/v1/documents/faq/revisions/r1",
                             length=len(data))
    assert status.startswith("201"), reply
