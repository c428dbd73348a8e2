"""A dismissal judges the revisions a conflict was between. Withdrawing one of its documents
only takes values away from those judged, so the dismissal stands; restoring it brings back
what was judged, so it is dismissed as before. A revision nobody judged reopens it."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.models import AuditEvent
from reviewqueue.sources.models import Conflict
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_way(make_user: Any, publish: Any, owner: Any, submit: Any) -> Conflict:
    """olivia's pricing (14) and trial-promo (30) and oscar's staff-trial (45) disagree; an
    answer stating 14 and citing pricing only is held through the knowledge base."""
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("trial-promo", facts=[fact("trial_days", 30)])
    publish("staff-trial", owner="oscar", facts=[fact("trial_days", 45)])
    assert submit("t-1", as_of=None).json()["status"] == "held"
    return Conflict.objects.get()


def dismiss(client: Any, conflict: Conflict, reason: str, **fields: str) -> Any:
    return client.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                       {"reason": reason, "signature": conflict.signature, **fields})


def withdraw(client: Any, document: str, **follow: bool) -> Any:
    return client.post(f"/owner/documents/{document}/withdraw", {"confirm": document}, **follow)


def status_of(service_api: Any, trace_id: str = "t-1") -> str:
    return service_api.get(f"/api/v1/answers/{trace_id}").json()["status"]


def progress_sentence(page: str) -> str:
    return page.split("data-conflict-change", 1)[1].split("</li>", 1)[0]


def test_withdrawing_and_restoring_a_document_leaves_the_dismissal_standing(
    client: Any, owner: Any, three_way: Conflict, service_api: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        dismiss(client, three_way, "both valid")
    assert status_of(service_api) == "candidate"

    with django_capture_on_commit_callbacks(execute=True):
        withdrawn = withdraw(client, "trial-promo", follow=True)
    conflict = Conflict.objects.get()
    assert (conflict.status, conflict.documents) == ("dismissed", ["pricing", "staff-trial"])
    assert status_of(service_api) == "candidate"
    page = withdrawn.content.decode()
    assert ("The changed document no longer takes part; the conflict stays dismissed between "
            "the others, documents of yours among them.") in page
    page = client.get(f"/owner/conflicts/{three_way.pk}/").content.decode()
    assert "data-reopened" not in page and "Reopen the conflict" in page

    with django_capture_on_commit_callbacks(execute=True):
        restored = client.post("/owner/documents/trial-promo/restore", follow=True)
    conflict = Conflict.objects.get()
    assert (conflict.status, conflict.documents) == (
        "dismissed", ["pricing", "staff-trial", "trial-promo"])
    assert status_of(service_api) == "candidate"
    assert ("Its revisions are again among those it was dismissed for, so it is dismissed as "
            "before.") in restored.content.decode()
    # Logged as changes of a dismissed conflict, never as a reopening.
    assert list(AuditEvent.objects.filter(object_type="conflict").order_by("seq").values_list(
        "action", "before__status", "after__status")) == [
        ("conflict.opened", None, "open"), ("conflict.changed", "open", "open"),
        ("conflict.dismissed", "open", "dismissed"),
        ("conflict.changed", "dismissed", "dismissed"),
        ("conflict.changed", "dismissed", "dismissed")]


def test_a_dismissed_conflict_closed_by_a_withdrawal_is_dismissed_again_on_restore(
    client: Any, owner: Any, two_owners_disagree: Conflict, service_api: Any, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(owner)
    dismiss(client, two_owners_disagree, "different plans")
    with django_capture_on_commit_callbacks(execute=True):
        withdraw(client, "pricing")
    assert Conflict.objects.get().status == "closed"
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/owner/documents/pricing/restore")
    conflict = Conflict.objects.get()
    assert (conflict.status, conflict.closed_at) == ("dismissed", None)
    assert conflict.dismissed_by == owner
    # Its facts are out of the gate's knowledge base again, as before the withdrawal.
    assert submit("t-9", as_of=None).json()["status"] == "candidate"


def test_a_revision_nobody_judged_still_reopens_it(
    client: Any, owner: Any, three_way: Conflict, publish: Any,
) -> None:
    client.force_login(owner)
    dismiss(client, three_way, "both valid")
    withdraw(client, "trial-promo")
    publish("staff-trial", revision="r2", owner="oscar", facts=[fact("trial_days", 40)])
    conflict = Conflict.objects.get()
    assert (conflict.status, conflict.dismissed_revisions) == ("open", [])
    assert AuditEvent.objects.filter(action="conflict.reopened").count() == 1


def test_a_reason_about_a_document_withdrawn_since_stays_hidden_from_who_could_not_read_it(
    client: Any, owner: Any, make_user: Any, publish: Any,
) -> None:
    """hugo (HR) dismissed a conflict whose HR side olivia may not read; he withdraws that
    side: the conflict stays dismissed, between documents she may read, but the reason was
    written about the HR document."""
    hugo = make_user("hugo", "owner", groups=("hr",))
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("trial-promo", facts=[fact("trial_days", 30)])
    publish("hr-trial", owner="hugo", principals=["group:hr"], facts=[fact("trial_days", 45)])
    conflict = Conflict.objects.get()
    client.force_login(hugo)
    dismiss(client, conflict, "other", detail="Staff get 45 days under the HR plan.")
    withdraw(client, "hr-trial")
    assert Conflict.objects.get().status == "dismissed"
    assert Conflict.objects.get().documents == ["pricing", "trial-promo"]

    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    assert "Staff get 45 days" not in page
    assert "the reason concerns a document you may not read" in page


def test_an_owner_whose_only_document_leaves_a_dismissed_conflict_reads_that_it_stays_dismissed(
    client: Any, owner: Any, three_way: Conflict,
) -> None:
    client.force_login(owner)
    dismiss(client, three_way, "both valid")
    client.force_login(type(owner).objects.get(username="oscar"))
    page = withdraw(client, "staff-trial", follow=True).content.decode()
    assert ("Your documents no longer take part; the conflict stays dismissed between the "
            "others.") in page
    assert Conflict.objects.get().status == "dismissed"


def test_a_revision_that_reopens_a_conflict_closed_while_dismissed_says_so(
    client: Any, owner: Any, two_owners_disagree: Conflict, publish: Any,
) -> None:
    client.force_login(owner)
    dismiss(client, two_owners_disagree, "different plans")
    withdraw(client, "pricing")
    assert Conflict.objects.get().status == "closed"
    publish("pricing", revision="r2", facts=[fact("trial_days", 21)])
    assert Conflict.objects.get().status == "open"
    page = client.get(f"/owner/conflicts/{two_owners_disagree.pk}/").content.decode()
    assert "data-reopened" in page
    assert ", when a revision of <code>pricing</code> changed the values it had been dismissed " \
           "for." in page
