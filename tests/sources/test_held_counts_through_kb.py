"""A conflict holds the answers the gate holds over it through the knowledge base too: an answer
that retrieved none of its documents, whose claim the gate compared with their facts and whose
verdict names them (`kb_documents`). The owner's inbox, the conflict's page, the withdraw box
and the page after a dismissal count them as they count those citing the documents; a
dismissal releases them.

Whether the owner may read such an answer is decided as for any other (readable_answers): by
the documents it retrieved. A knowledge-base document its verdict names that the owner may not
read does not hide it; its page redacts that finding.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.reviews.models import Answer
from reviewqueue.sources.models import Conflict
from tests.sources.test_held_counts import detail_count, detail_listed, fact, held, inbox_counts
from tests.sources.test_held_counts import read_from as read_from  # a fixture: both ends

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("read_from")]

FAQ = [{"cite": "d1", "document_id": "faq", "revision": "r1", "span": "p1"}]


def claim(key: str, value: Any = 14, subject: str | None = None) -> list[dict[str, Any]]:
    return [{"key": key, "value": value, "cite": "d1", **({"subject": subject} if subject else {})}]


@pytest.fixture
def faq(publish: Any) -> None:
    """A public document stating nothing on the keys in conflict."""
    publish("faq", facts=[fact("refund_days", 30)])


@pytest.fixture
def trial(publish: Any, owner: Any, faq: None) -> Conflict:
    """pricing (14) and pricing-eu (30), both olivia's and public, disagree on trial_days."""
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("pricing-eu", facts=[fact("trial_days", 30)])
    return Conflict.objects.get(key="trial_days")


def kb_documents(trace_id: str) -> list[list[str]]:
    """The knowledge-base documents each conflicting_sources finding of its verdict names."""
    verdict = Answer.objects.get(trace_id=trace_id).current_verdict
    return [f["kb_documents"] for f in verdict.findings if f["code"] == "conflicting_sources"]


def test_an_answer_held_through_the_knowledge_base_is_counted_and_listed(
    client: Any, submit: Any, owner: Any, trial: Conflict, service_api: Any,
) -> None:
    held(submit, "kb1", retrieved=FAQ, claims=claim("trial_days"))
    assert kb_documents("kb1") == [["pricing", "pricing-eu"]]
    held(submit, "cited", retrieved=[{**FAQ[0], "document_id": "pricing"}],
         claims=claim("trial_days"))
    client.force_login(owner)

    assert inbox_counts(client) == {trial.pk: "holding 2 answers"}
    assert detail_count(client, trial) == "2 answers"
    assert detail_listed(client, trial) == ["kb1", "cited"]


def test_an_answer_held_through_the_knowledge_base_for_another_key_is_not_counted(
    client: Any, publish: Any, submit: Any, owner: Any, faq: None,
) -> None:
    publish("pricing", facts=[fact("trial_days", 14), fact("seats", 5)])
    publish("pricing-eu", facts=[fact("trial_days", 30), fact("seats", 6)])
    trial, seats = (Conflict.objects.get(key=k) for k in ("trial_days", "seats"))
    held(submit, "kb-seats", retrieved=FAQ, claims=claim("seats", 5))
    client.force_login(owner)

    assert inbox_counts(client) == {trial.pk: "holding 0 answers", seats.pk: "holding 1 answer"}
    assert detail_listed(client, trial) == []
    assert detail_listed(client, seats) == ["kb-seats"]


def test_an_answer_held_through_the_knowledge_base_for_another_subject_is_not_counted(
    client: Any, publish: Any, submit: Any, owner: Any, faq: None,
) -> None:
    def priced(basic: int, pro: int) -> list[dict[str, Any]]:
        return [{**fact("price", basic), "subject": "basic"},
                {**fact("price", pro), "subject": "pro"}]

    publish("pricing", facts=priced(10, 20))
    publish("pricing-eu", facts=priced(12, 25))
    basic, pro = (Conflict.objects.get(subject=s) for s in ("basic", "pro"))
    held(submit, "kb-pro", retrieved=FAQ, claims=claim("price", 20, "pro"),
         answer="Pro costs 20 [d1].")
    client.force_login(owner)

    assert inbox_counts(client) == {basic.pk: "holding 0 answers", pro.pk: "holding 1 answer"}
    assert detail_listed(client, basic) == []
    assert detail_listed(client, pro) == ["kb-pro"]


def test_an_answer_the_owner_may_read_counts_whatever_knowledge_base_document_it_names(
    client: Any, publish: Any, submit: Any, owner: Any, make_user: Any, faq: None,
    service_api: Any,
) -> None:
    """pricing-eu is oscar's and only hr may read it; olivia still sees that it disagrees (a
    restricted side). An answer asked by hr and retrieving the public faq is one she may read
    (its page redacts the finding): it counts. One that retrieved an hr document does not."""
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("pricing-eu", owner="oscar", facts=[fact("trial_days", 30)], principals=["group:hr"])
    publish("hr-faq", owner="oscar", facts=[fact("refund_days", 30)], principals=["group:hr"])
    conflict = Conflict.objects.get(key="trial_days")
    held(submit, "kb-hr", retrieved=FAQ, claims=claim("trial_days"), asked_by=["group:hr"])
    assert kb_documents("kb-hr") == [["pricing", "pricing-eu"]]
    held(submit, "kb-hidden", retrieved=[{**FAQ[0], "document_id": "hr-faq"}],
         claims=claim("trial_days"), asked_by=["group:hr"])
    client.force_login(owner)

    assert inbox_counts(client) == {conflict.pk: "holding 1 answer"}
    assert detail_count(client, conflict) == "1 answer"
    assert detail_listed(client, conflict) == ["kb-hr"]


def test_the_withdraw_box_and_the_dismissal_count_the_answers_a_dismissal_releases(
    client: Any, submit: Any, owner: Any, trial: Conflict, service_api: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    held(submit, "kb1", retrieved=FAQ, claims=claim("trial_days"))
    client.force_login(owner)
    page = client.get("/owner/documents/pricing/").content.decode()
    warning = re.search(r"<p class=\"hint\" data-withdraw-releases>(.*?)</p>", page, re.S)
    assert warning is not None, page
    assert "1 held answer you may read waits on it now." in " ".join(warning.group(1).split())

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/owner/conflicts/{trial.pk}/dismiss",
                               {"reason": "both valid", "signature": trial.signature},
                               follow=True)
    assert response.status_code == 200
    # The page after the dismissal, opened before its re-evaluation ran, counts it as held.
    assert ("When this page was opened, 1 answer you may read was held over these values."
            in " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split()))
    # What the counts promised: the dismissal took it out of the queue (to abstain: faq, the
    # source it cites, says nothing of the trial), and nothing is held over the values now.
    assert service_api.get("/api/v1/answers/kb1").json()["status"] == "abstained"
    assert "Still held over these values: 0 answers you may read" in client.get(
        f"/owner/conflicts/{trial.pk}/").content.decode()
