"""Sign-in throttling holds wherever a password can be tried, and counts each client."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-only"


@pytest.fixture(autouse=True)
def _low_limits(settings: Any) -> None:
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_FAILURE_ADDRESS_LIMIT = 3


def test_the_admin_sign_in_refuses_a_password_after_repeated_failures(
        client: Client, admin_user: Any) -> None:
    for _ in range(3):
        response = client.post("/admin/login/?next=/admin/",
                               {"username": "ada", "password": "wrong"})
        assert response.status_code == 200

    response = client.post("/admin/login/?next=/admin/", {"username": "ada", "password": PASSWORD})

    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert client.get("/admin/").status_code == 302  # still signed out


def test_failures_on_the_admin_sign_in_count_on_the_site_sign_in_too(
        client: Client, admin_user: Any) -> None:
    for _ in range(3):
        client.post("/admin/login/", {"username": "ada", "password": "wrong"})

    response = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})

    assert response.status_code == 429


def test_the_admin_sign_in_still_works_below_the_limit(client: Client, admin_user: Any) -> None:
    client.post("/admin/login/", {"username": "ada", "password": "wrong"})

    response = client.post("/admin/login/?next=/admin/", {"username": "ada", "password": PASSWORD})

    assert response.status_code == 302
    assert client.get("/admin/").status_code == 200


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_a_username_padded_with_spaces_counts_against_the_same_account(
        admin_user: Any, url: str) -> None:
    # Django's form strips the spaces and checks ada's password: the throttle counts ada too.
    # Each try from another address, so that only the account's limit can hold.
    padded = " " * 150 + "ada"
    for n in range(3):
        Client(REMOTE_ADDR=f"192.0.2.{n}").post(url, {"username": padded, "password": "wrong"})

    response = Client(REMOTE_ADDR="192.0.2.9").post(url, {"username": padded,
                                                          "password": PASSWORD})

    assert response.status_code == 429
    assert Client(REMOTE_ADDR="192.0.2.10").post(
        url, {"username": "ada", "password": PASSWORD}).status_code == 429


# --- Behind the TLS proxy every request comes from the proxy's address -------------------------

PROXY = "10.0.0.2"


def sign_in(client: Client, username: str, password: str, client_address: str) -> Any:
    return client.post("/accounts/login/", {"username": username, "password": password},
                       REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=client_address)


@pytest.fixture
def behind_proxy(settings: Any) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")


def test_behind_the_proxy_one_clients_failures_do_not_lock_everyone_out(
        client: Client, reviewer: Any, behind_proxy: None) -> None:
    for name in ("bob", "carol", "dave"):
        assert sign_in(client, name, "wrong", "203.0.113.7").status_code == 200

    response = sign_in(client, "alice", PASSWORD, "198.51.100.20")

    assert response.status_code == 302


def test_behind_the_proxy_a_client_that_keeps_failing_is_throttled(
        client: Client, reviewer: Any, behind_proxy: None) -> None:
    for name in ("bob", "carol", "dave"):
        sign_in(client, name, "wrong", "203.0.113.7")

    # An address the client wrote itself in front of the proxy's does not hide it.
    response = sign_in(client, "alice", PASSWORD, "192.0.2.1, 203.0.113.7")

    assert response.status_code == 429


def test_without_a_proxy_the_forwarded_header_is_not_trusted(
        client: Client, reviewer: Any) -> None:
    for number, name in enumerate(("bob", "carol", "dave")):
        client.post("/accounts/login/", {"username": name, "password": "wrong"},
                    HTTP_X_FORWARDED_FOR=f"192.0.2.{number}")

    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD},
                           HTTP_X_FORWARDED_FOR="198.51.100.20")

    assert response.status_code == 429


def test_a_throttled_sign_in_keeps_the_page_it_was_going_to(
        client: Client, reviewer: Any) -> None:
    for _ in range(3):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"})

    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD,
                                                "next": "/answers/t-1/"})

    assert response.status_code == 429
    assert '<input type="hidden" name="next" value="/answers/t-1/">' in response.content.decode()


def test_one_persons_failures_do_not_lock_out_others_at_the_same_address(
        client: Client, reviewer: Any, hr_reviewer: Any, settings: Any) -> None:
    settings.LOGIN_FAILURE_ADDRESS_LIMIT = 10
    for _ in range(4):
        client.post("/accounts/login/", {"username": "hana", "password": "wrong"})

    assert client.post("/accounts/login/",
                       {"username": "hana", "password": PASSWORD}).status_code == 429
    # A colleague behind the same address signs in.
    assert client.post("/accounts/login/",
                       {"username": "alice", "password": PASSWORD}).status_code == 302


def test_an_address_trying_many_accounts_is_refused_for_all_of_them(
        client: Client, reviewer: Any, settings: Any) -> None:
    settings.LOGIN_FAILURE_ADDRESS_LIMIT = 6
    for number in range(6):
        client.post("/accounts/login/", {"username": f"guess-{number}", "password": "wrong"})

    assert client.post("/accounts/login/",
                       {"username": "alice", "password": PASSWORD}).status_code == 429


@pytest.mark.parametrize("variant", ["alice ", " alice", "\uff41lice"])
def test_a_blocked_account_stays_blocked_however_its_name_is_spelt(
        client: Client, reviewer: Any, settings: Any, variant: str) -> None:
    """Django's form strips and NFKC-normalises the name before checking the password: a
    spelling it cleans to "alice" is alice's account, and counts against her limit."""
    settings.LOGIN_FAILURE_ADDRESS_LIMIT = 1000  # only the account's limit is under test
    for _ in range(3):
        assert client.post("/accounts/login/",
                           {"username": "alice", "password": "wrong"}).status_code == 200
    response = client.post("/accounts/login/", {"username": variant, "password": PASSWORD})
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert client.get("/").status_code == 302  # still signed out


def test_guesses_at_a_spaced_out_name_count_against_the_account(
        client: Client, reviewer: Any, settings: Any) -> None:
    settings.LOGIN_FAILURE_ADDRESS_LIMIT = 1000
    codes = [client.post("/admin/login/", {"username": "alice ", "password": f"guess-{i}"})
             .status_code for i in range(4)]
    assert codes == [200, 200, 200, 429]
    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 429
