"""Template filters used by the audit and insight pages (and the navigation)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser

from reviewqueue.accounts.templatetags.roles import is_admin, is_owner
from reviewqueue.audit.templatetags.audit_tags import actor_name, duration, percent


@pytest.mark.django_db
def test_only_admins_get_the_audit_links(admin_user: Any, reviewer: Any) -> None:
    assert is_admin(admin_user)
    assert not is_admin(reviewer)
    assert not is_admin(AnonymousUser())


@pytest.mark.django_db
def test_owners_and_admins_get_the_conflicts_link(owner: Any, admin_user: Any,
                                                  reviewer: Any) -> None:
    assert is_owner(owner)
    assert is_owner(admin_user)
    assert not is_owner(reviewer)


@pytest.mark.parametrize("seconds, shown", [
    (None, "\u2013"), (40, "40 s"), (125, "2 min 5 s"), (9000, "2 h 30 min"),
    (3 * 86400 + 4 * 3600, "3 d 4 h"),
])
def test_durations_show_the_two_largest_units(seconds: Any, shown: str) -> None:
    assert duration(seconds) == shown


def test_percent() -> None:
    assert percent(0.41666, 1) == "41.7%"
    assert percent(None) == "\u2013"


@pytest.mark.parametrize("seconds, shown", [
    (40, "40秒"), (125, "2分 5秒"), (9000, "2時間 30分"), (3 * 86400 + 4 * 3600, "3日 4時間"),
])
def test_durations_are_said_in_the_readers_language(seconds: Any, shown: str) -> None:
    from django.utils import translation

    with translation.override("ja"):
        assert duration(seconds) == shown


@pytest.mark.parametrize("logged, shown", [
    ("user:olivia", "olivia"), ("user:svc-ingest token:rq_ab12", "svc-ingest · token rq_ab12"),
    ("worker", ""), ("system", ""), ("anonymous", "anonymous"), ("user:a:b", "a:b"),
])
def test_an_actor_reads_without_repeating_its_type(logged: str, shown: str) -> None:
    assert actor_name(logged) == shown
