"""copying.built gives the instance `Model(**values)` gives, for a quarter of the cost: each
field its value or its default, nothing else."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from reviewqueue.copying import built
from reviewqueue.reviews.models import Answer, AnswerVersion, RetrievedItem, ReviewItem, Verdict

NOW = dt.datetime(2026, 12, 6, 9, 0, tzinfo=dt.UTC)
CASES: list[tuple[type[Any], dict[str, Any]]] = [
    (Answer, {"id": 7, "trace_id": "t-1", "question": "q", "asked_by": ["*"],
              "index_release": "r", "as_of": None, "status_changed_at": NOW,
              "body_digest": "d", "submitted_by_id": None, "current_version_id": 8,
              "current_verdict_id": 9}),
    (AnswerVersion, {"id": 8, "answer_id": 7, "number": 1, "text": "t", "claims": []}),
    (RetrievedItem, {"answer_id": 7, "cite": "d1", "document_key": "pricing", "revision": "r1",
                     "span": "p1"}),
    (Verdict, {"id": 9, "answer_id": 7, "version_id": 8, "decision": "review"}),
    (ReviewItem, {"answer_id": 7, "entered_at": NOW, "primary_reason": "conflicting_sources",
                  "reasons": ["conflicting_sources"], "index_release": "r",
                  "audit_sample": False}),
]


def fields(instance: Any) -> dict[str, Any]:
    return {name: value for name, value in vars(instance).items() if name != "_state"}


@pytest.mark.parametrize(("model", "values"), CASES, ids=[m.__name__ for m, _ in CASES])
def test_an_instance_built_is_the_one_its_model_makes(model: type[Any],
                                                      values: dict[str, Any]) -> None:
    made, fast = model(**values), built(model, **values)
    assert type(fast) is model
    assert fields(fast) == fields(made)
    assert (fast._state.adding, fast._state.db) == (True, None)
    # A mutable default is the instance's own, as the model gives it.
    mutable = [name for name, value in fields(fast).items()
               if isinstance(value, (list, dict)) and name not in values]
    for name in mutable:
        assert getattr(fast, name) is not getattr(built(model, **values), name)


def test_a_field_the_model_does_not_have_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="RetrievedItem has no field answer"):
        built(RetrievedItem, answer=object(), cite="d1")
