"""Signing out: a form sent with POST that lands on the product's sign-in page, saying so; its
address opened by itself (a bookmark) shows that form instead of signing anyone out."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_signing_out_lands_on_the_products_sign_in_page_saying_so(reviewer: Any) -> None:
    client = Client()
    client.force_login(reviewer)
    response = client.post("/accounts/logout/", follow=True)
    assert response.redirect_chain == [("/accounts/login/", 302)]
    page = response.content.decode()
    assert '<p class="message success">You are signed out.</p>' in page
    assert 'action="/accounts/login/"' in page
    # Not the Django admin's "Logged out" page, whose "Log in again" refuses all but admins.
    assert "Django administration" not in page and 'href="/admin/"' not in page
    assert client.get("/")["Location"].startswith("/accounts/login/")


def test_signing_out_lands_on_a_sign_in_page_in_the_language_read(reviewer: Any) -> None:
    client = Client()
    client.force_login(reviewer)
    client.post("/language", {"language": "ja", "next": "/"})
    page = client.post("/accounts/logout/", follow=True).content.decode()
    assert '<html lang="ja">' in page and 'action="/accounts/login/"' in page


def test_signing_out_of_the_admin_lands_on_the_products_sign_in_page(admin_user: Any) -> None:
    client = Client()
    client.force_login(admin_user)
    response = client.post("/admin/logout/")
    assert (response.status_code, response["Location"]) == (302, "/accounts/login/")


def test_opening_the_sign_out_address_shows_the_sign_out_button(reviewer: Any) -> None:
    client = Client()
    client.force_login(reviewer)
    response = client.get("/accounts/logout/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "You are signed in as alice." in page
    form = page[page.index('<section class="card narrow">'):]
    assert '<form method="post" action="/accounts/logout/">' in form
    assert 'name="csrfmiddlewaretoken"' in form
    assert "what you sent was not saved" not in page
    # Still signed in: only the form signs out.
    assert client.get("/").status_code == 200


def test_opening_the_sign_out_address_signed_out_leads_to_sign_in(client: Client) -> None:
    response = client.get("/accounts/logout/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "You are signed out." in page
    assert '<a href="/accounts/login/">Sign in</a>' in page
