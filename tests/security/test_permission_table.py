"""Every role against every route and method, from one table.

The table is data: (method, url template, {role: expected status or set of statuses}).
`test_the_table_covers_every_named_route` fails when a route is added without a row, and
`test_cell` is generated once per (row, role). A refusal (401/403) must leave a
"request denied" log record.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.security.conftest import FIGURES, World, api_client

ROLES = ("anonymous", "service", "reviewer", "hr_reviewer", "owner", "other_owner", "admin",
         "deactivated")
USERNAME = {"reviewer": "alice", "hr_reviewer": "hana", "owner": "olivia",
            "other_owner": "oscar", "admin": "ada", "deactivated": "dora"}

LOGIN = 302  # a page that needs a signed-in person sends anyone else to the login page
UNAUTH = 401  # API without valid credentials
DENIED = 403
HIDDEN = 404  # exists, but the caller may not know that

# Shorthands for rows: everyone outside the signed-in people is sent to sign in (HTML) or
# refused (API).
OUT_HTML = {"anonymous": LOGIN, "service": LOGIN, "deactivated": LOGIN}
OUT_API = {"anonymous": UNAUTH, "deactivated": UNAUTH}


def people(status: Any, **overrides: Any) -> dict[str, Any]:
    """The same status for every signed-in person, with overrides."""
    base = {r: status for r in ROLES if r not in ("anonymous", "service", "deactivated")}
    base.update(overrides)
    return base


def reviewer_page(ok: Any, *, hr: bool = False) -> dict[str, Any]:
    """Reviewer pages: reviewers and admins; owners are refused. An HR answer is hidden from
    everyone outside group hr, admins included (they audit it through the audit pages)."""
    row = {**OUT_HTML, **people(ok, owner=DENIED, other_owner=DENIED)}
    if hr:
        row.update(reviewer=HIDDEN, admin=HIDDEN)
    return row


def owner_page(ok: Any, *, involved_only: bool = True) -> dict[str, Any]:
    row = {**OUT_HTML, **people(ok, reviewer=DENIED, hr_reviewer=DENIED)}
    if involved_only:
        row["other_owner"] = HIDDEN
    return row


def admin_page(ok: Any, *, others: Any = DENIED) -> dict[str, Any]:
    return {**OUT_HTML, **people(others, admin=ok)}


def reviewer_api(ok: Any, *, hr: bool = False) -> dict[str, Any]:
    row = {**OUT_API, "service": DENIED, **people(ok, owner=DENIED, other_owner=DENIED)}
    if hr:
        row.update(reviewer=HIDDEN, admin=HIDDEN)
    return row


def service_api(ok: Any) -> dict[str, Any]:
    return {**OUT_API, "service": ok, **people(DENIED)}


ALL_200 = dict.fromkeys(ROLES, 200)

# (route name, method, url template, expectations). Templates are formatted with the World.
TABLE: list[tuple[str, str, str, dict[str, Any]]] = [
    # --- top level -------------------------------------------------------------------------
    ("healthz", "GET", "/healthz", ALL_200),
    # A revoked token is refused even where no credentials are needed.
    ("schema", "GET", "/api/schema/", {**ALL_200, "deactivated": UNAUTH}),
    ("api-docs", "GET", "/api/docs/", {**ALL_200, "deactivated": UNAUTH}),
    ("login", "GET", "/accounts/login/", ALL_200),
    ("login", "POST", "/accounts/login/", ALL_200),  # an empty form is shown again
    ("logout", "POST", "/accounts/logout/", dict.fromkeys(ROLES, 302)),  # to the sign-in page
    ("logout", "GET", "/accounts/logout/", ALL_200),  # the page with the "Sign out" button
    ("admin:index", "GET", "/admin/", {**dict.fromkeys(ROLES, 302), "admin": 200}),
    ("admin:login", "GET", "/admin/login/", {**ALL_200, "admin": 302}),
    # --- reviewer pages ----------------------------------------------------------------------
    # Where everyone lands after signing in: owners are sent on to their own page.
    ("reviews:queue", "GET", "/", {**reviewer_page(200), "owner": 302, "other_owner": 302}),
    ("reviews:next", "POST", "/next", reviewer_page(302)),
    ("reviews:set_language", "POST", "/language", dict.fromkeys(ROLES, 302)),
    # Owners read the item page (their inbox links to it), under the same readability check.
    ("reviews:item", "GET", "/answers/t-public/",
     {**reviewer_page(200), "owner": 200, "other_owner": 200}),
    ("reviews:item", "GET", "/answers/t-hr/",
     {**reviewer_page(200, hr=True), "owner": HIDDEN, "other_owner": HIDDEN}),
    ("reviews:item", "GET", "/answers/no-such/", {**OUT_HTML, **people(HIDDEN)}),
    ("reviews:claim", "POST", "/answers/t-public/claim", reviewer_page(302)),
    ("reviews:claim", "POST", "/answers/t-hr/claim", reviewer_page(302, hr=True)),
    ("reviews:release", "POST", "/answers/t-public/release", reviewer_page(302)),
    ("reviews:release", "POST", "/answers/t-hr/release", reviewer_page(302, hr=True)),
    # Renewal extends one's own lease only; nobody holds these items, so it is a conflict.
    ("reviews:renew", "POST", "/answers/t-public/renew", reviewer_page(409)),
    ("reviews:renew", "POST", "/answers/t-hr/renew", reviewer_page(409, hr=True)),
    # Leaving shortens one's own lease only: with no body it is refused, naming `until`.
    ("reviews:leave", "POST", "/answers/t-public/leave", reviewer_page(400)),
    ("reviews:leave", "POST", "/answers/t-hr/leave", reviewer_page(400, hr=True)),
    ("reviews:expanded", "POST", "/answers/t-public/expanded", reviewer_page(400)),
    ("reviews:expanded", "POST", "/answers/t-hr/expanded", reviewer_page(400, hr=True)),
    ("reviews:decide", "POST", "/answers/t-public/decide", reviewer_page(400)),
    ("reviews:decide", "POST", "/answers/t-hr/decide", reviewer_page(400, hr=True)),
    # An empty note: the page comes back with the error (and the note kept).
    ("reviews:send-to-owner", "POST", "/answers/t-public/send-to-owner", reviewer_page(400)),
    ("reviews:send-to-owner", "POST", "/answers/t-hr/send-to-owner",
     reviewer_page(400, hr=True)),
    # Owners reply to a question they were asked; none was asked here, so everyone, olivia
    # who owns the sources included, is refused as not asked.
    ("reviews:owner-reply", "POST", "/answers/t-public/owner-reply",
     {**OUT_HTML, **people(DENIED)}),
    ("reviews:owner-reply", "POST", "/answers/t-hr/owner-reply",
     {**OUT_HTML, **people(DENIED, owner=HIDDEN, other_owner=HIDDEN, admin=HIDDEN)}),
    ("reviews:reevaluate", "POST", "/answers/t-public/reevaluate", reviewer_page(302)),
    ("reviews:reevaluate", "POST", "/answers/t-hr/reevaluate", reviewer_page(302, hr=True)),
    # --- owner pages -------------------------------------------------------------------------
    ("sources:inbox", "GET", "/owner/", owner_page(200, involved_only=False)),
    ("sources:facts", "GET", "/owner/facts/", owner_page(200, involved_only=False)),
    ("sources:progress", "GET", "/owner/progress?documents=pricing",
     owner_page(200, involved_only=False)),
    ("sources:conflict", "GET", "/owner/conflicts/{conflict_id}/", owner_page(200)),
    ("sources:conflict", "GET", "/owner/conflicts/{hr_conflict_id}/", owner_page(200)),
    ("sources:conflict-dismiss", "POST", "/owner/conflicts/{conflict_id}/dismiss",
     owner_page(400)),
    ("sources:conflict-reopen", "POST", "/owner/conflicts/{conflict_id}/reopen",
     owner_page(302)),
    ("sources:document", "GET", "/owner/documents/pricing/", owner_page(200)),
    ("sources:document", "GET", "/owner/documents/hr-handbook/", owner_page(200)),
    ("sources:document-publish", "POST", "/owner/documents/pricing/publish", owner_page(400)),
    ("sources:document-end-validity", "POST", "/owner/documents/pricing/end-validity",
     owner_page(400)),
    # Without the id typed to confirm: the page again, with the error at the field.
    ("sources:document-withdraw", "POST", "/owner/documents/pricing/withdraw",
     owner_page(400)),
    # Not withdrawn: nothing to undo, and back to its page.
    ("sources:document-restore", "POST", "/owner/documents/pricing/restore", owner_page(302)),
    # --- jobs, webhooks, audit, insight (admins) ---------------------------------------------
    ("jobs:list", "GET", "/jobs/", admin_page(200)),
    ("jobs:start", "POST", "/jobs/start", admin_page(400)),
    # Someone else's job is answered like a missing one.
    ("jobs:detail", "GET", "/jobs/{job_id}/", admin_page(200, others=HIDDEN)),
    ("jobs:progress", "GET", "/jobs/{job_id}/progress", admin_page(200, others=HIDDEN)),
    ("webhooks:list", "GET", "/webhooks/", admin_page(200)),
    ("webhooks:list", "POST", "/webhooks/", admin_page(400)),
    ("webhooks:detail", "GET", "/webhooks/{endpoint_id}/", admin_page(200)),
    ("webhooks:toggle", "POST", "/webhooks/{endpoint_id}/active", admin_page(302)),
    ("webhooks:resend", "POST", "/webhooks/{endpoint_id}/resend", admin_page(302)),
    ("audit:events", "GET", "/audit/", admin_page(200)),
    ("audit:export", "GET", "/audit/export.csv", admin_page(200)),
    ("audit:export", "GET", "/audit/export.jsonl", admin_page(200)),
    ("audit:timeline", "GET", "/audit/answers/t-hr/", admin_page(200)),
    ("audit:verify", "POST", "/audit/verify", admin_page(302)),
    ("audit:acknowledge", "POST", "/audit/alerts/999999/acknowledge", admin_page(HIDDEN)),
    ("insight:index", "GET", "/insight/", admin_page(200)),
    ("insight:prometheus", "GET", "/metrics", {**OUT_API, "service": DENIED, **people(
        DENIED, admin=200)}),
    # --- API ---------------------------------------------------------------------------------
    ("api:revision", "PUT", "/api/v1/documents/pricing/revisions/r2", service_api(400)),
    ("api:document", "GET", "/api/v1/documents/pricing", {**OUT_API, "service": 200,
                                                          **people(200)}),
    ("api:document", "GET", "/api/v1/documents/hr-handbook",
     {**OUT_API, "service": 200, **people(HIDDEN, hr_reviewer=200, owner=200, admin=200)}),
    ("api:document", "DELETE", "/api/v1/documents/pricing", service_api(200)),
    ("api:document-restore", "POST", "/api/v1/documents/pricing/restore", service_api(200)),
    ("api:answers", "POST", "/api/v1/answers", service_api(400)),
    ("api:answers-batch", "POST", "/api/v1/answers/batch", service_api(400)),
    ("api:answer", "GET", "/api/v1/answers/t-public", {**OUT_API, "service": 200,
                                                        **people(200)}),
    ("api:answer", "GET", "/api/v1/answers/t-hr",
     {**OUT_API, "service": 200, **people(HIDDEN, hr_reviewer=200, admin=200)}),
    ("api:queue", "GET", "/api/v1/queue", reviewer_api(200)),
    ("api:answer-claim", "POST", "/api/v1/answers/t-public/claim", reviewer_api(200)),
    ("api:answer-claim", "POST", "/api/v1/answers/t-hr/claim", reviewer_api(200, hr=True)),
    # Releasing a lease nobody holds answers 200 with `released: false`.
    ("api:answer-release", "POST", "/api/v1/answers/t-public/release", reviewer_api(200)),
    ("api:answer-release", "POST", "/api/v1/answers/t-hr/release", reviewer_api(200, hr=True)),
    ("api:answer-decisions", "POST", "/api/v1/answers/t-public/decisions", reviewer_api(400)),
    # An empty body is refused for its fields before the answer is looked up; neither status
    # says whether the answer exists.
    ("api:answer-decisions", "POST", "/api/v1/answers/t-hr/decisions",
     {**reviewer_api(400, hr=True), "reviewer": {400, 404}, "admin": {400, 404}}),
    ("api:jobs", "POST", "/api/v1/jobs", reviewer_api(400)),
    # Reviewers, services and admins, as the job was started; someone else's job is answered
    # as missing.
    ("api:job", "GET", "/api/v1/jobs/{job_id}", {**reviewer_api(HIDDEN), "service": HIDDEN,
                                                 "admin": 200}),
    ("api:metrics", "GET", "/api/v1/metrics", {**OUT_API, "service": DENIED,
                                               **people(DENIED, admin=200)}),
]

# Django's own admin site: staff only, checked by Django. Its index and login have rows; the
# generated model pages are checked in bulk by test_admin_site_is_for_staff_only.
EXEMPT_NAMESPACES = ("admin",)


def _named_routes() -> set[str]:
    names: set[str] = set()

    def walk(patterns: Any, prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                ns = f"{prefix}{p.namespace}:" if p.namespace else prefix
                walk(p.url_patterns, ns)
            elif isinstance(p, URLPattern) and p.name:
                names.add(prefix + p.name)

    walk(get_resolver().url_patterns, "")
    return names


def test_the_table_covers_every_named_route() -> None:
    covered = {row[0] for row in TABLE}
    missing = sorted(n for n in _named_routes() - covered
                     if not n.startswith(tuple(f"{ns}:" for ns in EXEMPT_NAMESPACES)))
    assert missing == []


def test_every_row_names_every_role() -> None:
    incomplete = [(r[1], r[2]) for r in TABLE if set(r[3]) != set(ROLES)]
    assert incomplete == []


CELLS = [(name, method, url, role, row[role])
         for (name, method, url, row) in TABLE for role in ROLES]
FIGURES["permission table cells"] = len(CELLS)


def _client(role: str, world: World) -> Any:
    from django.contrib.auth import get_user_model

    if role == "anonymous":
        return api_client()
    if role == "service":
        return api_client(world.tokens["rag-service"])
    client = api_client()
    user = get_user_model().objects.get(username=USERNAME[role])
    if role == "deactivated":
        # A session opened before the deactivation, and the token issued then.
        client.cookies["sessionid"] = world.deactivated_session
        client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens['dora']}")
        return client
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    ("name", "method", "url", "role", "expected"),
    CELLS,
    ids=[f"{m} {u} as {r}" for (_n, m, u, r, _e) in CELLS],
)
def test_cell(world: World, db: Any, caplog: pytest.LogCaptureFixture, name: str,
              method: str, url: str, role: str, expected: Any) -> None:
    client = _client(role, world)
    path = url.format(**vars(world))
    caplog.set_level(logging.WARNING)
    response = getattr(client, method.lower())(path)
    allowed = expected if isinstance(expected, set) else {expected}
    assert response.status_code in allowed, (
        f"{method} {path} as {role}: {response.status_code}, expected {sorted(allowed)}")
    if response.status_code in (401, 403):
        denied = [r for r in caplog.records if r.getMessage() == "request denied"]
        assert denied, f"{method} {path} as {role} was refused without a log record"


def test_admin_site_is_for_staff_only(world: World, db: Any) -> None:
    """Every list page of Django's admin: admins get it, everyone else is sent to sign in."""
    from django.urls import reverse

    changelists = sorted(n for n in _named_routes()
                         if n.startswith("admin:") and n.endswith("_changelist"))
    assert changelists
    for role in ROLES:
        client = _client(role, world)
        for name in changelists:
            status = client.get(reverse(name)).status_code
            assert status == (200 if role == "admin" else 302), (name, role, status)
    FIGURES["admin changelist checks"] += len(changelists) * len(ROLES)
