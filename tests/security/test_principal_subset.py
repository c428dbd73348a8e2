"""What a user can see is always a subset of what they may read.

Hypothesis draws principals, documents with random `allowed_principals` and answers citing
random documents, and reviewers with random groups. For every reviewer, every queue row (page
and API), item page and answer read through the API may draw only on documents `may_read`
lets them read: the passage text, fact values and titles of any other document never appear.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.security.conftest import FIGURES, api_client

GROUPS = ("g1", "g2", "g3")
USERS = ("u1", "u2", "u3")
PRINCIPALS = ("*", *(f"user:{u}" for u in USERS), *(f"group:{g}" for g in GROUPS))

documents = st.lists(
    st.frozensets(st.sampled_from(PRINCIPALS), min_size=1, max_size=3),
    min_size=1, max_size=4,
)


@st.composite
def worlds(draw: Any) -> dict[str, Any]:
    docs = draw(documents)
    n = len(docs)
    answers = draw(st.lists(
        st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True),
        min_size=1, max_size=3))
    groups = {u: draw(st.frozensets(st.sampled_from(GROUPS), max_size=2)) for u in USERS}
    return {"docs": docs, "answers": answers, "groups": groups}


def secret_bits(index: int) -> dict[str, str]:
    """Strings only a reader of document `index` may ever receive."""
    return {"title": f"TITLE-SECRET-D{index}X", "passage": f"PASSAGE-SECRET-D{index}X",
            "value": f"VALUE-SECRET-D{index}X"}


def _build(world: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    from reviewqueue.accounts.models import Role
    from reviewqueue.accounts.services import user_create_or_update
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.reviews.services.ingest import AnswerInput, RetrievedInput, answer_ingest
    from reviewqueue.sources import services

    users = {}
    for name in USERS:
        users[name] = user_create_or_update(
            username=name, role=Role.REVIEWER, groups=sorted(world["groups"][name]),
            password=None, actor=SYSTEM)
    user_create_or_update(username="olivia", role=Role.OWNER, groups=[], password=None,
                          actor=SYSTEM)
    today = dt.date.today()
    for index, allowed in enumerate(world["docs"]):
        bits = secret_bits(index)
        services.revision_publish(
            document_key=f"d{index}", revision="r1", actor=SYSTEM,
            data=services.RevisionInput(
                title=bits["title"], owner="olivia",
                updated_at=dt.datetime.now(dt.UTC), allowed_principals=tuple(sorted(allowed)),
                passages=(services.PassageInput("p1", f"It says {bits['passage']}."),),
                facts=(services.FactInput(key="trial_days", value=bits["value"],
                                          valid_from=today - dt.timedelta(days=10),
                                          valid_until=today + dt.timedelta(days=10),
                                          span="p1"),),
            ))
    trace_ids = []
    for a, cited in enumerate(world["answers"]):
        asked_by = sorted({p for i in cited for p in world["docs"][i]})
        first = secret_bits(cited[0])["value"]
        result = answer_ingest(actor=SYSTEM, data=AnswerInput(
            trace_id=f"a{a}", question=f"Question {a}?", answer="It is so [c0].",
            asked_by=tuple(asked_by), index_release="r",
            retrieved=tuple(RetrievedInput(f"c{j}", f"d{i}", "r1", "p1")
                            for j, i in enumerate(cited)),
            claims=({"key": "trial_days", "value": first, "cite": "c0"},),
        ))
        trace_ids.append(result.answer.trace_id)
    return users, trace_ids


def _forbidden_strings(world: dict[str, Any], principals: frozenset[str]) -> list[str]:
    from reviewqueue.accounts.principals import may_read

    return [s for i, allowed in enumerate(world["docs"]) if not may_read(allowed, principals)
            for s in secret_bits(i).values()]


EXAMPLES = {"count": 0, "checks": 0}


@pytest.mark.django_db
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(world=worlds())
def test_what_a_reviewer_sees_is_a_subset_of_what_they_may_read(world: dict[str, Any]) -> None:
    from django.db import transaction

    from reviewqueue.accounts.principals import may_read, user_principals

    EXAMPLES["count"] += 1
    FIGURES["hypothesis examples (principal subset)"] = EXAMPLES["count"]
    with transaction.atomic():
        users, trace_ids = _build(world)
        for name, user in users.items():
            principals = user_principals(user)
            readable = {f"d{i}" for i, allowed in enumerate(world["docs"])
                        if may_read(allowed, principals)}
            forbidden = _forbidden_strings(world, principals)
            session = api_client()
            session.force_login(user)

            # Queue page and queue API: only rows whose every document is readable.
            page = session.get("/").content.decode()
            assert not [s for s in forbidden if s in page], (name, world)
            body = session.get("/api/v1/queue?limit=100").json()
            for row in body["results"]:
                assert {d["document_id"] for d in row["documents"]} <= readable, (name, row)
            assert not [s for s in forbidden if s in str(body)]

            for trace_id, cited in zip(trace_ids, world["answers"], strict=True):
                may = {f"d{i}" for i in cited} <= readable
                item = session.get(f"/answers/{trace_id}/")
                api = session.get(f"/api/v1/answers/{trace_id}")
                assert item.status_code == (200 if may else 404), (name, trace_id, world)
                assert api.status_code == (200 if may else 404), (name, trace_id, world)
                for response in (item, api):
                    text = response.content.decode()
                    leaked = [s for s in forbidden if s in text]
                    assert leaked == [], (name, trace_id, leaked, world)
                EXAMPLES["checks"] += 1
        FIGURES["principal subset checks (user x answer)"] = EXAMPLES["checks"]
        transaction.set_rollback(True)
