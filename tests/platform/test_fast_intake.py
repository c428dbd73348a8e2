"""The fast path for answer bodies agrees with AnswerIn, and a batch costs a fixed number of
queries whatever its size (past a few rows a table)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewqueue.reviews.api import AnswerIn, VerdictOut, fast_answer_input, verdict_body
from reviewqueue.reviews.models import Answer, ReviewItem
from tests.conftest import answer_body

# Values that sit on every edge AnswerIn cares about: blank, padded, too long, NUL, surrogate,
# wrong type, a trailing newline a regex `$` would let through, a bad day, a tab, a line break
# or another control character inside (refused in names, taken in free text).
EDGES = st.sampled_from([
    "ok", "", " ", " padded", "padded ", "a\n", "x" * 200, "x" * 201, "x" * 2001, "nul\x00",
    "sur\ud800", 7, 1.5, True, None, [], {}, ["user:a"], "user:a", "group:hr", "*", "user:",
    "2026-10-01", "2026-13-01", "2026-10-01T00:00:00", "t-1", "t 1",
    "a\tb", "a\nb", "a\r\nb", "a\x0bb", "a\x85b", "a\u2028b", "a\u200bb",
])
FIELDS = ["trace_id", "question", "answer", "asked_by", "index_release", "as_of", "retrieved",
          "claims", "unknown"]
NESTED = [("retrieved", k) for k in ("cite", "document_id", "revision", "span", "extra")] + [
    ("claims", k) for k in ("subject", "key", "value", "cite", "extra")]


def _mutated(base: dict[str, Any], changes: list[tuple[Any, Any]]) -> dict[str, Any]:
    body = copy.deepcopy(base)
    for where, value in changes:
        if isinstance(where, tuple):
            items = body.get(where[0])
            if isinstance(items, list) and items and isinstance(items[0], dict):
                items[0][where[1]] = value
        elif value is None and where != "as_of":
            body.pop(where, None)
        else:
            body[where] = value
    return body


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(FIELDS + NESTED), EDGES), max_size=3),
       st.booleans())
def test_what_the_fast_path_accepts_answerin_accepts_the_same(
    changes: list[tuple[Any, Any]], two_retrieved: bool
) -> None:
    base = answer_body("t-1")
    if two_retrieved:
        base["retrieved"].append({"cite": "d2", "document_id": "faq", "revision": "r1"})
        base["claims"].append({"subject": "pro", "key": "seats", "value": "5", "cite": "d2"})
    body = _mutated(base, changes)
    fast = fast_answer_input(body)
    serializer = AnswerIn(data=copy.deepcopy(body))
    valid = serializer.is_valid()
    if fast is not None:
        assert valid, (body, serializer.errors)
        assert fast == serializer.to_input()


@pytest.mark.parametrize("where", [("claims", "key"), ("claims", "subject"), "index_release",
                                   ("retrieved", "span"), ("retrieved", "document_id")],
                         ids=["claim key", "claim subject", "index_release", "span",
                              "document_id"])
@pytest.mark.parametrize("name", ["a\tb", "a\nb", "a\r\nb", "a\x0bb", "a\x85b", "a\u2028b"],
                         ids=["tab", "LF", "CR LF", "VT", "NEL", "LS"])
def test_a_name_with_a_tab_or_a_line_break_is_refused_by_both(where: Any, name: str) -> None:
    """Each such name, not only those the generated bodies above happen to hit."""
    body = _mutated(answer_body("t-1"), [(where, name)])
    assert fast_answer_input(body) is None
    serializer = AnswerIn(data=body)
    assert not serializer.is_valid()
    field, *inner = where if isinstance(where, tuple) else (where,)
    assert (serializer.errors[field][0][inner[0]] if inner else serializer.errors[field])


def test_the_fast_path_takes_the_usual_body() -> None:
    body = answer_body("t-1")
    body["claims"].append({"subject": "pro", "key": "seats", "value": 5, "cite": "d1"})
    serializer = AnswerIn(data=body)
    assert serializer.is_valid()
    fast = fast_answer_input(body)
    assert fast is not None and fast == serializer.to_input()
    assert fast.as_of is not None and fast.as_of.isoformat() == body["as_of"]


@pytest.mark.django_db
def test_verdict_body_is_what_verdictout_gives(publish: Any, submit: Any) -> None:
    publish()
    body = submit("t-1").json()
    verdict = Answer.objects.get(trace_id="t-1").current_verdict
    assert verdict_body(verdict) == dict(VerdictOut(verdict).data) == body["verdict"]


def _batch(service_api: Any, prefix: str, count: int) -> list[dict[str, Any]]:
    answers = []
    for i in range(count):
        body = answer_body(f"{prefix}-{i}")
        # Every third one held: generated from r1, which r2 has superseded.
        body["retrieved"][0]["revision"] = "r1" if i % 3 == 0 else "r2"
        answers.append(body)
    response = service_api.post("/api/v1/answers/batch", {"answers": answers}, format="json")
    assert response.status_code == 200, response.content
    return response.json()["results"]  # type: ignore[no-any-return]


@pytest.mark.django_db
def test_a_batch_costs_the_same_queries_at_24_and_60_answers(
    publish: Any, service_api: Any
) -> None:
    """Past a few rows a table (`copying.FEW`) each table takes one COPY, so the count stops
    growing; below that the rows of several tables share one INSERT."""
    publish()
    publish(revision="r2")
    _batch(service_api, "warm", 3)
    counts = []
    for prefix, size in (("small", 24), ("large", 60)):
        with CaptureQueriesContext(connection) as queries:
            results = _batch(service_api, prefix, size)
        assert [r["status_code"] for r in results] == [201] * size
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
    held = ReviewItem.objects.filter(answer__trace_id__startswith="large-").count()
    assert held == 20
    statuses = Answer.objects.filter(trace_id__startswith="large-").values_list(
        "status", flat=True)
    assert sorted(statuses) == ["candidate"] * 40 + ["held"] * 20


@pytest.mark.django_db
def test_a_batch_answers_like_one_answer_at_a_time(publish: Any, service_api: Any) -> None:
    """Same verdicts, statuses and replies as the single endpoint; a trace_id repeated in the
    batch is a replay of its first occurrence, or a conflict if the body differs."""
    publish()
    one = [service_api.post("/api/v1/answers", answer_body(f"s-{i}", claims=[
        {"key": "trial_days", "value": 14 + i, "cite": "d1"}]), format="json").json()
        for i in range(3)]
    bodies = [answer_body(f"b-{i}", claims=[{"key": "trial_days", "value": 14 + i, "cite": "d1"}])
              for i in range(3)]
    changed = answer_body("b-0", answer="Something else [d1].")
    response = service_api.post("/api/v1/answers/batch",
                                {"answers": [*bodies, bodies[1], changed]}, format="json")
    results = response.json()["results"]
    assert [r["status_code"] for r in results] == [201, 201, 201, 200, 409]
    for single, batched in zip(one, results[:3], strict=True):
        assert (batched["status"], batched["verdict"]["decision"], batched["verdict"]["reason"]
                ) == (single["status"], single["verdict"]["decision"], single["verdict"]["reason"])
    assert results[3]["verdict"]["id"] == results[1]["verdict"]["id"]
    assert results[4]["error"] == "conflict" and results[4]["trace_id"] == "b-0"
