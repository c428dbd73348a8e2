"""A session ends SESSION_COOKIE_AGE after the person last did something: what a page sends by
itself (`X-Background: 1`, a lease renewal with nothing done since the last, a progress poll)
keeps neither the session nor, through it, a lease alive."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.accounts import idle
from tests.reviews.conftest import hold, login, sources  # noqa: F401

pytestmark = pytest.mark.django_db

BACKGROUND = {"HTTP_X_BACKGROUND": "1"}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1_000_000.0]
    monkeypatch.setattr(idle.time, "time", lambda: now[0])
    return now


@pytest.fixture
def alice(hold: Any, reviewer: Any, login: Any, clock: list[float]) -> Any:  # noqa: F811
    trace = hold()
    client = login(reviewer)
    assert client.post(f"/answers/{trace}/claim").status_code == 302
    return client


def renew(client: Any, **headers: str) -> Any:
    return client.post("/answers/t-1/renew", content_type="application/json", **headers)


def test_renewals_alone_do_not_keep_an_idle_reviewer_signed_in(
    alice: Any, clock: list[float], settings: Any
) -> None:
    for _ in range(settings.SESSION_COOKIE_AGE // 60):
        clock[0] += 60
        assert renew(alice, **BACKGROUND).status_code == 200
    clock[0] += 61
    response = renew(alice, **BACKGROUND)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert alice.get("/").status_code == 302  # signed out for every page now


def test_anything_the_reviewer_does_counts(
    alice: Any, clock: list[float], settings: Any
) -> None:
    clock[0] += settings.SESSION_COOKIE_AGE - 1
    assert renew(alice).status_code == 200  # a renewal after a keystroke
    clock[0] += settings.SESSION_COOKIE_AGE - 1
    assert alice.get("/").status_code == 200
    clock[0] += settings.SESSION_COOKIE_AGE - 1
    assert renew(alice, **BACKGROUND).status_code == 200
    clock[0] += 2
    assert alice.get("/").status_code == 302


def test_a_token_client_has_no_session_to_idle(
    hold: Any, reviewer: Any, token_client: Any, clock: list[float], settings: Any,  # noqa: F811
) -> None:
    trace = hold()
    api = token_client(reviewer)
    assert api.get(f"/api/v1/answers/{trace}").status_code == 200
    clock[0] += 10 * settings.SESSION_COOKIE_AGE
    assert api.get(f"/api/v1/answers/{trace}").status_code == 200
