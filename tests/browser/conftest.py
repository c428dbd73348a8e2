"""Headless Chromium (Debian's, never a downloaded one) driving the live server."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# The personas and held answers of the workspace tests, shared here.
from tests.reviews.conftest import bob, hold, sources  # noqa: F401

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PASSWORD = "pw-for-tests-only"
TIMEOUT_MS = 15_000



@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        # Fail, never skip: a missing browser must not pass as a green run.
        pytest.fail(f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in this thread; the ORM calls the tests
    # make themselves (fixtures, assertions) would be refused as "async unsafe". Only while the
    # browser runs: the variable must not leak into other tests (check --deploy refuses it).
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def sign_in(browser: Any, live_server: Any) -> Iterator[Callable[..., Any]]:
    """Open a fresh browser context and sign in through the login form."""
    contexts: list[Any] = []

    def do(username: str, *, locale: str = "en-US", lands: str = "/") -> Any:
        context = browser.new_context(viewport={"width": 1440, "height": 900}, locale=locale)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        # Console errors (a script refused by the CSP, a failed request) fail the test that
        # asks for them through `page.console_errors`.
        page.console_errors = []
        page.on("console", lambda message: message.type == "error"
                and page.console_errors.append(message.text))
        page.goto(f"{live_server.url}/accounts/login/?next=/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit].primary")
        page.wait_for_url(f"{live_server.url}{lands}")
        return page

    yield do
    for context in contexts:
        context.close()


# How a table is laid out where it should stay one: its first body row's display, its header
# cells (how many, all with a width, all on one line), whether that row's cells share a line,
# and how many of them draw a column name of their own (a card's data-label).
TABLE_LAYOUT_JS = """table => {
  const row = document.querySelector(table + ' tbody tr');
  const heads = [...document.querySelectorAll(table + ' thead th')];
  const tops = new Set(heads.map(th => Math.round(th.getBoundingClientRect().top)));
  const cells = [...row.cells].map(td => Math.round(td.getBoundingClientRect().top));
  return {row: getComputedStyle(row).display, heads: heads.length,
          headsShown: heads.every(th => th.getBoundingClientRect().width > 10),
          oneHeaderLine: tops.size === 1, oneRowLine: new Set(cells).size === 1,
          labels: [...row.cells].filter(
            td => getComputedStyle(td, '::before').content !== 'none').length};
}"""


def table_layout(page: Any, table: str) -> dict[str, Any]:
    return page.evaluate(TABLE_LAYOUT_JS, table)


def held_citing_retention(hold_answer: Any, publish: Any, claims: list[dict[str, Any]]) -> str:
    """A held answer that also cites a data retention policy as [d3], with `claims` as an
    edit would leave them (the gate's verdict is not what the layout tests measure)."""
    from django.db import connection, transaction

    from reviewqueue.reviews.models import Answer, RetrievedItem
    from tests.reviews.conftest import fact

    publish("retention", title="Data retention policy",
            facts=[fact("data_retention_days", 90)],
            passages=[{"span": "p1", "text": "Customer data is kept for 90 days."}])
    trace = hold_answer("t-long",
                        question="How long is customer data kept after the trial ends?")
    answer = Answer.objects.get(trace_id=trace)
    RetrievedItem.objects.create(answer=answer, cite="d3", document_key="retention",
                                 revision="r1", span="p1")
    version = answer.current_version
    version.claims = claims
    # Versions are append-only: set as a database owner could, the trigger off for this save.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        version.save(update_fields=["claims"])
        cursor.execute("SET LOCAL session_replication_role = origin")
    return trace
