"""No page or list a signed-in person can open counts a whole table.

A COUNT(*) over every held answer, every audit event or every verdict costs what the table
costs: fine with a hundred rows, seconds with millions. Counts that a page shows are capped
("1000+"): a COUNT over a subquery that ends in LIMIT is bounded; a COUNT straight over a table
(Django's paginator, `.count()` on a queryset) is not.

The pages are every GET row of the permission table (tests/security/test_permission_table.py)
that some signed-in person may open, each opened as every such person, plus the queue with
each filter and the admin's list pages. Each one's SQL is captured and checked.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.security import conftest as security
from tests.security.conftest import World, api_client
from tests.security.test_permission_table import ROLES, TABLE, USERNAME, _named_routes

# The security suite's module-scoped world (documents, held answers, conflicts, a job, a
# webhook), built once for this module too.
world = security.world

SIGNED_IN = tuple(r for r in ROLES if r in USERNAME and r != "deactivated")

# (url, roles that open it): every page and list a signed-in person gets with 200.
PAGES = sorted({
    (url, role)
    for (_name, method, url, row) in TABLE if method == "GET"
    for role in SIGNED_IN if row[role] == 200 or (isinstance(row[role], set) and 200 in row[role])
})
QUEUE_FILTERS = ["?reason=conflicting_sources", "?document=pricing", "?release=2026.10",
                 "?claim=unclaimed", "?claim=mine",
                 "?reason=conflicting_sources&document=pricing&release=2026.10&claim=unclaimed"]
PAGES += [(f"/{q}", "reviewer") for q in QUEUE_FILTERS]
PAGES += [(f"/api/v1/queue{q}", "reviewer") for q in QUEUE_FILTERS]

_STRING = re.compile(r"'(?:[^']|'')*'")
_COUNT = re.compile(r"\bcount\s*\(", re.I)
_WORD = re.compile(r"\b(select|from|limit)\b", re.I)


def unbounded_counts(sql: str) -> list[str]:
    """The COUNT(...)s in `sql` whose FROM is a table, or a subquery without its own LIMIT.

    A scalar subquery or a UNION part is judged on its own: the SELECT that holds the COUNT
    is found by parenthesis depth, then its FROM clause at the same depth.
    """
    text = _STRING.sub("''", sql)
    depth, depths = 0, []
    for ch in text:
        if ch == ")":
            depth -= 1
        depths.append(depth)
        if ch == "(":
            depth += 1
    found = []
    for match in _COUNT.finditer(text):
        level = depths[match.start()]
        bounded = False
        # The FROM of this SELECT: the next FROM at the same depth, before the group closes.
        for word in _WORD.finditer(text, match.end()):
            if depths[word.start()] < level:
                break
            if depths[word.start()] != level or word.group(1).lower() != "from":
                continue
            rest = text[word.end():].lstrip()
            if rest.startswith("("):
                start = len(text) - len(rest)
                inner = depths[start] + 1
                end = start + 1
                while end < len(text) and not (text[end] == ")" and depths[end] == inner - 1):
                    end += 1
                bounded = any(
                    depths[start + 1 + m.start()] == inner and m.group(1).lower() == "limit"
                    for m in _WORD.finditer(text[start + 1:end])
                )
            break
        if not bounded:
            found.append(sql[max(0, match.start() - 40):match.end() + 160])
    return found


def test_the_check_tells_bounded_counts_from_unbounded_ones() -> None:
    assert unbounded_counts('SELECT COUNT(*) AS "__count" FROM "audit_event"')
    assert unbounded_counts('SELECT COUNT(*) FROM (SELECT "a"."id" FROM "a" WHERE x IN '
                            "(SELECT id FROM b LIMIT 5)) subquery")
    assert not unbounded_counts("SELECT COUNT(*) FROM (SELECT id FROM a WHERE b = 'count(' "
                                "ORDER BY id LIMIT 1001) subquery")
    assert not unbounded_counts("SELECT 'r'::text, (SELECT count(*) FROM (SELECT id FROM a "
                                "WHERE NOT EXISTS(SELECT 1 FROM b LIMIT 1) LIMIT 1001) AS "
                                "limited) UNION ALL SELECT 's'::text, (SELECT count(*) FROM "
                                "(SELECT id FROM a LIMIT 1001) AS limited)")
    assert unbounded_counts("SELECT 'r'::text, (SELECT count(*) FROM (SELECT id FROM a "
                            "LIMIT 1001) AS limited) UNION ALL SELECT 's'::text, "
                            "(SELECT count(*) FROM a)")
    assert not unbounded_counts("SELECT id FROM a LIMIT 5")


def _signed_in(role: str) -> Any:
    from django.contrib.auth import get_user_model

    client = api_client()
    client.force_login(get_user_model().objects.get(username=USERNAME[role]))
    return client


def _check(client: Any, path: str, who: str) -> None:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
        if getattr(response, "streaming", False):
            b"".join(response.streaming_content)  # the export's queries run as it streams
    assert response.status_code == 200, f"GET {path} as {who}: {response.status_code}"
    unbounded = [q["sql"] for q in captured.captured_queries if unbounded_counts(q["sql"])]
    assert not unbounded, (
        f"GET {path} as {who} counts a whole table in {len(unbounded)} of "
        f"{len(captured.captured_queries)} queries:\n"
        + "\n".join(f"- {' '.join(sql.split())[:400]}" for sql in unbounded)
    )


def test_every_page_is_listed() -> None:
    """A new GET route needs a row in the permission table, which feeds PAGES."""
    assert PAGES
    assert {u for u, _r in PAGES} >= {"/", "/api/v1/queue", "/owner/", "/audit/", "/insight/"}


@pytest.mark.parametrize(("url", "role"), PAGES, ids=[f"{u} as {r}" for u, r in PAGES])
def test_the_page_counts_nothing_unbounded(world: World, db: Any, url: str, role: str) -> None:
    _check(_signed_in(role), url.format(**vars(world)), role)


ADMIN_LISTS = sorted(n for n in _named_routes() if n.startswith("admin:")
                     and n.endswith("_changelist"))


@pytest.mark.parametrize("name", ADMIN_LISTS)
def test_the_admin_list_counts_nothing_unbounded(world: World, db: Any, name: str) -> None:
    from django.urls import reverse

    _check(_signed_in("admin"), reverse(name), "admin")
