"""Review fixes: the Django admin shows no passage of a document its user may not read; a
deactivated owner's documents can still be corrected, and their revisions replayed; a long
justification is kept whole."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.test import Client

from reviewqueue.accounts.services import user_deactivate
from reviewqueue.audit.models import QuarantinedPayload
from reviewqueue.audit.services import SYSTEM
from reviewqueue.errors import FieldError
from reviewqueue.sources.conflicts import DISMISSAL_REASON_MAX_CHARS, conflict_dismiss
from reviewqueue.sources.forms import DISMISS_REASONS, DismissForm
from reviewqueue.sources.models import Conflict, Document, Fact, Passage, Revision
from tests.conftest import revision_body
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

SECRET = "Bonus pool is 4% of payroll."


# --- The Django admin shows only rows of documents its user may read ------------------------


@pytest.fixture
def hr_document(publish: Any) -> Revision:
    """An HR document beside a public one: ada (an admin, not in group hr) may not read it."""
    publish("pricing")
    publish("hr-bonus", principals=["group:hr"], title="Bonus policy",
            passages=[{"span": "p1", "text": SECRET}],
            facts=[fact("bonus_percent", 4)])
    return Revision.objects.get(document__key="hr-bonus")


@pytest.mark.parametrize("model", ["passage", "fact", "revision"])
def test_the_admin_answers_a_row_of_a_document_the_admin_may_not_read_as_missing(
    admin_client: Client, hr_document: Revision, model: str
) -> None:
    pk = {"passage": Passage.objects.get(revision=hr_document).pk,
          "fact": Fact.objects.get(revision=hr_document).pk,
          "revision": hr_document.pk}[model]
    for view in ("change", "history", "delete"):
        response = admin_client.get(f"/admin/sources/{model}/{pk}/{view}/")
        assert response.status_code == 404, view
        assert SECRET.encode() not in response.content
    # As a row that does not exist: the id cannot be probed.
    assert admin_client.get(f"/admin/sources/{model}/999999/change/").status_code == 404


def test_the_admin_passage_list_shows_only_passages_the_admin_may_read(
    admin_client: Client, hr_document: Revision
) -> None:
    response = admin_client.get("/admin/sources/passage/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "pricing@r1" in page
    assert "hr-bonus" not in page


def test_the_admin_fact_and_revision_lists_show_nothing_of_a_document_the_admin_may_not_read(
    admin_client: Client, hr_document: Revision
) -> None:
    facts = admin_client.get("/admin/sources/fact/").content.decode()
    assert "trial_days" in facts and "bonus_percent" not in facts
    revisions = admin_client.get("/admin/sources/revision/").content.decode()
    assert "Pricing and plans" in revisions and "Bonus policy" not in revisions
    # Searched for by name, it is not found either.
    found = admin_client.get("/admin/sources/fact/?q=bonus_percent").context["cl"].result_list
    assert list(found) == []


def test_an_admin_in_the_documents_group_reads_its_passage_in_the_admin(
    make_user: Any, hr_document: Revision
) -> None:
    client = Client()
    client.force_login(make_user("hanna", "admin", groups=("hr",)))
    passage = Passage.objects.get(revision=hr_document)
    response = client.get(f"/admin/sources/passage/{passage.pk}/change/")
    assert response.status_code == 200
    assert SECRET in response.content.decode()
    assert "hr-bonus@r1" in client.get("/admin/sources/passage/").content.decode()


def test_the_admin_reads_a_revision_by_its_own_principals_not_the_documents_now(
    admin_client: Client, publish: Any
) -> None:
    # r1 was HR only; r2 is public: r1's text stays HR only, as on the product's pages.
    publish("hr-bonus", "r1", principals=["group:hr"],
            passages=[{"span": "p1", "text": SECRET}])
    publish("hr-bonus", "r2", principals=["*"],
            passages=[{"span": "p1", "text": "Bonuses are paid in March."}])
    old = Passage.objects.get(revision__revision="r1")
    new = Passage.objects.get(revision__revision="r2")
    assert admin_client.get(f"/admin/sources/passage/{old.pk}/change/").status_code == 404
    page = admin_client.get(f"/admin/sources/passage/{new.pk}/change/")
    assert page.status_code == 200 and "Bonuses are paid in March." in page.content.decode()


def test_the_admin_document_list_names_a_restricted_document_but_none_of_its_text(
    admin_client: Client, hr_document: Revision
) -> None:
    document = Document.objects.get(key="hr-bonus")
    page = admin_client.get(f"/admin/sources/document/{document.pk}/change/").content.decode()
    assert "hr-bonus" in page
    assert SECRET not in page and "Bonus policy" not in page


# --- A deactivated owner's documents ----------------------------------------------------------


@pytest.fixture
def olivia_left(publish: Any, owner: Any) -> Fact:
    """pricing, owned by olivia, who has since been deactivated; its one fact."""
    publish("pricing", facts=[fact("trial_days", 14)])
    user_deactivate(user=owner, actor=SYSTEM)
    return Fact.objects.get(revision__document__key="pricing")


def test_an_admin_ends_a_fact_of_a_document_whose_owner_was_deactivated(
    admin_client: Client, olivia_left: Fact
) -> None:
    last_day = olivia_left.valid_until - dt.timedelta(days=1)
    response = admin_client.post("/owner/documents/pricing/end-validity",
                                 {"fact_id": olivia_left.pk, "last_day": last_day.isoformat()})
    assert response.status_code == 302, response.content.decode()
    document = Document.objects.select_related("current_revision", "owner").get(key="pricing")
    assert document.current_revision.seq == 2
    assert document.current_revision.facts.get().valid_until == last_day
    # The document stays olivia's: nobody chose another owner.
    assert document.owner.username == "olivia"


def test_an_admin_publishes_corrected_facts_of_a_document_whose_owner_was_deactivated(
    admin_client: Client, olivia_left: Fact
) -> None:
    response = admin_client.post("/owner/documents/pricing/publish", {
        "facts-TOTAL_FORMS": "1",
        "facts-INITIAL_FORMS": "1",
        "facts-0-fact_id": str(olivia_left.pk),
        "facts-0-value": "21",
        "facts-0-valid_from": olivia_left.valid_from.isoformat(),
        "facts-0-valid_until": olivia_left.valid_until.isoformat(),
        "note": "Trial extended",
        "passages_checked": "1",  # its passage still says 14
    })
    assert response.status_code == 302, response.content.decode()
    current = Document.objects.get(key="pricing").current_revision
    assert current.facts.get().value == 21
    assert current.note == "Trial extended"


def test_the_document_system_publishes_a_new_revision_naming_the_deactivated_current_owner(
    service_api: Any, olivia_left: Fact
) -> None:
    response = service_api.put("/api/v1/documents/pricing/revisions/r2",
                               revision_body(facts=[fact("trial_days", 21)]), format="json")
    assert response.status_code == 201, response.content
    assert Document.objects.get(key="pricing").current_revision.revision == "r2"
    assert not QuarantinedPayload.objects.exists()


def test_a_deactivated_user_cannot_become_the_owner_of_a_document(
    service_api: Any, make_user: Any, olivia_left: Fact
) -> None:
    make_user("oscar", "owner")
    response = service_api.put("/api/v1/documents/pricing-eu/revisions/r1", revision_body(),
                               format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "owner",
                                          "message": "no active user named 'olivia'"}]
    # Nor take over a document someone else owns.
    service_api.put("/api/v1/documents/promo/revisions/r1", revision_body(owner="oscar"),
                    format="json")
    response = service_api.put("/api/v1/documents/promo/revisions/r2", revision_body(),
                               format="json")
    assert response.status_code == 400
    assert Document.objects.get(key="promo").owner.username == "oscar"
    assert not Document.objects.filter(key="pricing-eu").exists()


def test_the_owner_named_anew_must_still_be_an_owner(
    service_api: Any, reviewer: Any, olivia_left: Fact
) -> None:
    response = service_api.put("/api/v1/documents/pricing/revisions/r2",
                               revision_body(owner=reviewer.username), format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "owner"
    assert Document.objects.get(key="pricing").owner.username == "olivia"


def test_a_revision_replayed_after_its_owner_was_deactivated_is_answered_as_before(
    service_api: Any, olivia_left: Fact
) -> None:
    response = service_api.put("/api/v1/documents/pricing/revisions/r1",
                               revision_body(facts=[fact("trial_days", 14)]), format="json")
    assert response.status_code == 200, response.content
    assert response.json()["revision"] == "r1"
    assert Revision.objects.count() == 1
    assert not QuarantinedPayload.objects.exists()


def test_a_revision_replayed_after_the_document_changed_hands_is_answered_as_before(
    service_api: Any, make_user: Any, publish: Any, owner: Any
) -> None:
    # r1 named olivia; r2 handed the document to oscar; olivia has left since.
    make_user("oscar", "owner")
    publish("pricing", "r1")
    publish("pricing", "r2", owner="oscar")
    user_deactivate(user=owner, actor=SYSTEM)
    response = service_api.put("/api/v1/documents/pricing/revisions/r1", revision_body(),
                               format="json")
    assert response.status_code == 200, response.content
    assert response.json()["revision"] == "r1"
    document = Document.objects.select_related("current_revision", "owner").get(key="pricing")
    assert (document.current_revision.revision, document.owner.username) == ("r2", "oscar")
    assert not QuarantinedPayload.objects.exists()


# --- A dismissal's justification is kept whole ------------------------------------------------


def test_every_reason_code_leaves_room_for_the_longest_justification() -> None:
    detail_max = DismissForm.base_fields["detail"].max_length
    assert detail_max is not None
    longest = max(len(f"{code}: ") for code, _label in DISMISS_REASONS)
    assert longest + detail_max <= DISMISSAL_REASON_MAX_CHARS


def test_the_longest_justification_is_kept_whole(
    client: Any, owner: Any, two_owners_disagree: Conflict
) -> None:
    detail = ("The promo is for new teams only. " * 61)[:1999] + "!"
    assert len(detail) == 2000
    client.force_login(owner)
    response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/dismiss", {
        "reason": "different plans", "detail": detail,
        "signature": two_owners_disagree.signature})
    assert response.status_code == 302
    assert Conflict.objects.get().dismissal_reason == f"different plans: {detail}"
    page = client.get(f"/owner/conflicts/{two_owners_disagree.pk}/").content.decode()
    assert detail[-40:] in page


def test_a_justification_over_the_limit_is_refused_naming_the_field(
    client: Any, owner: Any, two_owners_disagree: Conflict
) -> None:
    client.force_login(owner)
    response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/dismiss", {
        "reason": "other", "detail": "x" * 2001, "signature": two_owners_disagree.signature})
    assert response.status_code == 400
    page = response.content.decode()
    assert "At most 2,000 characters: this text has 2,001." in page
    # It was given: the page does not ask for one as well.
    assert "Explain why the values do not conflict." not in page
    assert Conflict.objects.get().status == "open"


def test_the_service_refuses_a_reason_too_long_to_keep_rather_than_cut_it(
    owner: Any, two_owners_disagree: Conflict
) -> None:
    with pytest.raises(FieldError) as refused:
        conflict_dismiss(conflict_id=two_owners_disagree.pk,
                         reason="x" * (DISMISSAL_REASON_MAX_CHARS + 1), user=owner, actor=SYSTEM)
    assert refused.value.field == "reason"
    assert Conflict.objects.get().status == "open"


def test_a_document_s_admin_page_names_its_current_revision_without_a_link_that_fails(
    admin_client: Client, hr_document: Revision
) -> None:
    document = hr_document.document
    page = admin_client.get(f"/admin/sources/document/{document.pk}/change/").content.decode()
    assert "hr-bonus@r1" in page
    assert f"/admin/sources/revision/{hr_document.pk}/change/" not in page
