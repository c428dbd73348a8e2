"""Filtering and ordering parameters come from an allowlist; anything else is a 400.

Each list page and list API is called by someone allowed to read it, with parameters that
peers' list views have followed into other tables (`__` lookups, ordering on a password),
and with one it knows (which must still work).
"""

from __future__ import annotations

import html
from typing import Any

import pytest

from tests.security.conftest import FIGURES, World, api_client

HOSTILE = [
    "owner__password__startswith=pbkdf2",
    "ordering=-owner__password",
    "order_by=password",
    "o=-pk",
    "sort=created_at",
    "document__allowed_principals__contains=*",
    "page_size=100000",
    "format=json",
]

# (who, list url, a known parameter that must still be accepted)
LISTS = [
    ("alice", "/", "reason=conflicting_sources"),
    ("alice", "/api/v1/queue", "reason=conflicting_sources"),
    ("olivia", "/owner/", ""),
    ("olivia", "/owner/progress", "documents=pricing"),
    ("ada", "/jobs/", ""),
    ("ada", "/webhooks/", ""),
    ("ada", "/audit/", "action=answer.ingested"),
    ("ada", "/audit/export.csv", "action=answer.ingested"),
    ("ada", "/audit/export.jsonl", "action=answer.ingested"),
    ("ada", "/insight/", "bucket=week"),
    ("ada", "/api/v1/metrics", "bucket=week"),
]

CASES = [(who, url, param) for who, url, _known in LISTS for param in HOSTILE]
FIGURES["allowlist checks (list x hostile parameter)"] = len(CASES)


def _signed_in(world: World, who: str) -> Any:
    client = api_client()
    client.force_login(world.users[who])
    return client


def _case(who: str, url: str, param: str) -> Any:
    return pytest.param(who, url, param, id=f"GET {url}?{param} as {who}")


@pytest.mark.parametrize(("who", "url", "param"), [_case(*c) for c in CASES])
def test_an_unknown_parameter_is_refused(world: World, db: Any, who: str, url: str,
                                         param: str) -> None:
    response = _signed_in(world, who).get(f"{url}?{param}")
    assert response.status_code == 400


@pytest.mark.parametrize(("who", "url", "known"), [pytest.param(*c, id=f"GET {c[1]}?{c[2]}")
                                                   for c in LISTS])
def test_a_known_parameter_is_accepted(world: World, db: Any, who: str, url: str,
                                       known: str) -> None:
    response = _signed_in(world, who).get(f"{url}?{known}" if known else url)
    assert response.status_code == 200


@pytest.mark.parametrize(("who", "url"), [("alice", "/"), ("olivia", "/owner/progress"),
                                         ("ada", "/jobs/"), ("ada", "/webhooks/")])
def test_a_page_names_the_parameter_it_does_not_take_and_links_to_itself_without_it(
    world: World, db: Any, who: str, url: str
) -> None:
    known = {"/": "reason=conflicting_sources", "/owner/progress": "documents=pricing"}.get(url)
    query = "<script>x</script>=1&o=-pk" + (f"&{known}" if known else "")
    response = _signed_in(world, who).get(f"{url}?{query}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert "<code>&lt;script&gt;x&lt;/script&gt;</code>: not a search parameter" in body
    assert "<code>o</code>: not a search parameter" in body
    assert "<script>x" not in body
    without = url + (f"?{known}" if known else "")
    assert f'href="{without}" data-without' in body
    assert _signed_in(world, who).get(without).status_code == 200


# A NUL character cannot be stored or compared by PostgreSQL: each is refused up front.
NUL_CASES = [
    ("alice", "GET", "/answers/a%00b/", None),
    ("alice", "GET", "/?document=a%00b", None),
    ("alice", "GET", "/?release=a%00b", None),
    ("alice", "POST", "/answers/t-1/send-to-owner", {"note": "a\x00b"}),
    ("alice", "GET", "/api/v1/answers/a%00b", None),
    ("olivia", "GET", "/owner/documents/a%00b/", None),
    ("olivia", "GET", "/owner/progress?documents=a%00b", None),
    ("ada", "GET", "/audit/answers/a%00b/", None),
    ("ada", "GET", "/admin/reviews/answer/?status=a%00b", None),
    ("ada", "POST", "/jobs/start", {"document_id": "a\x00b"}),
]


@pytest.mark.parametrize(("who", "method", "url", "form"),
                         [pytest.param(*c, id=f"{c[1]} {c[2]}") for c in NUL_CASES])
def test_a_nul_character_is_a_clear_400(world: World, db: Any, who: str, method: str, url: str,
                                        form: dict[str, str] | None) -> None:
    client = _signed_in(world, who)
    response = client.post(url, form) if method == "POST" else client.get(url)
    assert response.status_code == 400
    assert b"contains a NUL character" in response.content
    if url.startswith("/api/"):
        assert response.json()["errors"][0]["message"] == "contains a NUL character"
    assert_security_headers(response)


def assert_security_headers(response: Any) -> None:
    """A refusal that names what it refuses goes out with the headers any page has."""
    missing = [name for name in ("Content-Security-Policy", "X-Frame-Options",
                                 "X-Content-Type-Options", "Referrer-Policy")
               if not response.has_header(name)]
    assert missing == []


def test_a_huge_admin_page_number_is_not_an_error(world: World, db: Any) -> None:
    response = _signed_in(world, "ada").get("/admin/reviews/answer/?p=99999999999999999999")
    assert response.status_code in (200, 302)


@pytest.mark.parametrize("url", ["/audit/?until=9999-12-31", "/audit/export.csv?until=9999-12-31",
                                 "/insight/?since=9999-12-31", "/api/v1/metrics?until=0001-01-01"])
def test_a_day_past_what_a_window_can_hold_is_a_field_error(world: World, db: Any,
                                                            url: str) -> None:
    response = _signed_in(world, "ada").get(url)
    assert response.status_code == 400
    assert b"Give a day between 1970-01-01 and 2999-12-31." in response.content


@pytest.mark.parametrize("url", ["/audit/", "/insight/", "/jobs/"])
def test_a_refused_parameter_is_named_in_the_readers_language(world: World, db: Any,
                                                              url: str) -> None:
    response = _signed_in(world, "ada").get(f"{url}?x=1", HTTP_ACCEPT_LANGUAGE="ja")
    assert response.status_code == 400
    assert "x: 検索パラメータではありません" in html.unescape(response.content.decode()) \
        or "<code>x</code>: 検索パラメータではありません" in response.content.decode()


@pytest.mark.parametrize(("who", "url"), [
    ("alice", "/?document=%FF"),
    ("alice", "/api/v1/queue?document=%FF"),
    ("ada", "/api/v1/metrics?release=caf%E9"),  # "café" in latin-1
    ("ada", "/audit/?actor%FF=x"),
])
def test_a_query_parameter_that_is_not_utf8_is_a_clear_400(world: World, db: Any, who: str,
                                                           url: str) -> None:
    """Read as U+FFFD it would filter on a value nobody sent (and the metrics would compute a
    window for it)."""
    response = _signed_in(world, who).get(url)
    assert response.status_code == 400
    assert b"is not valid UTF-8" in response.content
    assert_security_headers(response)
    if url.startswith("/api/"):
        [error] = response.json()["errors"]
        assert error == {"field": url.split("?")[1].split("=")[0],
                         "message": "is not valid UTF-8"}


def test_a_query_in_utf8_however_written_is_read(world: World, db: Any) -> None:
    for url in ("/?document=caf%C3%A9", "/?document=%E6%96%99%E9%87%91", "/?document=a+b"):
        assert _signed_in(world, "alice").get(url).status_code == 200, url
