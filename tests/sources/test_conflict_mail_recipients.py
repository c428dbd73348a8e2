"""What an owner mailed about a conflict gets: the values written as the owner's pages write
them, a mail only when the owner's pages it sends them to would open for them, and, when the
mail server is down, a publication that is not held up once for every mail."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend
from django.test import override_settings

from reviewqueue.sources.models import Conflict
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

# Each time the mail server below was asked for a connection.
CONNECTIONS: list[str] = []


class UnreachableServer(BaseEmailBackend):
    """A mail server that cannot be reached: each connection is refused (an SMTP server that
    is down makes each one wait for EMAIL_TIMEOUT_SECONDS first)."""

    def open(self) -> bool:
        CONNECTIONS.append("open")
        raise ConnectionRefusedError("the mail server is down")

    def send_messages(self, email_messages: Any) -> int:
        self.open()
        return 0


def test_a_conflict_mail_writes_the_values_as_the_owner_pages_do(
    publish: Any, owners_with_mail: None, django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", facts=[fact("trial_days", "14 days"), fact("eu_only", True),
                                  fact("plan", "14")])
        publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30),
                                                     fact("eu_only", False), fact("plan", 14)])

    bodies = {m.subject.rsplit(" ", 1)[1]: m.body for m in mail.outbox
              if m.to == ["olivia@example.test"]}
    # The page's edit form and sides write text as typed, JSON's true and false, and text
    # that reads as a number in quotes; never Python's 'quotes', True or False.
    assert "- pricing (r1): 14 days\n- trial-promo (r1): 30\n" in bodies["trial_days"]
    assert "- pricing (r1): true\n- trial-promo (r1): false\n" in bodies["eu_only"]
    assert '- pricing (r1): "14"\n- trial-promo (r1): 14\n' in bodies["plan"]


def test_an_owner_who_may_no_longer_open_the_owner_pages_is_not_mailed(
    publish: Any, owner: Any, owners_with_mail: None, client: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    # olivia still owns pricing, but now only reviews: the owner's page refuses her.
    owner.groups.set([Group.objects.get_or_create(name="reviewer")[0]])
    client.force_login(owner)
    assert client.get("/owner/").status_code == 403

    with django_capture_on_commit_callbacks(execute=True):
        publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)])

    assert Conflict.objects.get().status == "open"
    assert [m.to for m in mail.outbox] == [["oscar@example.test"]]


def test_a_publication_tries_an_unreachable_mail_server_once_for_all_its_conflict_mails(
    publish: Any, owners_with_mail: None, django_capture_on_commit_callbacks: Any,
) -> None:
    keys = [f"plan_{n}" for n in range(5)]
    publish("pricing", facts=[fact(k, 14) for k in keys])
    CONNECTIONS.clear()

    with override_settings(MAILERS={"default": {"BACKEND": f"{__name__}.UnreachableServer"}}), \
            django_capture_on_commit_callbacks(execute=True):
        response = publish("trial-promo", owner="oscar", facts=[fact(k, 30) for k in keys])

    # The publication stands, and its ten mails (five conflicts, two owners) cost one wait
    # for the server, not ten.
    assert response.status_code == 201
    assert Conflict.objects.filter(status="open").count() == 5
    assert CONNECTIONS == ["open"]
