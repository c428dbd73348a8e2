"""A refused or missing page is a page of the product, in the reader's language, with a way
back, never the framework's bare one."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("url", "status", "heading"), [
    ("/jobs/", 403, "This page is not for your role"),  # a reviewer at an admin page
    ("/answers/no-such-answer/", 404, "Nothing here"),
])
def test_a_refused_or_missing_page_says_so_and_leads_back(
    reviewer: Any, client: Any, url: str, status: int, heading: str
) -> None:
    client.force_login(reviewer)
    response = client.get(url)
    assert response.status_code == status
    page = response.content.decode()
    assert heading in page
    assert 'href="/">Go to your start page</a>' in page
    assert 'class="topbar' in page  # the product's own layout, with its menu


def test_an_api_address_that_does_not_exist_stays_json(service_api: Any) -> None:
    response = service_api.get("/api/v1/nowhere")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")


@pytest.mark.parametrize(("url", "page"), [
    ("/answers/t-1/decide", "/answers/t-1/"),
    ("/next", "/"),
    ("/owner/documents/pricing/publish", "/owner/documents/pricing/"),
    ("/audit/alerts/7/acknowledge", "/audit/"),  # /audit/alerts/7/ is no page: one more up
])
def test_an_address_that_only_takes_a_form_leads_to_the_forms_page(
    admin_user: Any, client: Any, url: str, page: str
) -> None:
    """As after signing in again when a session ended while a form was being sent."""
    client.force_login(admin_user)
    response = client.get(url)
    assert (response.status_code, response["Location"]) == (302, page)
    shown = [str(m) for m in response.wsgi_request._messages]
    assert shown == ["That address only takes a form sent from this page. If you had to sign "
                     "in again, what you sent was not saved: please send it again."]


def test_signing_in_again_after_a_lost_session_ends_on_the_item(
    reviewer: Any, client: Any
) -> None:
    response = client.post("/answers/t-1/decide", {"action": "approve"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    client.force_login(reviewer)
    response = client.get(response["Location"].split("next=")[1].replace("%2F", "/"))
    assert (response.status_code, response["Location"]) == (302, "/answers/t-1/")


def test_the_api_still_answers_405_to_a_wrong_method(service_api: Any) -> None:
    response = service_api.get("/api/v1/answers/batch")
    assert response.status_code == 405
    assert response["Content-Type"].startswith("application/json")


@pytest.mark.parametrize("url", ["/", "/answers/no-such-answer/", "/jobs/"])
def test_a_signed_in_users_pages_are_not_kept_by_the_browser(
    admin_user: Any, client: Any, url: str
) -> None:
    """Back after a decision must ask for the item again, not show it with its buttons."""
    client.force_login(admin_user)
    assert "no-store" in client.get(url)["Cache-Control"]



def test_a_form_refused_for_its_csrf_token_says_why_and_keeps_what_was_typed(
    reviewer: Any
) -> None:
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer)
    client.get("/")  # a CSRF cookie, which a form from before the last sign-in no longer fits
    response = client.post(
        "/answers/t-1/decide",
        {"csrfmiddlewaretoken": "x" * 64, "action": "reject", "verdict": "12",
         "comment": "The source says 30 days <b>now</b>."},
        HTTP_ORIGIN="http://testserver", HTTP_REFERER="http://testserver/answers/t-1/")
    assert response.status_code == 403
    page = response.content.decode()
    assert "The form was not sent" in page and 'class="topbar' in page
    assert "nothing was saved" in page
    # The comment, to copy, escaped; not the ids and choices around it.
    assert ">The source says 30 days &lt;b&gt;now&lt;/b&gt;.</textarea>" in page
    assert page.count("<textarea") == 1
    assert '<a href="http://testserver/answers/t-1/">Open the page again</a>' in page


def test_a_refused_form_from_another_site_gets_nothing_back(reviewer: Any) -> None:
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer)
    response = client.post("/answers/t-1/decide", {"comment": "Call 555 0100 now"},
                           HTTP_ORIGIN="https://elsewhere.example",
                           HTTP_REFERER="https://elsewhere.example/page")
    assert response.status_code == 403
    page = response.content.decode()
    assert "The form was not sent" in page
    assert "555 0100" not in page and "elsewhere.example" not in page


@pytest.mark.parametrize(("url", "sent"), [
    ("/accounts/login/", {"username": "alice", "password": "correct horse battery staple"}),
    ("/admin/auth/user/1/password/", {"password1": "a new pass phrase",
                                      "password2": "a new pass phrase"}),
    ("/admin/password_change/", {"old_password": "the old pass phrase",
                                 "new_password1": "a new pass phrase",
                                 "new_password2": "a new pass phrase"}),
    ("/webhooks/", {"url": "https://hooks.example/rq", "description": "Our ticket system",
                    "secret": "signing secret shared with them"}),
])
def test_a_form_refused_for_its_csrf_token_never_shows_a_password_or_secret(
    admin_user: Any, url: str, sent: dict[str, str]
) -> None:
    """A stale sign-in or password form would otherwise print the passphrase on the page."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    if url != "/accounts/login/":
        client.force_login(admin_user)
    client.get("/accounts/login/")  # a CSRF cookie the stale form no longer fits
    response = client.post(url, {"csrfmiddlewaretoken": "x" * 64, **sent},
                           HTTP_ORIGIN="http://testserver")
    assert response.status_code == 403
    page = response.content.decode()
    secrets = [value for name, value in sent.items() if "pass" in name or name == "secret"]
    assert not [s for s in secrets if s in page]
    assert "Passwords and secrets are never shown again: type them once more." in page
    if "description" in sent:  # the rest of the form is still there to copy
        assert ">Our ticket system</textarea>" in page


def test_a_form_refused_for_its_csrf_token_is_not_kept_by_the_browser_when_signed_out(
    reviewer: Any
) -> None:
    """The page holds what was typed: a shared computer's browser must not keep it either."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.get("/accounts/login/")
    response = client.post("/accounts/login/",
                           {"csrfmiddlewaretoken": "x" * 64, "username": "alice",
                            "password": "correct horse battery staple"},
                           HTTP_ORIGIN="http://testserver")
    assert response.status_code == 403
    assert "no-store" in response["Cache-Control"]
