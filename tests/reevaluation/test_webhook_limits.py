"""Webhook attempts stay within their limits: a time limit per request (the DNS lookup
included), every failure counted, a superseded attempt that cannot overwrite a newer one, and no
way inside the network."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.utils import timezone

from reviewqueue.audit.services import SYSTEM
from reviewqueue.errors import FieldError
from reviewqueue.webhooks import netguard
from reviewqueue.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from reviewqueue.webhooks.services import (
    webhook_deliveries_due,
    webhook_delivery_attempt,
    webhook_endpoint_register,
)
from tests.reevaluation.conftest import Receiver

pytestmark = pytest.mark.django_db

SECRET = "a-test-secret-that-is-long-enough"
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"


def pending_delivery(url: str) -> WebhookDelivery:
    endpoint = webhook_endpoint_register(url=url, secret=SECRET, user=None,
                                         actor=SYSTEM).endpoint
    return WebhookDelivery.objects.create(endpoint=endpoint, event_type="answer.status_changed",
                                          payload={"x": 1}, next_attempt_at=timezone.now())


@pytest.fixture
def dripping_receiver() -> Iterator[Any]:
    """`start(head)` starts a receiver that sends `head` at once, then one byte every 0.1 s of
    what follows it (the rest of RESPONSE, then an endless body) for up to 10 s."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve(head: bytes) -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        stream = RESPONSE[len(head):] + b"x" * 100
        try:
            conn.sendall(head)
            for byte in stream:
                time.sleep(0.1)
                conn.sendall(bytes([byte]))
        except OSError:
            pass  # the client hung up: what the fix is for
        conn.close()

    def start(head: bytes) -> str:
        threading.Thread(target=serve, args=(head,), daemon=True).start()
        return f"http://127.0.0.1:{server.getsockname()[1]}/hook"

    yield start
    server.close()


# --- One time limit per request -----------------------------------------------------------------

def test_a_receiver_dripping_its_status_line_times_out(settings: Any,
                                                       dripping_receiver: Any) -> None:
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.5
    delivery = pending_delivery(dripping_receiver(b""))

    result = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert result is not None
    assert (result.delivery.state, result.delivery.last_error) == ("pending", "timed out")
    assert result.delivery.attempt_log.get().duration_ms < 3000  # the drip lasts ~4 s


def test_a_receiver_dripping_its_body_is_not_waited_for(settings: Any,
                                                         dripping_receiver: Any) -> None:
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.5
    delivery = pending_delivery(dripping_receiver(RESPONSE))

    result = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert result is not None
    assert (result.delivery.state, result.delivery.last_status_code) == ("delivered", 200)
    assert result.delivery.attempt_log.get().duration_ms < 3000  # the drip lasts 10 s


def test_an_attempt_that_outlived_its_lease_does_not_overwrite_the_next_one() -> None:
    delivery = pending_delivery("http://127.0.0.1:9/hook")
    statuses = iter([500, 200])

    def post(*args: Any) -> netguard.PostResult:
        status = next(statuses)
        if status == 500:
            # While the first request hangs, its lease runs out, the sweep frees the delivery
            # and another worker delivers it.
            WebhookDelivery.objects.filter(pk=delivery.pk).update(
                lease_until=timezone.now() - timedelta(seconds=1))
            webhook_deliveries_due()
            webhook_delivery_attempt(delivery_id=delivery.pk)
        return netguard.PostResult(status=status)

    with mock.patch.object(netguard, "post", side_effect=post):
        first = webhook_delivery_attempt(delivery_id=delivery.pk)

    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts, delivery.last_status_code) == ("delivered", 2, 200)
    assert first is not None and first.retry_in is None
    assert list(delivery.attempt_log.order_by("number").values_list("number", "status_code")) \
        == [(1, 500), (2, 200)]


# --- The DNS lookup is inside the time limit ---------------------------------------------------

HOOK_HOST = "hooks.example.test"
DNS_TIMEOUT = r"DNS lookup timed out after [0-9.]+ s"


def delivery_to_named_host(url: str = f"http://{HOOK_HOST}/hook") -> WebhookDelivery:
    """A delivery to an endpoint registered while its host still resolved (stored directly,
    as registration would look the host up)."""
    endpoint = WebhookEndpoint.objects.create(url=url, secret=SECRET)
    return WebhookDelivery.objects.create(endpoint=endpoint, event_type="answer.status_changed",
                                          payload={"x": 1}, next_attempt_at=timezone.now())


@dataclass
class HangingResolver:
    release: threading.Event
    finished: threading.Event


@pytest.fixture
def hanging_resolver() -> Iterator[HangingResolver]:
    """socket.getaddrinfo blocks until the test ends; `finished` is set only once a lookup
    has come back, so a test can tell it stopped waiting while the lookup was still stuck."""
    resolver = HangingResolver(release=threading.Event(), finished=threading.Event())

    def getaddrinfo(*args: Any, **kwargs: Any) -> list[Any]:
        resolver.release.wait(30)
        resolver.finished.set()
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    with mock.patch("socket.getaddrinfo", side_effect=getaddrinfo):
        yield resolver
        # Unblock the lookup threads so they do not stay stuck for the rest of the session.
        resolver.release.set()


@pytest.mark.django_db(transaction=True)
def test_two_workers_claiming_one_delivery_at_once_take_it_once(settings: Any) -> None:
    """The second worker waits on the row the first one holds, then finds it no longer
    pending: one attempt, not two sends of the same event."""
    from django.db import connection, transaction

    from reviewqueue.webhooks.services import _claim

    delivery = pending_delivery("http://127.0.0.1:9/hook")
    now = timezone.now()
    first_holds = threading.Event()
    claims: dict[str, bool] = {}

    def first() -> None:
        with transaction.atomic():
            claims["first"] = _claim(delivery.pk, now)
            first_holds.set()
            time.sleep(0.5)  # the second worker's UPDATE waits on the row meanwhile
        connection.close()

    def second() -> None:
        first_holds.wait(5)
        claims["second"] = _claim(delivery.pk, now)
        connection.close()

    workers = [threading.Thread(target=first), threading.Thread(target=second)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(10)

    assert claims == {"first": True, "second": False}
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == ("sending", 1)


def test_a_hanging_dns_lookup_fails_the_attempt_at_the_deadline(
        settings: Any, hanging_resolver: HangingResolver) -> None:
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3
    delivery = delivery_to_named_host()

    result = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert not hanging_resolver.finished.is_set()  # it gave up without the resolver's answer
    assert result is not None
    assert (result.delivery.state, result.delivery.attempts) == ("pending", 1)
    assert re.fullmatch(DNS_TIMEOUT, result.delivery.last_error)
    attempt = result.delivery.attempt_log.get()
    assert (attempt.status_code, attempt.error) == (None, result.delivery.last_error)


def test_a_dns_timeout_on_the_last_attempt_gives_the_delivery_up(
        settings: Any, hanging_resolver: HangingResolver) -> None:
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    delivery = delivery_to_named_host()

    result = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert result is not None and result.retry_in is None
    assert result.delivery.state == "failed"
    assert re.fullmatch(DNS_TIMEOUT, result.delivery.last_error)


def test_registering_while_the_dns_lookup_hangs_is_refused_naming_the_field(
        settings: Any, hanging_resolver: HangingResolver) -> None:
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3

    with pytest.raises(FieldError) as refused:
        webhook_endpoint_register(url=f"https://{HOOK_HOST}/hook", secret=SECRET, user=None,
                                  actor=SYSTEM)

    assert not hanging_resolver.finished.is_set()
    assert refused.value.field == "url"
    assert re.fullmatch(DNS_TIMEOUT, refused.value.field_message)
    assert not WebhookEndpoint.objects.exists()


def test_a_failing_dns_lookup_is_recorded_with_the_resolvers_reason() -> None:
    delivery = delivery_to_named_host()
    failure = socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    with mock.patch("socket.getaddrinfo", side_effect=failure):
        result = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert result is not None
    assert (result.delivery.state, result.delivery.last_error) == (
        "pending",
        f"refused: the host '{HOOK_HOST}' does not resolve (the name servers did not "
        "answer; it may work later)")


def test_the_request_goes_to_the_address_the_lookup_checked_without_a_second_lookup(
        receiver: Receiver) -> None:
    port = urlsplit(receiver.url).port
    delivery = delivery_to_named_host(f"http://{HOOK_HOST}:{port}/hooks/reviewqueue")
    real_getaddrinfo = socket.getaddrinfo
    looked_up: list[str] = []

    def getaddrinfo(host: str, *args: Any, **kwargs: Any) -> Any:
        looked_up.append(host)
        if host == HOOK_HOST:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
        return real_getaddrinfo(host, *args, **kwargs)

    with mock.patch("socket.getaddrinfo", side_effect=getaddrinfo):
        result = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert result is not None and result.delivery.state == "delivered"
    assert [r.headers["Host"] for r in receiver.requests] == [f"{HOOK_HOST}:{port}"]
    assert looked_up.count(HOOK_HOST) == 1


def resolving(name: str, answers: list[tuple[Any, ...]]) -> Any:
    """A getaddrinfo that gives `answers` for `name` and looks every other name up for real
    (an address literal, as connecting to one does)."""
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: str, *args: Any, **kwargs: Any) -> Any:
        return answers if host == name else real_getaddrinfo(host, *args, **kwargs)

    return getaddrinfo


def test_a_host_whose_first_address_refuses_is_reached_at_its_next_one(
        settings: Any, receiver: Receiver) -> None:
    # "localhost" on most systems: ::1 first, while the receiver listens on 127.0.0.1 only.
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = [HOOK_HOST]
    port = urlsplit(receiver.url).port
    delivery = delivery_to_named_host(f"http://{HOOK_HOST}:{port}/hooks/reviewqueue")
    answers = [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", port, 0, 0)),
               (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    with mock.patch("socket.getaddrinfo", side_effect=resolving(HOOK_HOST, answers)):
        result = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert result is not None
    assert (result.delivery.state, result.delivery.last_error) == ("delivered", "")
    assert [r.headers["Host"] for r in receiver.requests] == [f"{HOOK_HOST}:{port}"]


def test_a_host_with_an_inside_address_among_its_answers_is_never_tried_at_any(
        settings: Any, receiver: Receiver) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = []
    port = urlsplit(receiver.url).port
    delivery = delivery_to_named_host(f"http://{HOOK_HOST}:{port}/hooks/reviewqueue")
    answers = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port)),
               (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    with mock.patch("socket.getaddrinfo", side_effect=resolving(HOOK_HOST, answers)):
        result = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert result is not None and result.delivery.state == "pending"
    assert "not a public internet address" in result.delivery.last_error
    assert receiver.requests == []


# --- Every failure is an attempt ----------------------------------------------------------------

def test_a_soft_time_limit_during_the_request_counts_as_a_failed_attempt() -> None:
    delivery = pending_delivery("http://127.0.0.1:9/hook")

    with mock.patch.object(netguard, "post", side_effect=SoftTimeLimitExceeded()):
        result = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert result is not None
    assert (result.delivery.state, result.delivery.attempts) == ("pending", 1)
    assert result.delivery.attempt_log.get().error == (
        "the worker's time limit ran out during the attempt (SoftTimeLimitExceeded)")


def test_an_unexpected_error_on_every_attempt_gives_up_at_the_attempt_cap(settings: Any) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    delivery = pending_delivery("http://127.0.0.1:9/hook")

    with mock.patch.object(netguard, "post", side_effect=RuntimeError("boom")):
        for _ in range(5):
            WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
            webhook_delivery_attempt(delivery_id=delivery.pk)

    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == ("failed", 3)
    assert WebhookAttempt.objects.filter(delivery=delivery).count() == 3
    assert delivery.pk not in webhook_deliveries_due()


def test_a_url_with_a_non_ascii_path_is_delivered_percent_encoded(receiver: Receiver) -> None:
    delivery = pending_delivery(receiver.url + "/caf\u00e9")

    result = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert result is not None and result.delivery.state == "delivered"
    assert netguard.resolve_target(receiver.url + "/caf\u00e9?q=\u00e9").path \
        == "/hooks/reviewqueue/caf%C3%A9?q=%C3%A9"


# --- IPv6 forms of inside addresses -----------------------------------------------------------

@pytest.mark.parametrize("url", [
    "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",  # NAT64 of 169.254.169.254
    "http://[64:ff9b::a00:5]/",                      # NAT64 of 10.0.0.5
    "http://[64:ff9b:1::a00:5]/",                    # local-use NAT64
    "http://[2002:a9fe:a9fe::1]/",                   # 6to4 of 169.254.169.254
    "http://[2002:7f00:1::1]/",                      # 6to4 of 127.0.0.1
    "http://[::7f00:1]/",                            # IPv4-compatible 127.0.0.1
    "http://[::a00:5]/",                             # IPv4-compatible 10.0.0.5
    "http://[fec0::1]/",                             # site-local
])
def test_an_ipv6_form_of_an_inside_address_is_refused(url: str, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = []
    with pytest.raises(netguard.UnsafeUrl, match="not a public internet address"):
        netguard.resolve_target(url)


def test_a_nat64_form_of_a_public_address_is_allowed(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = []
    target = netguard.resolve_target("http://[64:ff9b::5db8:d70e]/rq")  # 93.184.215.14
    assert target.address == "64:ff9b::5db8:d70e"


def test_a_refused_webhook_address_is_said_in_the_readers_language() -> None:
    from django.utils import translation

    from reviewqueue.webhooks import netguard

    with translation.override("ja"), pytest.raises(netguard.UnsafeUrl,
                                                   match="http と https の URL だけが使えます"):
        netguard.resolve_target("ftp://example.test/hook")
    with translation.override("en"), pytest.raises(netguard.UnsafeUrl,
                                                   match="only http and https URLs are allowed"):
        netguard.resolve_target("ftp://example.test/hook")
