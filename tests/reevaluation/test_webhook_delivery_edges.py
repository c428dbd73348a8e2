"""Webhooks: a receiver's check of a forged signature, and an attempt that never ends."""

from __future__ import annotations

import socket
import ssl
import threading
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from reviewqueue.webhooks import signing
from reviewqueue.webhooks.models import WebhookDelivery, WebhookEndpoint
from reviewqueue.webhooks.services import webhook_deliveries_due, webhook_delivery_attempt

SECRET = "a-test-secret-that-is-long-enough"


def test_a_signature_header_with_non_ascii_characters_does_not_verify() -> None:
    body = b'{"x":1}'
    headers = signing.signed_headers(SECRET, body)

    stamp = headers[signing.TIMESTAMP_HEADER]
    assert not signing.verify(SECRET, body, stamp, "sha256=\u00e9t\u00e9")
    assert signing.verify(SECRET, body, headers[signing.TIMESTAMP_HEADER],
                          headers[signing.SIGNATURE_HEADER])


def vanished_delivery(attempts: int) -> WebhookDelivery:
    """A delivery whose sender was killed mid-attempt (its lease ran out), after `attempts`."""
    endpoint = WebhookEndpoint.objects.create(url="http://127.0.0.1:9/hook", secret=SECRET)
    now = timezone.now()
    return WebhookDelivery.objects.create(
        endpoint=endpoint, event_type="answer.status_changed", payload={"x": 1},
        next_attempt_at=now - timedelta(minutes=5), state=WebhookDelivery.State.SENDING,
        attempts=attempts, lease_until=now - timedelta(seconds=1))


@pytest.mark.django_db
def test_a_delivery_whose_last_attempt_vanished_is_given_up(settings: Any) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    delivery = vanished_delivery(attempts=3)

    due = webhook_deliveries_due()

    delivery.refresh_from_db()
    assert delivery.pk not in due
    assert (delivery.state, delivery.attempts, delivery.lease_until) == ("failed", 3, None)
    assert delivery.last_error == "no outcome: the attempt stopped midway"
    assert webhook_delivery_attempt(delivery_id=delivery.pk) is None  # nothing sent again


@pytest.mark.django_db
def test_the_delivery_log_says_why_a_delivery_whose_last_attempt_vanished_was_given_up(
        admin_client: Any, settings: Any) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    delivery = vanished_delivery(attempts=1)
    webhook_deliveries_due()
    webhook_deliveries_due()  # the next sweep logs nothing twice

    page = admin_client.get(f"/webhooks/{delivery.endpoint_id}/").content.decode()

    assert "Given up" in page
    assert page.count("no outcome: the attempt stopped midway") == 1
    assert list(delivery.attempt_log.values_list("number", "status_code", "error")) == [
        (1, None, "no outcome: the attempt stopped midway")]


@pytest.mark.django_db
def test_an_earlier_attempt_that_vanished_is_in_the_delivery_log(settings: Any) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    delivery = vanished_delivery(attempts=2)

    webhook_deliveries_due()

    assert list(delivery.attempt_log.values_list("number", "error")) == [
        (2, "no outcome: the attempt stopped midway")]


@pytest.mark.django_db
def test_a_delivery_whose_earlier_attempt_vanished_is_tried_again(settings: Any) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    delivery = vanished_delivery(attempts=2)

    due = webhook_deliveries_due()

    delivery.refresh_from_db()
    assert due == [delivery.pk]
    assert (delivery.state, delivery.attempts) == ("pending", 2)


@pytest.mark.django_db
def test_the_delivery_log_dates_a_retry_due_on_another_day(admin_client: Any,
                                                           settings: Any) -> None:
    from datetime import UTC, datetime

    from reviewqueue.webhooks.models import WebhookAttempt

    settings.TIME_ZONE = "Asia/Tokyo"
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example.test/rq", secret=SECRET)
    failed_at = datetime(2026, 10, 6, 14, 50, tzinfo=UTC)  # 23:50 in Tokyo
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint, event_type="answer.status_changed", payload={"x": 1}, attempts=1,
        next_attempt_at=failed_at + timedelta(hours=6))
    WebhookAttempt.objects.create(delivery=delivery, number=1, started_at=failed_at,
                                  duration_ms=12, status_code=500, error="HTTP 500")

    page = admin_client.get(f"/webhooks/{endpoint.pk}/").content.decode()

    assert "(next 2026-10-07 05:50:00 JST)" in page
    assert "2026-10-06 23:50:00 JST · 500 · 12 ms · HTTP 500" in page


@pytest.mark.django_db
def test_with_the_broker_down_the_first_refused_send_leaves_the_rest_to_the_sweep(
        publish_doc: Any, ingest: Any, django_capture_on_commit_callbacks: Any) -> None:
    from unittest import mock

    for n in range(3):
        WebhookEndpoint.objects.create(url=f"https://hooks.example.test/{n}", secret=SECRET)
    publish_doc("pricing", "r1")
    with mock.patch("reviewqueue.webhooks.tasks.deliver_webhook.delay",
                    side_effect=ConnectionError("broker down")) as delay, \
            django_capture_on_commit_callbacks(execute=True):
        ingest("t-1")

    assert delay.call_count == 1
    assert sorted(webhook_deliveries_due()) == sorted(
        WebhookDelivery.objects.values_list("pk", flat=True))
    assert WebhookDelivery.objects.filter(state="pending").count() == 3


@pytest.mark.django_db
@pytest.mark.parametrize("url", [
    "http://[::ffff:0:a00:5]/hook",    # SIIT (IPv4-translated) form of 10.0.0.5
    "http://[::ffff:0:a9fe:a9fe]/",    # ... and of 169.254.169.254
])
def test_a_reserved_ipv6_form_of_an_inside_address_is_refused(url: str, settings: Any) -> None:
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.errors import FieldError
    from reviewqueue.webhooks.services import webhook_endpoint_register

    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = []
    with pytest.raises(FieldError, match="not a public internet address") as refused:
        webhook_endpoint_register(url=url, secret=SECRET, user=None, actor=SYSTEM)
    assert refused.value.field == "url"
    assert not WebhookEndpoint.objects.exists()


@pytest.fixture
def hangs_up() -> Any:
    """A TCP server on a free port that reads the request and closes without a reply."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


@pytest.mark.django_db
def test_an_endpoint_that_hangs_up_is_said_so_in_plain_words(hangs_up: int) -> None:
    endpoint = WebhookEndpoint.objects.create(url=f"http://127.0.0.1:{hangs_up}/hook?key=s3cret",
                                              secret=SECRET)
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint, event_type="answer.status_changed", payload={"x": 1},
        next_attempt_at=timezone.now())

    result = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert result is not None
    assert result.delivery.last_error == ("the endpoint closed the connection without a "
                                          "response (RemoteDisconnected)")
    assert "s3cret" not in result.delivery.last_error


@pytest.mark.parametrize(("error", "said"), [
    (ConnectionResetError(), "the endpoint reset the connection (ConnectionResetError)"),
    (ssl.SSLCertVerificationError("self-signed certificate in https://x/?k=1"),
     "the endpoint's TLS certificate is not trusted (SSLCertVerificationError)"),
    (OSError(101, "Network is unreachable"), "network error (OSError)"),
    (RuntimeError("a bug at https://x/?k=1"), "attempt failed (RuntimeError)"),
])
def test_a_failed_attempt_says_what_went_wrong_never_the_message(error: Exception,
                                                                  said: str) -> None:
    from reviewqueue.webhooks.services import attempt_failure

    assert attempt_failure(error) == said
