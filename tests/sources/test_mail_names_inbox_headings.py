"""The mails that send an owner to their page name its sections by the headings the page shows:
the owner's page was renamed "Owner inbox", its conflicts "Conflicts in your documents", and a
mail pointing at a "'My conflicts'" section sends the owner looking for a heading that is gone."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest
from django.core import mail

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def _quoted_sections(body: str) -> list[str]:
    return re.findall(r"'([^']+)'", body.split("owner page", 1)[1])


def test_conflict_mail_names_headings_the_owner_page_has(
    publish: Any, owner: Any, make_user: Any, client: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    owner.email = "olivia@example.test"
    owner.save(update_fields=["email"])
    make_user("oscar", "owner")
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", facts=[fact("trial_days", 14)])
        publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)])
    body = next(m.body for m in mail.outbox if m.to == ["olivia@example.test"])
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    sections = _quoted_sections(body)
    assert sections
    assert [s for s in sections if s not in page] == []


def test_handoff_mail_names_headings_the_owner_page_has(owner: Any, client: Any) -> None:
    from reviewqueue.reviews.services.handoff import _mail_owners

    _mail_owners([("olivia@example.test", "en")], "t-1", "How long?", "Which one?",
                 SimpleNamespace(get_username=lambda: "alice"))
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    sections = _quoted_sections(mail.outbox[0].body)
    assert sections
    assert [s for s in sections if s not in page] == []
