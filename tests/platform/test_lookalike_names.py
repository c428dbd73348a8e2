"""A fact's or claim's key or subject, a span or a principal that reads as another is refused,
naming its field.

The gate matches keys, subjects and spans character for character. Before, a source could say
`trial_days` with a zero-width space after it: the answer citing its sibling source for
`trial_days` went out as a candidate, the two sources' different values never seen as a
conflict. A span with one left every answer citing that passage abstained on "no passage with
the cited span" while page and payload showed the same `p1`. Ids in addresses were already held
to this; an Arabic letter mark or a soft hyphen still passed there."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reviewqueue.reviews.models import Answer
from reviewqueue.sources.models import Document
from tests.conftest import answer_body, revision_body

pytestmark = pytest.mark.django_db

INVISIBLE = ("Must not contain control characters, zero-width characters or bidirectional "
             "marks: they make {} that read alike.")
NFC = "Must be in Unicode normal form C (NFC): write each accented letter as one."


def errors(response: Any) -> dict[str, str]:
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def put(service_api: Any, body: dict[str, Any], document_id: str = "pricing") -> Any:
    return service_api.put(f"/api/v1/documents/{document_id}/revisions/r1", body,
                           format="json")


def test_a_fact_key_or_subject_that_reads_as_another_is_refused(
    service_api: Any, owner: Any
) -> None:
    body = revision_body(facts=[
        {"key": "trial_days\u200b", "value": 14, "valid_from": "2026-10-01", "span": "p1"},
        {"key": "seats", "subject": "cafe\u0301", "value": 3, "valid_from": "2026-10-01"},
        {"key": "\u2066price", "subject": "plan\ufeff", "value": 9, "valid_from": "2026-10-01"},
    ])

    response = put(service_api, body)

    assert response.status_code == 400, response.json()
    assert errors(response) == {
        "facts[0].key": INVISIBLE.format("keys"),
        "facts[1].subject": NFC,
        "facts[2].key": INVISIBLE.format("keys"),
        "facts[2].subject": INVISIBLE.format("subjects"),
    }
    assert not Document.objects.exists()


def test_a_source_with_a_lookalike_key_cannot_hide_a_conflict(
    service_api: Any, publish: Callable[..., Any]
) -> None:
    publish("pricing")
    refused = put(service_api, revision_body(facts=[
        {"key": "trial_days\u200b", "value": 30, "valid_from": "2026-10-01", "span": "p1"}]),
        "pricing-eu")
    assert refused.status_code == 400
    assert errors(refused) == {"facts[0].key": INVISIBLE.format("keys")}


@pytest.mark.parametrize(("claim", "field", "message"), [
    ({"key": "trial_days\u200b"}, "key", INVISIBLE.format("keys")),
    ({"key": "trial_days\u00ad"}, "key", INVISIBLE.format("keys")),
    ({"subject": "cafe\u0301"}, "subject", NFC),
    ({"subject": "plan\u200f"}, "subject", INVISIBLE.format("subjects")),
])
def test_a_claim_key_or_subject_that_reads_as_another_is_refused_on_both_paths(
    publish: Callable[..., Any], service_api: Any, claim: dict[str, str], field: str,
    message: str,
) -> None:
    publish()
    body = answer_body("t-look", claims=[{"key": "trial_days", "value": 14, "cite": "d1",
                                          **claim}])

    single = service_api.post("/api/v1/answers", body, format="json")
    batch = service_api.post("/api/v1/answers/batch", {"answers": [body]}, format="json")

    assert single.status_code == 400, single.json()
    assert errors(single) == {f"claims[0].{field}": message}
    [result] = batch.json()["results"]
    assert {e["field"]: e["message"] for e in result["errors"]} == errors(single)
    assert not Answer.objects.exists()


def test_a_span_that_reads_as_another_is_refused_in_a_revision_and_an_answer(
    service_api: Any, publish: Callable[..., Any]
) -> None:
    body = revision_body(passages=[{"span": "p1\u200b", "text": "The free trial lasts 14 days."}],
                         facts=[{"key": "trial_days", "value": 14, "valid_from": "2026-10-01",
                                 "span": "p1\u200b"}])
    revision = put(service_api, body)
    assert revision.status_code == 400
    assert errors(revision) == {"passages[0].span": INVISIBLE.format("ids"),
                                "facts[0].span": INVISIBLE.format("ids")}

    publish()
    answer = service_api.post("/api/v1/answers", answer_body("t-span", retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1\u200b"}]),
        format="json")
    assert answer.status_code == 400
    assert errors(answer) == {"retrieved[0].span": INVISIBLE.format("ids")}
    assert not Answer.objects.exists()


@pytest.mark.parametrize("document_id", ["pricing\u061c", "pric\u00ading", "pricing\u180e",
                                         "pricing\U000e0041"])
def test_a_document_id_with_a_mark_that_shows_nothing_is_refused(
    service_api: Any, owner: Any, document_id: str
) -> None:
    response = put(service_api, revision_body(), document_id)

    assert response.status_code == 400
    assert errors(response) == {"document_id": INVISIBLE.format("ids")}
    assert not Document.objects.exists()


def test_a_decomposed_principal_is_refused_in_a_revision_and_an_answer(
    service_api: Any, publish: Callable[..., Any]
) -> None:
    revision = put(service_api, revision_body(principals=["user:jose\u0301"]))
    assert revision.status_code == 400
    assert errors(revision) == {"allowed_principals[0]": NFC}

    publish()
    answer = service_api.post("/api/v1/answers", answer_body(
        "t-who", asked_by=["group:e\u0301quipe"]), format="json")
    assert answer.status_code == 400
    assert errors(answer) == {"asked_by[0]": NFC}


@pytest.mark.parametrize("release", ["2026.10\u200b", "\u202a2026.10", "e\u0301te\u0301-2026"])
def test_an_index_release_that_reads_as_another_is_refused_on_both_paths(
    publish: Callable[..., Any], service_api: Any, release: str
) -> None:
    """The queue's release filter and the hold-rate page match a release exactly: an answer of
    "2026.10" with a zero-width space would be listed under a release that reads the same and
    never found by it."""
    publish()
    body = {**answer_body("t-release"), "index_release": release}

    single = service_api.post("/api/v1/answers", body, format="json")
    batch = service_api.post("/api/v1/answers/batch", {"answers": [body]}, format="json")

    assert single.status_code == 400, single.json()
    assert set(errors(single)) == {"index_release"}
    [result] = batch.json()["results"]
    assert {e["field"]: e["message"] for e in result["errors"]} == errors(single)
    assert not Answer.objects.exists()


# --- Tabs, line breaks and other control characters ---------------------------------------
# Every page (and a mail's subject) shows a tab or a line break in a name as a space: a source
# stating `trial\tdays` beside one stating `trial days` were two keys to the gate, and their
# conflict went unseen, while reviewers and owners read the same key twice.

CONTROL = ("Must not contain tabs, line breaks or other control characters: a page shows them "
           "as a space or not at all, so they make {} that read alike.")
SPACED = ["trial\tdays", "trial\ndays", "trial\r\ndays", "trial\x0bdays", "trial\x85days",
          "trial\u2028days"]
SPACED_IDS = ["tab", "line feed", "CR LF", "vertical tab", "next line (C1)", "line separator"]


@pytest.mark.parametrize("key", SPACED, ids=SPACED_IDS)
def test_a_fact_key_with_a_tab_or_a_line_break_is_refused(
    service_api: Any, owner: Any, key: str
) -> None:
    body = revision_body(facts=[
        {"key": key, "value": 14, "valid_from": "2026-10-01", "span": "p1"}])

    response = put(service_api, body)

    assert response.status_code == 400, response.json()
    assert errors(response) == {"facts[0].key": CONTROL.format("keys")}
    assert not Document.objects.exists()


def test_a_fact_subject_with_a_carriage_return_is_refused(service_api: Any, owner: Any) -> None:
    body = revision_body(facts=[{"key": "seats", "subject": "plan\rbasic", "value": 3,
                                 "valid_from": "2026-10-01"}])

    response = put(service_api, body)

    assert response.status_code == 400, response.json()
    assert errors(response) == {"facts[0].subject": CONTROL.format("subjects")}
    assert not Document.objects.exists()


def test_a_source_with_a_tab_in_its_key_cannot_hide_a_conflict(
    service_api: Any, publish: Callable[..., Any]
) -> None:
    publish("pricing")  # trial_days: 14
    refused = put(service_api, revision_body(facts=[
        {"key": "trial\tdays", "value": 30, "valid_from": "2026-10-01", "span": "p1"}]),
        "pricing-eu")
    assert refused.status_code == 400
    assert errors(refused) == {"facts[0].key": CONTROL.format("keys")}
    assert not Document.objects.filter(key="pricing-eu").exists()


@pytest.mark.parametrize(("claim", "field", "names"), [
    ({"key": "trial\ndays"}, "key", "keys"),
    ({"key": "trial\tdays"}, "key", "keys"),
    ({"key": "trial\x85days"}, "key", "keys"),
    ({"subject": "plan\rbasic"}, "subject", "subjects"),
    ({"subject": "plan\x0bbasic"}, "subject", "subjects"),
], ids=["key, line feed", "key, tab", "key, next line (C1)", "subject, carriage return",
        "subject, vertical tab"])
def test_a_claim_key_or_subject_with_a_line_break_is_refused_on_both_paths(
    publish: Callable[..., Any], service_api: Any, claim: dict[str, str], field: str,
    names: str,
) -> None:
    """The batch takes a plain body by its fast path, which skips the serializer: it must
    refuse the same names, with the same error."""
    publish()
    body = answer_body("t-spaced", claims=[{"key": "trial_days", "value": 14, "cite": "d1",
                                            **claim}])

    single = service_api.post("/api/v1/answers", body, format="json")
    batch = service_api.post("/api/v1/answers/batch", {"answers": [body]}, format="json")

    assert single.status_code == 400, single.json()
    assert errors(single) == {f"claims[0].{field}": CONTROL.format(names)}
    [result] = batch.json()["results"]
    assert result["status_code"] == 400
    assert {e["field"]: e["message"] for e in result["errors"]} == errors(single)
    assert not Answer.objects.exists()


def test_an_index_release_with_a_tab_is_refused_on_both_paths(
    publish: Callable[..., Any], service_api: Any
) -> None:
    publish()
    body = {**answer_body("t-release"), "index_release": "2026\t10"}

    single = service_api.post("/api/v1/answers", body, format="json")
    batch = service_api.post("/api/v1/answers/batch", {"answers": [body]}, format="json")

    assert single.status_code == 400, single.json()
    assert errors(single) == {"index_release": CONTROL.format("ids")}
    [result] = batch.json()["results"]
    assert {e["field"]: e["message"] for e in result["errors"]} == errors(single)
    assert not Answer.objects.exists()


def test_a_span_or_a_principal_with_a_tab_is_still_refused(
    service_api: Any, publish: Callable[..., Any]
) -> None:
    """Ids and principals never took a tab: they keep being refused, now said plainly."""
    revision = put(service_api, revision_body(
        principals=["group:sales\tteam"],
        passages=[{"span": "p\t1", "text": "The free trial lasts 14 days."}], facts=[]))
    assert revision.status_code == 400
    assert errors(revision) == {
        "passages[0].span": CONTROL.format("ids"),
        "allowed_principals[0]": "Not a principal: 'group:sales\\tteam'; use user:<name>, "
                                 "group:<name> or *."}


def test_free_text_still_takes_line_breaks(
    service_api: Any, owner: Any, publish: Callable[..., Any]
) -> None:
    """Only names are held to one line: a title, a passage, a question and an answer are text
    that may run over several."""
    created = put(service_api, revision_body(
        title="Pricing\nand plans",
        passages=[{"span": "p1", "text": "The free trial\nlasts 14 days.\r\n\tTerms apply."}]))
    assert created.status_code == 201, created.json()

    body = answer_body("t-lines", answer="The free trial\nlasts 14 days [d1].\r\n\tTerms apply.")
    body["question"] = "How long\nis the free trial?"
    single = service_api.post("/api/v1/answers", body, format="json")
    assert single.status_code == 201, single.json()
    batch = service_api.post("/api/v1/answers/batch", {"answers": [{**body, "trace_id": "t-b"}]},
                             format="json")
    assert batch.json()["results"][0]["status_code"] == 201
