"""Webhooks in process: registration and its URL check, signed payloads, retries, the log."""

from __future__ import annotations

import html
import socket
import time
from typing import Any
from unittest import mock

import pytest

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import SYSTEM
from reviewqueue.errors import FieldError
from reviewqueue.webhooks import netguard, signing
from reviewqueue.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from reviewqueue.webhooks.services import (
    webhook_delivery_attempt,
    webhook_endpoint_register,
    webhook_endpoint_set_active,
)
from reviewqueue.webhooks.tasks import dispatch_due
from tests.reevaluation.conftest import Receiver

pytestmark = pytest.mark.django_db

SECRET = "a-test-secret-that-is-long-enough"


def register(url: str, secret: str = SECRET) -> WebhookEndpoint:
    return webhook_endpoint_register(url=url, secret=secret, user=None, actor=SYSTEM).endpoint


def run_until_delivered(receiver: Receiver, count: int, timeout: float = 10.0) -> None:
    """Eager mode: what beat's minute sweep does, as often as the short test backoff needs."""
    deadline = time.monotonic() + timeout
    while len(receiver.delivered()) < count and time.monotonic() < deadline:
        dispatch_due.delay()
        time.sleep(0.02)


@pytest.fixture
def fast_retries(settings: Any) -> None:
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0.01
    settings.WEBHOOK_RETRY_MAX_DELAY_SECONDS = 1


# --- The URL check -----------------------------------------------------------------------------

@pytest.mark.parametrize("url", [
    "http://127.0.0.1:9/hook",
    "http://localhost/hook",
    "http://10.1.2.3/hook",
    "http://192.168.0.10/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]/hook",
    "http://[fe80::1]/hook",
    "http://100.64.0.1/hook",
    "http://0.0.0.0/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://203.0.113.7:9/x",  # reserved for documentation: no host on the internet has it
])
def test_a_url_reaching_inside_the_network_is_refused(url: str, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = []
    with pytest.raises(netguard.UnsafeUrl, match="not a public internet address"):
        netguard.resolve_target(url)


@pytest.mark.parametrize("url", ["ftp://example.com/x", "http://user:pw@example.com/",
                                 "not a url", "http:///nohost"])
def test_a_url_that_is_not_plain_http_is_refused(url: str) -> None:
    with pytest.raises(netguard.UnsafeUrl):
        netguard.resolve_target(url)


def test_port_0_is_refused_not_taken_for_the_default_port(settings: Any) -> None:
    """No receiver listens on port 0: the URL is wrong, and was sent to port 80 instead."""
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = ["127.0.0.1"]
    with pytest.raises(netguard.UnsafeUrl, match="not a valid URL: port 0"):
        netguard.resolve_target("http://127.0.0.1:0/in")


def test_the_setting_lets_loopback_through(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = ["127.0.0.1"]
    target = netguard.resolve_target("http://127.0.0.1:8080/in?x=1")
    assert (target.address, target.port, target.path) == ("127.0.0.1", 8080, "/in?x=1")


def test_a_public_address_is_allowed(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = []
    with mock.patch("socket.getaddrinfo",
                    return_value=[(2, 1, 6, "", ("93.184.215.14", 443))]):
        target = netguard.resolve_target("https://hooks.example.com/rq")
    assert (target.host, target.address, target.scheme) == ("hooks.example.com",
                                                             "93.184.215.14", "https")


def test_a_host_resolving_to_any_private_address_is_refused(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = []
    answers = [(2, 1, 6, "", ("93.184.215.14", 443)), (2, 1, 6, "", ("10.0.0.5", 443))]
    with mock.patch("socket.getaddrinfo", return_value=answers), \
            pytest.raises(netguard.UnsafeUrl):
        netguard.resolve_target("https://rebinding.example.com/rq")


# --- Registration ------------------------------------------------------------------------------

def test_registering_an_endpoint_is_audited_without_its_secret(receiver: Receiver) -> None:
    endpoint = register(receiver.url + "?token=receiver-own")

    event = AuditEvent.objects.get(action="webhook.endpoint_registered")
    assert event.object_id == str(endpoint.pk)
    assert event.after["url"] == receiver.url
    assert SECRET not in str(event.after) and "receiver-own" not in str(event.after)


def test_registering_a_private_url_is_refused_naming_the_field(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = []
    with pytest.raises(FieldError) as refused:
        register("http://127.0.0.1:9/hook")
    assert refused.value.field == "url"
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize(("language", "signed"), [
    ("en", "hex HMAC-SHA256 of \"timestamp.body\", keyed with the endpoint's secret"),
    ("ja", "シークレットを鍵とする \"timestamp.body\" の HMAC-SHA256 (16 進)"),
])
def test_the_page_says_what_a_receiver_needs_to_check_a_delivery(
    admin_user: Any, client: Any, language: str, signed: str
) -> None:
    """As the README says it: every field of the body, and how the signature is made."""
    client.force_login(admin_user)
    page = html.unescape(client.get("/webhooks/", HTTP_ACCEPT_LANGUAGE=language)
                         .content.decode())
    assert "{event_id, type, trace_id, status, occurred_at, verdict}" in page
    assert signed in page


def test_a_generated_secret_is_returned_once(receiver: Receiver) -> None:
    registered = webhook_endpoint_register(url=receiver.url, user=None, actor=SYSTEM)
    assert len(registered.secret) >= 32
    assert registered.endpoint.secret == registered.secret


def test_an_admin_registers_an_endpoint_on_the_page_and_sees_the_secret_once(
    admin_user: Any, client: Any, receiver: Receiver
) -> None:
    client.force_login(admin_user)
    response = client.post("/webhooks/", {"url": receiver.url, "description": "CRM"},
                           follow=True)
    assert response.redirect_chain == [("/webhooks/", 302)]  # a reload registers nothing more
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.secret.encode() in response.content
    assert response["Cache-Control"] == "no-store"
    assert endpoint.secret.encode() not in client.get("/webhooks/").content
    assert WebhookEndpoint.objects.count() == 1


@pytest.mark.parametrize(("code", "language", "says"), [
    (socket.EAI_NONAME, "en", "The host 'hooks.example.test' does not resolve (no such name)"),
    (socket.EAI_AGAIN, "en", "The host 'hooks.example.test' does not resolve (the name servers "
                             "did not answer; it may work later)"),
    (socket.EAI_NONAME, "ja", "ホスト 'hooks.example.test' の名前を解決できません (該当する名前が"
                              "ありません)"),
])
def test_a_host_that_does_not_resolve_is_said_in_words_on_the_page(
    admin_user: Any, client: Any, code: int, language: str, says: str
) -> None:
    """The resolver's own message is English whatever the page's language: the common
    codes are said in the reader's words, and the field's error starts a sentence."""
    client.force_login(admin_user)
    client.cookies["django_language"] = language
    failure = socket.gaierror(code, "Name or service not known")
    with mock.patch("socket.getaddrinfo", side_effect=failure):
        response = client.post("/webhooks/", {"url": "https://hooks.example.test/in"})
    assert response.status_code == 400
    assert says in html.unescape(response.content.decode())
    assert "Name or service not known" not in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_an_address_already_registered_is_refused_naming_the_endpoint(
    admin_user: Any, client: Any, receiver: Receiver
) -> None:
    """Two endpoints on one address would get every event twice."""
    client.force_login(admin_user)
    client.post("/webhooks/", {"url": receiver.url, "description": "CRM"})
    endpoint = WebhookEndpoint.objects.get()
    response = client.post("/webhooks/", {"url": receiver.url, "description": "CRM"})
    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert (f"This address is already registered (endpoint {endpoint.pk}, enabled): enable or "
            "disable that one rather than adding a copy") in page
    assert WebhookEndpoint.objects.count() == 1


def test_a_refused_registration_does_not_print_the_secret_typed_back(
    admin_user: Any, client: Any
) -> None:
    """The secret is the receiver's: shown on a page, it can be read over a shoulder or kept
    in a screenshot, as a refused form's page never shows one (reviewqueue/denied.py)."""
    client.force_login(admin_user)
    failure = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    with mock.patch("socket.getaddrinfo", side_effect=failure):
        response = client.post("/webhooks/", {"url": "https://hooks.example.test/in",
                                              "description": "CRM",
                                              "secret": "the-receivers-own-secret-42"})
    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert "the-receivers-own-secret-42" not in page
    assert "Passwords and secrets are never shown again: type them once more." in page
    assert 'value="https://hooks.example.test/in"' in page  # the rest is kept
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize(("first", "second"), [
    ("http://localhost:{port}/hooks/reviewqueue", "http://LocalHost:{port}/hooks/reviewqueue"),
    ("http://localhost/hooks/reviewqueue", "http://localhost:80/hooks/reviewqueue"),
    ("https://localhost:443/hooks/reviewqueue", "https://localhost/hooks/reviewqueue"),
    ("http://localhost:{port}", "http://localhost:{port}/"),
])
def test_the_same_address_written_another_way_is_refused_as_already_registered(
    first: str, second: str, admin_user: Any, client: Any, receiver: Receiver
) -> None:
    """Host names and schemes have no case, and a default port or an empty path changes
    nothing: the receiver would get every event twice, one copy signed with a secret it does
    not hold."""
    port = receiver.url.rsplit(":", 1)[1].split("/")[0]
    client.force_login(admin_user)
    client.post("/webhooks/", {"url": first.format(port=port)})
    endpoint = WebhookEndpoint.objects.get()

    response = client.post("/webhooks/", {"url": second.format(port=port)})

    assert response.status_code == 400
    assert (f"This address is already registered (endpoint {endpoint.pk}, enabled)"
            in html.unescape(response.content.decode()))
    assert WebhookEndpoint.objects.count() == 1


def test_a_reviewer_cannot_open_the_webhooks_page(reviewer: Any, client: Any) -> None:
    client.force_login(reviewer)
    assert client.get("/webhooks/").status_code == 403


# --- Events and deliveries ----------------------------------------------------------------------

def test_a_status_change_posts_a_signed_event_without_any_text(
    receiver: Receiver, publish_doc: Any, ingest: Any, on_commit: Any
) -> None:
    from datetime import datetime

    from django.utils import timezone

    register(receiver.url)
    publish_doc("pricing", "r1")
    before = timezone.now()
    with on_commit():
        answer = ingest("t-1")

    [request] = receiver.delivered()
    body = request.json
    assert set(body) == {"event_id", "type", "trace_id", "status", "occurred_at", "verdict"}
    assert before <= datetime.fromisoformat(body["occurred_at"]) <= timezone.now()
    assert body["type"] == "answer.status_changed"
    assert (body["trace_id"], body["status"]) == ("t-1", "candidate")
    assert body["verdict"] == {"id": answer.current_verdict_id, "decision": "candidate",
                               "reason": "supported"}
    assert b"free trial" not in request.body
    assert signing.verify(SECRET, request.body, request.headers["X-ReviewQueue-Timestamp"],
                          request.headers["X-ReviewQueue-Signature"])
    assert request.headers["X-ReviewQueue-Event-Id"] == body["event_id"]


# What the README tells the developer of a receiver, word for word (its lines joined).
SIGNATURE_RECIPE = (
    "`X-ReviewQueue-Timestamp` holds the Unix time of the attempt in seconds, and "
    "`X-ReviewQueue-Signature` is `sha256=` followed by the lowercase hex HMAC-SHA256, keyed "
    "with the endpoint's secret (its UTF-8 bytes), of the timestamp, a `.` and the request "
    "body's bytes as received"
)


def test_a_receiver_verifies_a_delivery_the_way_the_readme_says(
    receiver: Receiver, publish_doc: Any, ingest: Any, on_commit: Any
) -> None:
    import hashlib
    import hmac
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert SIGNATURE_RECIPE in " ".join(readme.split())
    secret = "a-secret-with-a-non-ascii-letter-\u00e9"
    register(receiver.url, secret=secret)
    publish_doc("pricing", "r1")
    with on_commit():
        ingest("t-1")

    [request] = receiver.delivered()
    stamp = request.headers["X-ReviewQueue-Timestamp"]
    expected = hmac.new(secret.encode("utf-8"), stamp.encode() + b"." + request.body,
                        hashlib.sha256).hexdigest()
    assert request.headers["X-ReviewQueue-Signature"] == f"sha256={expected}"
    assert abs(time.time() - int(stamp)) < 300


def test_a_signature_made_with_another_secret_does_not_verify(
    receiver: Receiver, publish_doc: Any, ingest: Any, on_commit: Any
) -> None:
    register(receiver.url)
    publish_doc("pricing", "r1")
    with on_commit():
        ingest("t-1")
    [request] = receiver.delivered()
    stamp = request.headers["X-ReviewQueue-Timestamp"]
    assert not signing.verify("another-secret-entirely", request.body, stamp,
                              request.headers["X-ReviewQueue-Signature"])
    assert not signing.verify(SECRET, request.body + b" ", stamp,
                              request.headers["X-ReviewQueue-Signature"])


def test_an_old_timestamp_does_not_verify() -> None:
    body = b'{"x":1}'
    headers = signing.signed_headers(SECRET, body, timestamp=1_000_000)
    assert not signing.verify(SECRET, body, headers["X-ReviewQueue-Timestamp"],
                              headers["X-ReviewQueue-Signature"])


def test_a_receiver_answering_500_gets_the_event_again_until_it_takes_it(
    receiver: Receiver, publish_doc: Any, ingest: Any, on_commit: Any, fast_retries: None
) -> None:
    receiver.fail_first = 3
    register(receiver.url)
    publish_doc("pricing", "r1")
    with on_commit():
        ingest("t-1")

    run_until_delivered(receiver, 1)

    assert [r.status for r in receiver.requests] == [500, 500, 500, 200]
    assert len({r.json["event_id"] for r in receiver.requests}) == 1
    delivery = WebhookDelivery.objects.get()
    assert (delivery.state, delivery.attempts, delivery.last_status_code) == ("delivered", 4, 200)
    log = list(WebhookAttempt.objects.filter(delivery=delivery)
               .values_list("number", "status_code"))
    assert log == [(1, 500), (2, 500), (3, 500), (4, 200)]


def test_a_delivered_event_is_not_sent_again(receiver: Receiver, publish_doc: Any,
                                             ingest: Any, on_commit: Any) -> None:
    register(receiver.url)
    publish_doc("pricing", "r1")
    with on_commit():
        ingest("t-1")
    delivery = WebhookDelivery.objects.get()

    assert webhook_delivery_attempt(delivery_id=delivery.pk) is None
    dispatch_due.delay()
    assert len(receiver.requests) == 1


def test_delivery_gives_up_after_the_attempt_cap(
    receiver: Receiver, publish_doc: Any, ingest: Any, on_commit: Any, fast_retries: None,
    settings: Any
) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    receiver.fail_first = 100
    register(receiver.url)
    publish_doc("pricing", "r1")
    with on_commit():
        ingest("t-1")
    for _ in range(20):
        dispatch_due.delay()
        time.sleep(0.03)

    delivery = WebhookDelivery.objects.get()
    assert (delivery.state, delivery.attempts) == ("failed", 3)
    assert len(receiver.requests) == 3


def test_the_last_try_is_at_the_end_of_the_window_and_then_it_gives_up(
    receiver: Receiver, publish_doc: Any, ingest: Any, on_commit: Any, settings: Any
) -> None:
    """The backoff would next try after the window (120 s > 60 s): one last try comes at the
    window's end, not never."""
    from datetime import timedelta

    from django.utils import timezone

    settings.WEBHOOK_RETRY_WINDOW_SECONDS = 60
    settings.WEBHOOK_RETRY_BASE_SECONDS = 120
    receiver.fail_first = 100
    register(receiver.url)
    publish_doc("pricing", "r1")
    with on_commit():
        ingest("t-1")
    delivery = WebhookDelivery.objects.get()
    assert (delivery.state, delivery.attempts) == ("pending", 1)
    assert delivery.next_attempt_at == delivery.created_at + timedelta(seconds=60)

    with mock.patch("django.utils.timezone.now",
                    return_value=delivery.next_attempt_at + timedelta(milliseconds=1)):
        webhook_delivery_attempt(delivery_id=delivery.pk)

    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == ("failed", 2)
    assert len(receiver.requests) == 2
    assert timezone.now() < delivery.created_at + timedelta(seconds=60)


def test_an_unreachable_endpoint_is_retried_later(publish_doc: Any, ingest: Any,
                                                  on_commit: Any) -> None:
    register("http://127.0.0.1:9/nothing-listens-here")
    publish_doc("pricing", "r1")
    with on_commit():
        ingest("t-1")

    delivery = WebhookDelivery.objects.get()
    assert (delivery.state, delivery.attempts) == ("pending", 1)
    assert delivery.last_error == ("connection refused: nothing listens at that address and "
                                   "port (ConnectionRefusedError)")


def test_a_disabled_endpoint_gets_nothing(receiver: Receiver, publish_doc: Any, ingest: Any,
                                          on_commit: Any) -> None:
    endpoint = register(receiver.url)
    webhook_endpoint_set_active(endpoint_id=endpoint.pk, active=False, actor=SYSTEM)
    publish_doc("pricing", "r1")
    with on_commit():
        ingest("t-1")

    assert not WebhookDelivery.objects.exists()
    assert AuditEvent.objects.filter(action="webhook.endpoint_disabled").count() == 1


def test_a_paused_endpoint_keeps_its_waiting_events_and_gets_them_in_order_when_enabled(
    receiver: Receiver, publish_doc: Any, ingest: Any, on_commit: Any, client: Any,
    admin_user: Any,
) -> None:
    """The receiver was down, the admin disabled its endpoint for maintenance: the events
    recorded before wait (the sweep leaves them), and enabling it again sends them in order."""
    receiver.fail_first = 1
    endpoint = register(receiver.url)
    publish_doc("pricing", "r1")
    with on_commit():
        ingest("t-1")
    client.force_login(admin_user)
    client.post(f"/webhooks/{endpoint.pk}/active", {"active": "0"})
    with on_commit():
        ingest("t-2")  # while disabled: not recorded for it

    dispatch_due.delay()
    waiting = WebhookDelivery.objects.get()
    assert (waiting.state, waiting.attempts) == ("pending", 1)
    assert webhook_delivery_attempt(delivery_id=waiting.pk) is None
    page = client.get(f"/webhooks/{endpoint.pk}/").content.decode()
    assert "Disabled: events already recorded wait" in page and "(paused)" in page

    with on_commit():
        client.post(f"/webhooks/{endpoint.pk}/active", {"active": "1"})

    assert [r.status for r in receiver.requests] == [500, 200]
    assert receiver.requests[1].json["trace_id"] == "t-1"
    waiting.refresh_from_db()
    assert (waiting.state, waiting.attempts) == ("delivered", 2)


def test_a_sender_that_vanished_mid_attempt_is_freed_by_the_sweep(
    receiver: Receiver, publish_doc: Any, ingest: Any, on_commit: Any
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    register(receiver.url)
    publish_doc("pricing", "r1")
    with mock.patch("reviewqueue.webhooks.tasks.deliver_webhook.delay"), on_commit():
        ingest("t-1")
    delivery = WebhookDelivery.objects.get()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        state="sending", lease_until=timezone.now() - timedelta(seconds=1))

    dispatch_due.delay()

    assert [r.status for r in receiver.requests] == [200]


def test_the_delivery_log_pages_back_to_the_first_delivery(
    admin_user: Any, client: Any, receiver: Receiver
) -> None:
    """120 deliveries, 50 a page: every one is listed once, newest first, and an address that
    is not a page is refused naming its parameter."""
    import re

    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    endpoint = register(receiver.url)
    now = timezone.now()
    made = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(endpoint=endpoint, event_type="answer.status_changed",
                        trace_id=f"t-{i}", payload={}, next_attempt_at=now)
        for i in range(120))
    client.force_login(admin_user)
    seen: list[str] = []
    url = f"/webhooks/{endpoint.pk}/"
    pages = 0
    while url:
        with CaptureQueriesContext(connection) as queries:
            page = client.get(url).content.decode()
        # The same few queries on every page: 12 with the count of those to send again.
        assert len(queries) <= 12, [q["sql"][:100] for q in queries]
        pages += 1
        seen += re.findall(r'data-label="Answer">(t-\d+)</td>', page)
        older = re.search(r'href="\?before=(\d+)" data-older', page)
        url = f"/webhooks/{endpoint.pk}/?before={older.group(1)}" if older else ""
    assert pages == 3
    assert seen == [d.trace_id for d in sorted(made, key=lambda d: (d.created_at, d.pk),
                                               reverse=True)]
    refused = client.get(f"/webhooks/{endpoint.pk}/?before=x")
    assert refused.status_code == 400
    assert "not a delivery number" in refused.content.decode()
