"""Hostile text on every page that shows it: no script runs, no markup is injected.

Answers, questions, passages, fact values, reviewer comments and document titles are filled
with an XSS corpus and rendered by headless Chromium on the queue, item, owner and audit
pages. The browser context bypasses the Content-Security-Policy on purpose: the CSP is a
second line, and this test checks the first one (escaping). Execution is detected by a dialog
handler and a window flag the payloads set; injection by looking for elements and attributes
no page of ours has (event handlers, inline scripts, javascript: links, srcdoc frames).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.security.conftest import FIGURES, PASSWORD, api_client, days

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

RUN = "top.__xss=(top.__xss||0)+1;alert(1)"
CORPUS = [
    f"<script>{RUN}</script>",
    f"<img src=x onerror=\"{RUN}\">",
    f"<svg onload=\"{RUN}\">",
    f"\"><script>{RUN}</script>",
    f"'><img src=x onerror='{RUN}'>",
    f"</textarea><script>{RUN}</script>",
    f"</title><script>{RUN}</script>",
    f"<a href=\"javascript:{RUN}\">click</a>",
    f"<iframe srcdoc=\"<script>{RUN}</script>\"></iframe>",
    f"<details open ontoggle=\"{RUN}\">x</details>",
    f"<body onload=\"{RUN}\">",
    f"[d1]<script>{RUN}</script>[d2]",
    f"</script><script>{RUN}</script>",
    f"\u2028</script><script>{RUN}</script>",
    f"<math><mtext><table><mglyph><style><img src=x onerror=\"{RUN}\">",
    f"<input autofocus onfocus=\"{RUN}\">",
    "{{ request.user.password }}{% debug %}",
]

# Pages that carry no free text of answers or documents (ids, counts and reasons only).
QUIET_PAGES = {"/jobs/", "/insight/", "/audit/"}

INJECTED = """() => {
  const hits = [];
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      if (a.name.startsWith('on')) hits.push(el.tagName + '[' + a.name + ']');
      if ((a.name === 'href' || a.name === 'src' || a.name === 'action')
          && a.value.trim().toLowerCase().startsWith('javascript:')) {
        hits.push(el.tagName + ' js url');
      }
    }
  }
  for (const s of document.querySelectorAll('script:not([src])')) {
    if (s.type !== 'application/json') hits.push('inline script');
  }
  for (const f of document.querySelectorAll('iframe')) hits.push('iframe');
  return hits;
}"""


@pytest.fixture
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _publish(service: Any, key: str, title: str, value: str, passage: str) -> None:
    body = {"title": title[:500], "url": "https://docs.example.test/x", "owner": "olivia",
            "updated_at": "2026-10-01T09:00:00Z", "allowed_principals": ["*"],
            "passages": [{"span": "p1", "text": passage}],
            "facts": [{"key": "trial_days", "value": value, "valid_from": days(-30),
                       "valid_until": days(60), "span": "p1"}],
            "note": passage[:5000]}
    response = service.put(f"/api/v1/documents/{key}/revisions/r1", body, format="json")
    assert response.status_code == 201, response.content


def _hostile_world() -> dict[str, Any]:
    from reviewqueue.accounts.models import Role
    from reviewqueue.accounts.services import token_issue, user_create_or_update
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.reviews.models import Answer
    from reviewqueue.sources.models import Conflict

    users = {}
    for name, role in [("alice", "reviewer"), ("olivia", "owner"), ("ada", "admin"),
                       ("rag-service", "service")]:
        users[name] = user_create_or_update(username=name, role=Role(role), groups=[],
                                            password=PASSWORD, actor=SYSTEM)
    service = api_client(token_issue(user=users["rag-service"], actor=SYSTEM))
    reviewer = api_client(token_issue(user=users["alice"], actor=SYSTEM))
    everything = " ".join(CORPUS)
    n = len(CORPUS)
    for i, payload in enumerate(CORPUS):
        _publish(service, f"doc-{i}", payload, payload, f"{payload} {everything}")
    trace_ids = []
    for i, payload in enumerate(CORPUS):
        trace_id = f"xss-{i}"
        body = {"trace_id": trace_id, "question": f"{payload} {everything}"[:20_000],
                "answer": f"{payload} [d1] {everything} [d2]", "asked_by": ["*"],
                "index_release": payload[:200],
                "retrieved": [{"cite": "d1", "document_id": f"doc-{i}", "revision": "r1",
                               "span": "p1"},
                              {"cite": "d2", "document_id": f"doc-{(i + 1) % n}",
                               "revision": "r1", "span": "p1"}],
                "claims": [{"key": "trial_days", "value": payload, "cite": "d1"}]}
        response = service.post("/api/v1/answers", body, format="json")
        assert response.status_code == 201 and response.json()["status"] == "held", \
            response.content
        trace_ids.append(trace_id)
    # Decisions with hostile comments: one rejected, one edited with hostile text.
    for trace_id, body in [
        ("xss-0", {"action": "reject", "reason": "other", "comment": everything[:2000]}),
        ("xss-1", {"action": "edit", "comment": everything[:2000],
                   "answer": f"{everything} [d1]",
                   "claims": [{"key": "trial_days", "value": CORPUS[1], "cite": "d1"}]}),
    ]:
        reviewer.post(f"/api/v1/answers/{trace_id}/claim")
        verdict = Answer.objects.get(trace_id=trace_id).current_verdict_id
        response = reviewer.post(f"/api/v1/answers/{trace_id}/decisions",
                                 {**body, "verdict": verdict}, format="json")
        assert response.status_code in (201, 400), response.content
    conflicts = list(Conflict.objects.values_list("pk", flat=True))
    return {"users": users, "trace_ids": trace_ids, "conflicts": conflicts, "n": n}


def _cookie_for(user: Any, live_server: Any) -> dict[str, Any]:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return {"name": "sessionid", "value": client.cookies["sessionid"].value,
            "url": live_server.url}


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_no_script_runs_on_pages_full_of_hostile_text(browser: Any, live_server: Any) -> None:
    assert os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE") == "true"
    world = _hostile_world()
    n = world["n"]
    pages = {
        "alice": ["/", "/?reason=conflicting_sources",
                  *(f"/answers/{t}/" for t in world["trace_ids"])],
        "olivia": ["/owner/", *(f"/owner/documents/doc-{i}/" for i in range(n)),
                   *(f"/owner/conflicts/{c}/" for c in world["conflicts"])],
        "ada": ["/audit/", "/jobs/", "/insight/",
                *(f"/audit/answers/{t}/" for t in world["trace_ids"][:4])],
    }
    dialogs: list[str] = []
    problems: list[str] = []
    visited = 0
    shown = 0
    quiet: list[str] = []
    for username, urls in pages.items():
        context = browser.new_context(bypass_csp=True)
        context.set_default_timeout(15_000)
        context.add_cookies([_cookie_for(world["users"][username], live_server)])
        page = context.new_page()
        page.on("dialog", lambda d, p=page: (dialogs.append(f"{p.url}: {d.message}"),
                                              d.dismiss()))
        for url in urls:
            response = page.goto(f"{live_server.url}{url}")
            assert response is not None and response.status == 200, (username, url,
                                                                      response and response.status)
            # Open everything that opens: cited passages, history, forms.
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
            page.wait_for_timeout(50)
            if page.evaluate("() => top.__xss || 0"):
                problems.append(f"{url} as {username}: script ran")
            # The hostile text is on the page, as text.
            if "<script>top.__xss" in page.inner_text("body"):
                shown += 1
            else:
                quiet.append(url)
            injected = page.evaluate(INJECTED)
            if injected:
                problems.append(f"{url} as {username}: injected {sorted(set(injected))}")
            visited += 1
        context.close()
    FIGURES["XSS corpus entries"] = len(CORPUS)
    FIGURES["XSS pages rendered"] = visited
    # Each entry sits in a title, a fact value, every passage, a question, an answer text, a
    # release name and (for two answers) a reviewer comment.
    FIGURES["XSS inputs rendered (entry x page)"] = visited * len(CORPUS)
    FIGURES["XSS pages showing the corpus as text"] = shown
    # Every page but the admins' overviews (no free text on them) shows some of it.
    # Timelines show comments and release names where an answer has them.
    assert {u for u in quiet if not u.startswith("/audit/answers/")} <= QUIET_PAGES, quiet
    assert "/audit/answers/xss-0/" not in quiet
    assert dialogs == []
    assert problems == [], json.dumps(problems, indent=1)
