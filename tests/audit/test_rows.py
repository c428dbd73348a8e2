"""The rows of the audit list are worked out once per page in the view, not by a template
include with url tags and filters per row: the page must stay exactly what that include drew,
escaping included, with the same links, and cost no query per row. Only the Change cell differs:
it reads as text now, not JSON (see test_change_column.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection, transaction
from django.template import engines
from django.test.utils import CaptureQueriesContext
from django.urls import NoReverseMatch, reverse

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor, audit_record
from reviewqueue.audit.views import _TimelineLinks
from reviewqueue.middleware import request_id_var

pytestmark = pytest.mark.django_db

# The row as the include `audit/_event_row.html` drew it (with intact=None, as the list
# passed it), kept here as the reference the list must still match, its Change cell aside.
REFERENCE_ROW = """{% load audit_tags %}
<tr{% if intact is False %} class="is-broken"{% endif %}>
  <td class="num"><a href="{% url 'audit:events' %}?before={{ event.seq|add:1 }}" title="Show the whole log from here, without the search">#{{ event.seq }}</a></td>
  <td class="nowrap">{{ event.created_at|date:"Y-m-d H:i:s" }}<span class="zone"> UTC</span></td>
  <td><span class="pill pill-{{ event.actor_type }}">{{ event.actor_type }}</span>{% with name=event.actor|actor_name %}{% if name %} <a href="{% url 'audit:events' %}?actor={{ event.actor|urlencode:':' }}" title="Show this actor&#x27;s events: {{ event.actor }}">{{ name }}</a>{% endif %}{% endwith %}</td>
  <td><code>{{ event.action }}</code></td>
  <td>{{ event.object_type }}:{% if event.object_type == "answer" %}<a href="{% url 'audit:timeline' event.object_id %}">{{ event.object_id }}</a>{% else %}{{ event.object_id }}{% endif %}</td>
  <td>{% if event.trace_id %}<a href="{% url 'audit:timeline' event.trace_id %}">{{ event.trace_id }}</a>{% endif %}{% if event.document_id %}<div class="muted">doc <a href="{% url 'audit:events' %}?document={{ event.document_id|urlencode }}">{{ event.document_id }}</a></div>{% endif %}</td>
  <td class="change">CHANGE</td>
  <td class="hash"><code class="hash-full" title="{{ event.hash }}">{{ event.hash }}</code>{% if intact is False %} <strong class="error">✗</strong>{% elif intact %} <span class="ok" title="Content matches its hash and links to the event before">✓</span>{% endif %}{% if event.request_id %}<div class="muted" title="request id">request {{ event.request_id|slice:":12" }}</div>{% endif %}</td>
</tr>
"""  # noqa: E501

HOSTILE = [
    "<script>alert(1)</script>",
    "\"><img src=x onerror=alert(1)>",
    "'><svg onload=alert(1)>",
    "a&b;c=d?e#f %41 %2F",
    "javascript:alert(1)",
    "ü ñ 中文 \u2028 tab\tnewline\nend",
    "{{ request.user.password }}{% debug %}",
    "~:@!$&'()*+,;=",
]


def _flat(html: str) -> str:
    return re.sub(r"\s+", " ", html).strip()


def _without_changes(html: str) -> str:
    return re.sub(r'<td class="change">.*?</td>', '<td class="change">CHANGE</td>', html,
                  flags=re.S)


def _record_in_request(request_id: str, **fields: Any) -> AuditEvent:
    """An event recorded while serving the request `request_id`, as the middleware names it."""
    token = request_id_var.set(request_id)
    try:
        with transaction.atomic():
            return audit_record(**fields)
    finally:
        request_id_var.reset(token)


def _hostile_events() -> list[AuditEvent]:
    events = []
    for i, text in enumerate(HOSTILE):
        # Every other one in a request, so that rows with and without a request id are drawn.
        events.append(_record_in_request(
            f"{i:04d}aaaabbbbccccdddd" if i % 2 else "",
            actor=Actor("user", f"user:{text}"), action=f"x.{text}",
            object_type="answer" if i % 2 else f"doc{text}", object_id=text,
            trace_id=text if i % 3 else "", document_id=text if i % 2 == 0 else "",
            before={"v": text} if i % 3 else None, after={text: [text, i]},
        ))
    return events


def test_each_row_is_what_the_include_drew_for_hostile_values(admin_client: Any) -> None:
    events = _hostile_events()
    page = admin_client.get("/audit/").content.decode()
    rows = _flat(_without_changes(page))
    reference = engines["django"].from_string(REFERENCE_ROW)
    for event in events:
        event.refresh_from_db()
        row = _flat(reference.render({"event": event, "intact": None}))
        assert row in rows, row
    assert "<script>alert(1)" not in page
    assert "<img src=x" not in page


def _text(html: str) -> str:
    """What a person reads of `html`: its text, tags left out, blanks collapsed."""
    return _flat(re.sub(r"<[^>]+>", " ", html))


def test_a_rows_request_id_is_named_beside_its_hash(admin_client: Any) -> None:
    # Beside the hash, a bare id would read as the hash of the event before.
    event = _record_in_request("5f0c2e9a41b7d3e86a0f4c21", actor=Actor("user", "user:alice"),
                               action="lease.claimed", object_type="answer", object_id="t-1",
                               trace_id="t-1", after={"holder": "alice"})
    page = admin_client.get("/audit/").content.decode()
    cell = re.search(r'<td class="hash">(.*?)</td>', page, re.S)
    assert cell is not None
    # Whole, to compare with an anchor kept outside or to copy (the page cuts it short).
    assert _text(cell.group(1)) == f"{event.hash} request 5f0c2e9a41b7"


def test_the_latest_events_hash_is_shown_whole(admin_client: Any) -> None:
    event = _record_in_request("", actor=Actor("user", "user:alice"), action="lease.claimed",
                               object_type="answer", object_id="t-1", trace_id="t-1")
    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert f"Latest event #{event.seq}, hash <code>{event.hash}</code>" in page


@pytest.mark.parametrize("trace_id", [*(t for t in HOSTILE if "/" not in t), "t-1",
                                      "tr-00000001-abcdef", "%", "?#", "..", "%2F"])
def test_timeline_links_are_those_reverse_gives(trace_id: str) -> None:
    assert _TimelineLinks()(trace_id) == reverse("audit:timeline", args=[trace_id])


@pytest.mark.parametrize("trace_id", ["", "a/b", "/", HOSTILE[0]])
def test_a_trace_id_the_route_refuses_is_refused_as_before(trace_id: str) -> None:
    with pytest.raises(NoReverseMatch):
        reverse("audit:timeline", args=[trace_id])
    with pytest.raises(NoReverseMatch):
        _TimelineLinks()(trace_id)


def test_the_list_costs_no_query_per_row(admin_client: Any) -> None:
    def record(n: int) -> None:
        for i in range(n):
            with transaction.atomic():
                audit_record(actor=Actor("user", "user:alice"), action="lease.claimed",
                             object_type="answer", object_id=f"t-{i}", trace_id=f"t-{i}",
                             document_id=f"doc-{i}", before={"a": i}, after={"b": i})

    record(3)
    admin_client.get("/audit/")  # warm the session and anything cached once
    with CaptureQueriesContext(connection) as few:
        assert admin_client.get("/audit/").status_code == 200
    record(60)
    with CaptureQueriesContext(connection) as many:
        response = admin_client.get("/audit/")
    assert response.content.decode().count('<td class="num">') == 50
    assert len(many) == len(few), [q["sql"] for q in many.captured_queries]


@pytest.mark.parametrize("column", ["object_id", "trace_id"])
def test_the_log_shows_an_edited_event_whose_answer_id_no_address_can_hold(
    admin_client: Any, column: str
) -> None:
    """The verification links to the event it found edited: that page gave a 500 (no
    timeline address holds a "/"), the one page meant to show the tampering."""
    from tests.audit.conftest import tampering

    with transaction.atomic():
        event = audit_record(actor=Actor("user", "user:alice"), action="lease.claimed",
                             object_type="answer", object_id="t-1", trace_id="t-1")
    with tampering() as cursor:
        cursor.execute(f"UPDATE audit_auditevent SET {column} = %s WHERE seq = %s",
                       ["t-1/../<b>x</b>", event.seq])

    response = admin_client.get(f"/audit/?before={event.seq + 1}")

    assert response.status_code == 200
    page = response.content.decode()
    assert f">#{event.seq}</a></td>" in page
    assert "t-1/../&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
