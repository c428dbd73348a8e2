"""Drive Debian's headless Chromium against the live server, in a thread of its own.

Playwright's sync API refuses to start while another sync session is running in the same
thread (another test package may keep one open for the whole session); a fresh thread has no
event loop, so these tests work whatever ran before them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
TIMEOUT_MS = 20_000

T = TypeVar("T")


def session_cookie(user: Any, base_url: str) -> dict[str, Any]:
    """A signed-in session for `user`, as a cookie the browser can carry."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return {"name": settings.SESSION_COOKIE_NAME,
            "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": base_url}


def in_browser(cookie: dict[str, Any], steps: Callable[[Any], T]) -> T:
    """Run `steps(page)` in a fresh browser context signed in with `cookie`."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    outcome: dict[str, Any] = {}

    def run() -> None:
        from playwright.sync_api import sync_playwright

        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                                     args=CHROMIUM_ARGS)
                try:
                    context = browser.new_context(viewport={"width": 1440, "height": 900})
                    context.set_default_timeout(TIMEOUT_MS)
                    context.add_cookies([cookie])
                    outcome["value"] = steps(context.new_page())
                finally:
                    browser.close()
        except BaseException as exc:  # handed back to the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="playwright")
    thread.start()
    thread.join(timeout=120)
    if thread.is_alive():
        raise TimeoutError("the browser did not finish within 120 s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def screenshot_path(name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / name
