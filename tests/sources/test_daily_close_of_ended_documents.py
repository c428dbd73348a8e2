"""The daily close and a conflict that goes on without one of its documents. When the facts of
one document end while the others still disagree, that document leaves the conflict, as a
withdrawn one does: its owner has nothing left to act on there, and the others still see it,
open or dismissed as it was."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from reviewqueue.audit.models import AuditEvent
from reviewqueue.jobs.models import Job
from reviewqueue.sources.models import Conflict
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_way(make_user: Any, publish: Any, owner: Any) -> Conflict:
    """olivia's pricing (14, no end), oscar's promo (30, until day five) and otto's eu (21, no
    end) disagree."""
    make_user("oscar", "owner")
    make_user("otto", "owner")
    publish("pricing", facts=[fact("trial_days", 14, end=None)])
    publish("promo", owner="oscar", facts=[fact("trial_days", 30, end=5)])
    publish("eu", owner="otto", facts=[fact("trial_days", 21, end=None)])
    conflict = Conflict.objects.get()
    assert conflict.documents == ["eu", "pricing", "promo"]
    return conflict


def close_after_promo_ended(settings: Any) -> int:
    """The daily close ten days on, when promo's fact has ended; how many it closed."""
    from reviewqueue.sources.tasks import close_ended_conflicts

    settings.REEVALUATION_TODAY = timezone.localdate() + dt.timedelta(days=10)
    return close_ended_conflicts()


def user(django_user_model: Any, username: str) -> Any:
    return django_user_model.objects.get(username=username)


def conflict_card(page: str, conflict: Conflict) -> str:
    return page.split(f'data-conflict="{conflict.pk}"', 1)[1].split("</section>", 1)[0]


def dismiss(client: Any, conflict: Conflict) -> Any:
    return client.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                       {"reason": "both valid", "signature": conflict.signature})


def test_the_owner_whose_facts_ended_no_longer_sees_the_conflict_nor_can_dismiss_it(
    client: Any, three_way: Conflict, settings: Any, django_user_model: Any,
) -> None:
    assert close_after_promo_ended(settings) == 0  # pricing and eu still disagree
    client.force_login(user(django_user_model, "oscar"))
    assert f"/owner/conflicts/{three_way.pk}/" not in client.get("/owner/").content.decode()
    assert client.get(f"/owner/conflicts/{three_way.pk}/").status_code == 404
    # The disagreement of the other two stays before the gate.
    assert dismiss(client, Conflict.objects.get()).status_code == 404
    assert Conflict.objects.get().status == "open"


def test_the_other_owners_still_see_it_between_their_documents(
    client: Any, owner: Any, three_way: Conflict, settings: Any, django_user_model: Any,
) -> None:
    close_after_promo_ended(settings)
    conflict = Conflict.objects.get()
    assert (conflict.status, conflict.documents) == ("open", ["eu", "pricing"])
    assert [p["document"] for p in conflict.participants] == ["eu", "pricing"]
    assert conflict.documents_ever == ["eu", "pricing", "promo"]
    otto = user(django_user_model, "otto")
    for who in (owner, otto):
        client.force_login(who)
        card = conflict_card(client.get("/owner/").content.decode(), conflict)
        assert "eu@r1" in card and "pricing@r1" in card and "promo@" not in card
    # What otto judges is what is left.
    assert dismiss(client, conflict).status_code == 302
    assert Conflict.objects.get().dismissed_revisions == [["eu", "r1"], ["pricing", "r1"]]


def test_the_change_is_audited_as_the_daily_close_once(
    three_way: Conflict, settings: Any,
) -> None:
    close_after_promo_ended(settings)
    close_after_promo_ended(settings)  # again: nothing more happens
    assert list(AuditEvent.objects.filter(object_type="conflict").order_by("seq")
                .values_list("action", flat=True)) == [
        "conflict.opened", "conflict.changed", "conflict.changed"]
    changed = AuditEvent.objects.filter(object_type="conflict").latest("seq")
    assert (changed.actor, changed.document_id, changed.object_id) == (
        "worker", "", str(three_way.pk))
    assert changed.before == {"status": "open"}
    assert changed.after == {"status": "open", "subject": "", "key": "trial_days",
                             "revisions": [["eu", "r1"], ["pricing", "r1"]],
                             "by": "validity"}


def test_a_dismissed_conflict_stays_dismissed_between_the_others(
    client: Any, owner: Any, three_way: Conflict, settings: Any, django_user_model: Any,
    submit: Any,
) -> None:
    """As after a withdrawal: what is left is among the revisions the dismissal judged."""
    client.force_login(owner)
    assert dismiss(client, three_way).status_code == 302
    close_after_promo_ended(settings)
    conflict = Conflict.objects.get()
    assert (conflict.status, conflict.documents) == ("dismissed", ["eu", "pricing"])
    assert conflict.dismissed_by == owner
    assert conflict.dismissed_revisions == [["eu", "r1"], ["pricing", "r1"], ["promo", "r1"]]
    changed = AuditEvent.objects.filter(object_type="conflict").latest("seq")
    assert (changed.action, changed.before["status"], changed.after["status"]) == (
        "conflict.changed", "dismissed", "dismissed")
    # Still out of the gate's knowledge base, as before: nothing to re-evaluate, and an
    # answer stating pricing's 14 is not held.
    assert not Job.objects.filter(trigger="validity").exists()
    assert submit("t-1", as_of=None).json()["status"] == "candidate"

    client.force_login(user(django_user_model, "oscar"))
    assert f"/owner/conflicts/{conflict.pk}/" not in client.get("/owner/").content.decode()
    reopened = client.post(f"/owner/conflicts/{conflict.pk}/reopen",
                           {"dismissed_at": conflict.dismissed_at.isoformat()})
    assert reopened.status_code == 404
    assert Conflict.objects.get().status == "dismissed"
