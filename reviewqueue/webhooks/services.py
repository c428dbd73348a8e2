"""Writes for webhooks: register endpoints, record events, attempt deliveries."""

from __future__ import annotations

import http.client
import logging
import random
import secrets
import ssl
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from reviewqueue.audit.services import Actor, audit_chain_lock, audit_record
from reviewqueue.errors import FieldError, NotFound
from reviewqueue.instants import instant_text
from reviewqueue.prepared import prepared_cursor
from reviewqueue.webhooks import netguard, signing
from reviewqueue.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from reviewqueue.webhooks.selectors import resendable

log = logging.getLogger(__name__)

STATUS_CHANGED = "answer.status_changed"
USER_AGENT = "ReviewQueue-Webhooks/1"
_ERROR_CHARS = 200
# What the log says of an attempt whose worker vanished (its lease ran out with no outcome).
_VANISHED = "no outcome: the attempt stopped midway"
# The audit event of a resend lists at most this many of the events it sent again.
RESENT_LISTED = 100


def _url_for_audit(url: str) -> str:
    # Scheme, host and path only: a query string may carry a receiver's own token.
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


@dataclass(frozen=True)
class Registered:
    endpoint: WebhookEndpoint
    secret: str  # shown to the admin once


def _address(url: str) -> str:
    """The URL as every spelling of its address is stored: scheme and host in lower case
    (neither has a case), no default port, "/" for an empty path; the path and query as typed.
    So one address is one endpoint however it is written. A URL that does not parse is left
    to the URL check, which says what is wrong with it."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    if not parts.hostname or "@" in parts.netloc:
        return url
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    if port is not None and port != {"http": 80, "https": 443}.get(parts.scheme):
        host = f"{host}:{port}"
    return urlunsplit((parts.scheme, host, parts.path or "/", parts.query, parts.fragment))


def _refuse_twin(url: str) -> None:
    """A second endpoint on one address would get every event twice."""
    twin = WebhookEndpoint.objects.filter(url=url).order_by("pk").first()
    if twin is not None:
        raise FieldError("url", _(
            "this address is already registered (endpoint %(id)s, %(state)s): enable or "
            "disable that one rather than adding a copy") % {
            "id": twin.pk, "state": _("enabled") if twin.is_active else _("disabled")})


@transaction.atomic
def webhook_endpoint_register(*, url: str, description: str = "", secret: str = "",
                              user: Any, actor: Actor) -> Registered:
    """Register an endpoint after checking where its URL leads. A secret is generated unless
    one is given (at least 16 characters)."""
    url = _address(url.strip())
    if len(url) > 2000:
        raise FieldError("url", _("at most 2000 characters"))
    _refuse_twin(url)
    try:
        netguard.resolve_target(url)
    except (netguard.UnsafeUrl, netguard.ResolveTimeout) as exc:
        raise FieldError("url", str(exc)) from None
    secret = secret.strip()
    if secret and len(secret) < 16:
        raise FieldError("secret", _("use at least 16 characters, or leave it empty"))
    secret = secret or secrets.token_urlsafe(32)
    # Again under the chain's lock, held to the commit: a registration of the same address
    # made while this one looked it up (a double click, two admins) is seen, not copied.
    audit_chain_lock()
    _refuse_twin(url)
    endpoint = WebhookEndpoint.objects.create(
        url=url, secret=secret, description=description.strip()[:200],
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    audit_record(actor=actor, action="webhook.endpoint_registered",
                 object_type="webhook_endpoint", object_id=endpoint.pk,
                 after={"url": _url_for_audit(url), "active": True})
    return Registered(endpoint=endpoint, secret=secret)


@transaction.atomic
def webhook_endpoint_set_active(*, endpoint_id: int, active: bool, actor: Actor
                                ) -> WebhookEndpoint | None:
    """Disabling pauses an endpoint: no event is recorded for it meanwhile, and the deliveries
    still to be sent wait, in order, until it is enabled again (a receiver's maintenance loses
    nothing already recorded). Enabling sends them at once, an event past its retry window
    with one last try."""
    # The chain's lock before the endpoint's row: a status change holds the first while its
    # deliveries, at commit, check the second (see webhook_deliveries_resend).
    audit_chain_lock()
    endpoint = WebhookEndpoint.objects.select_for_update().filter(pk=endpoint_id).first()
    if endpoint is None or endpoint.is_active == active:
        return endpoint  # nothing to change, nothing to audit
    disabled_at = endpoint.disabled_at
    endpoint.is_active = active
    endpoint.disabled_at = None if active else timezone.now()
    endpoint.save(update_fields=["is_active", "disabled_at"])
    if active and disabled_at is not None:
        # Sent again while it was disabled: their new round starts now, not while they waited.
        WebhookDelivery.objects.filter(
            endpoint=endpoint, state=WebhookDelivery.State.PENDING, resent_at__gte=disabled_at,
        ).update(resent_at=timezone.now(), attempts_before_resend=F("attempts"))
    if active:
        # Due now, and a message queued before the pause was dropped by its worker.
        WebhookDelivery.objects.filter(endpoint=endpoint, state=WebhookDelivery.State.PENDING
                                       ).update(next_attempt_at=timezone.now(),
                                                dispatched_until=None)
        transaction.on_commit(lambda: _dispatch_waiting(endpoint_id))
    audit_record(actor=actor, action="webhook.endpoint_enabled" if active
                 else "webhook.endpoint_disabled", object_type="webhook_endpoint",
                 object_id=endpoint.pk, before={"active": not active}, after={"active": active})
    return endpoint


@transaction.atomic
def webhook_deliveries_resend(*, endpoint_id: int, actor: Actor,
                              delivery_id: int | None = None) -> int:
    """Send the endpoint's given-up deliveries again (only `delivery_id`'s, when given), each
    with a fresh round of attempts: the retry window and the attempt limit count from now.
    Those a newer event of their answer has superseded are left given up. Returns how many
    went back to the queue; an endpoint that is disabled keeps them until it is enabled."""
    # The chain's lock first, then the endpoint's row: a status change holds the chain's lock
    # until it commits, when its new deliveries check their endpoint's row (a deferred foreign
    # key). Taken the other way round, each would wait for the other.
    audit_chain_lock()
    endpoint = WebhookEndpoint.objects.select_for_update().filter(pk=endpoint_id).first()
    if endpoint is None:
        raise NotFound(f"no webhook endpoint {endpoint_id}")
    chosen = resendable(endpoint_id)
    if delivery_id is not None:
        chosen = chosen.filter(pk=delivery_id)
    # Locked as they are read: an attempt that outlived its lease and delivers one meanwhile
    # either commits first (its row, read again, is no longer given up) or finds it resent.
    ids = list(chosen.select_for_update(of=("self",)).order_by("pk")
               .values_list("pk", "event_id"))
    if not ids:
        return 0  # nothing changed, nothing to audit
    now = timezone.now()
    sent = WebhookDelivery.objects.filter(
        pk__in=[pk for pk, _ in ids], state=WebhookDelivery.State.FAILED,
    ).update(state=WebhookDelivery.State.PENDING, next_attempt_at=now, resent_at=now,
             attempts_before_resend=F("attempts"), dispatched_until=None, lease_until=None)
    if not sent:
        return 0
    # Which events, for the auditor: the first of them, when there are many.
    audit_record(actor=actor, action="webhook.deliveries_resent",
                 object_type="webhook_endpoint", object_id=endpoint.pk,
                 before={"state": WebhookDelivery.State.FAILED},
                 after={"state": WebhookDelivery.State.PENDING, "deliveries": sent,
                        "event_ids": [str(event) for _, event in ids[:RESENT_LISTED]]})
    if endpoint.is_active:
        transaction.on_commit(lambda: _dispatch_waiting(endpoint_id))
    return sent


def status_changed_payload(*, event_id: uuid.UUID, answer: Any, status: str,
                           verdict: Any, occurred_at: datetime) -> dict[str, Any]:
    """The event body: ids, status, when it changed, and the verdict's decision and reason.
    Never text."""
    return {
        "event_id": str(event_id),
        "type": STATUS_CHANGED,
        "trace_id": answer.trace_id,
        "status": status,
        "occurred_at": instant_text(occurred_at),
        "verdict": {"id": verdict.pk, "decision": verdict.decision, "reason": verdict.reason},
    }


def _active_endpoint_ids() -> list[int]:
    """Every answer that changes status asks this, so it is one plain prepared statement."""
    with prepared_cursor() as cursor:
        cursor.execute(f'SELECT id FROM "{WebhookEndpoint._meta.db_table}" WHERE is_active '
                       "ORDER BY id")
        return [pk for (pk,) in cursor.fetchall()]


def webhook_events_record(changes: list[tuple[Any, str, Any]]) -> list[int]:
    """Store one delivery per active endpoint for each (answer, status, verdict) change,
    inside the caller's transaction, with one read of the endpoints and one insert, and send
    them once it commits. Returns the delivery ids."""
    endpoint_ids = _active_endpoint_ids()
    if not endpoint_ids or not changes:
        return []
    now = timezone.now()
    dispatched_until = _dispatched_until(now)
    rows = []
    for answer, status, verdict in changes:
        event_id = uuid.uuid4()
        payload = status_changed_payload(event_id=event_id, answer=answer, status=status,
                                         verdict=verdict, occurred_at=now)
        rows += [
            WebhookDelivery(endpoint_id=endpoint_id, event_id=event_id,
                            event_type=STATUS_CHANGED, trace_id=answer.trace_id,
                            payload=payload, next_attempt_at=now,
                            dispatched_until=dispatched_until)
            for endpoint_id in endpoint_ids
        ]
    ids = [d.pk for d in WebhookDelivery.objects.bulk_create(rows)]

    def send() -> None:
        from reviewqueue.webhooks.tasks import deliver_webhook

        for sent, delivery_id in enumerate(ids):
            try:
                deliver_webhook.delay(delivery_id)
            except Exception as exc:
                # The change is committed; the minute sweep sends what is left. Stop at the
                # first failure: with the broker down every further try would wait out its
                # own connection retries, holding the request that committed for minutes.
                log.warning("webhooks not enqueued", extra={
                    "delivery": delivery_id, "not_enqueued": len(ids) - sent,
                    "error_type": type(exc).__name__})
                return

    transaction.on_commit(send)
    return ids


def _dispatch_waiting(endpoint_id: int) -> None:
    from reviewqueue.webhooks.tasks import dispatch_due

    try:
        dispatch_due.delay(endpoint_id)
    except Exception as exc:  # the minute sweep sends them
        log.warning("webhook sweep not enqueued", extra={
            "endpoint": endpoint_id, "error_type": type(exc).__name__})


def _lease() -> timedelta:
    """How long one attempt may take, from its claim to its outcome."""
    return timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS * 3 + 30)


def _dispatched_until(due: datetime) -> datetime | None:
    """Until when a message sent now for an attempt due at `due` counts as in the queue. None
    when tasks run inside the request (no broker): nothing waits in a queue, and the sweep is
    the only way to a later attempt."""
    return None if settings.CELERY_TASK_ALWAYS_EAGER else due + _lease()


def _older_still_to_send() -> Exists:
    """An older delivery of the same event stream (endpoint and answer) not yet done."""
    return Exists(WebhookDelivery.objects.filter(
        endpoint_id=OuterRef("endpoint_id"), trace_id=OuterRef("trace_id"),
        pk__lt=OuterRef("pk"),
        state__in=[WebhookDelivery.State.PENDING, WebhookDelivery.State.SENDING],
    ).exclude(trace_id=""))


def _endpoint_active() -> Exists:
    """The delivery's endpoint is enabled. A correlated EXISTS, not a join: Django turns an
    UPDATE filtered across a join into `id IN (SELECT ...)`, whose state check a second
    worker, waiting on the row, would not read again once the first one committed."""
    return Exists(WebhookEndpoint.objects.filter(pk=OuterRef("endpoint_id"), is_active=True))


def retry_delay(attempts: int) -> float:
    """Seconds before the next attempt after `attempts` failed ones: doubling from the base,
    capped, with +-20 % jitter so endpoints that failed together do not retry together."""
    base = settings.WEBHOOK_RETRY_BASE_SECONDS * (2 ** max(0, attempts - 1))
    delay = min(base, settings.WEBHOOK_RETRY_MAX_DELAY_SECONDS)
    return delay * random.uniform(0.8, 1.2)


_OUTCOME_FIELDS = ("state", "delivered_at", "next_attempt_at", "lease_until",
                   "dispatched_until", "last_status_code", "last_error")


@dataclass(frozen=True)
class AttemptResult:
    delivery: WebhookDelivery
    # Seconds until the next attempt, when the caller is to send its message with that
    # countdown; None when there is none, or when it is far enough off for the sweep to send.
    retry_in: float | None
    # Once this delivery is done: the next one for the same endpoint and answer, which waited
    # for it.
    next_in_line: int | None = None


def _claim(delivery_id: int, now: datetime) -> bool:
    """Take the delivery for one attempt: a conditional update, so of two workers holding the
    same message only one sends (the other finds it no longer pending). Not while an older
    event for the same endpoint and answer is still to be sent: it goes first. Not while the
    endpoint is disabled: the delivery waits until it is enabled again."""
    return bool(WebhookDelivery.objects.filter(
        ~_older_still_to_send(), _endpoint_active(),
        pk=delivery_id, state=WebhookDelivery.State.PENDING, next_attempt_at__lte=now,
    ).update(state=WebhookDelivery.State.SENDING, lease_until=now + _lease(),
             attempts=F("attempts") + 1))


def _next_in_line(delivery: WebhookDelivery) -> int | None:
    if not delivery.trace_id:
        return None
    return (WebhookDelivery.objects.filter(
        endpoint_id=delivery.endpoint_id, trace_id=delivery.trace_id, pk__gt=delivery.pk,
        state=WebhookDelivery.State.PENDING,
    ).order_by("pk").values_list("pk", flat=True).first())


def _send(delivery: WebhookDelivery) -> tuple[int | None, str]:
    endpoint = delivery.endpoint
    try:
        body = signing.canonical_body(delivery.payload)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            signing.EVENT_HEADER: delivery.event_type,
            signing.EVENT_ID_HEADER: str(delivery.event_id),
            signing.DELIVERY_HEADER: str(delivery.pk),
            **signing.signed_headers(endpoint.secret, body),
        }
        # One deadline for the whole attempt: the lookup spends from the same budget as the
        # connection, so a slow resolver cannot stretch the attempt past the timeout.
        deadline = time.monotonic() + settings.WEBHOOK_TIMEOUT_SECONDS
        target = netguard.resolve_target(endpoint.url, deadline=deadline)
        result = netguard.post(target, body, headers, netguard.remaining(deadline))
    except netguard.UnsafeUrl as exc:
        return None, f"refused: {exc}"[:_ERROR_CHARS]
    except netguard.ResolveTimeout as exc:
        return None, str(exc)
    except TimeoutError:
        return None, "timed out"
    except Exception as exc:
        # Network errors, and anything else (a soft time limit, a bug): an attempt that
        # escaped here would leave the delivery `sending`, freed by the sweep forever without
        # ever counting against WEBHOOK_MAX_ATTEMPTS.
        return None, attempt_failure(exc)
    if 200 <= result.status < 300:
        return result.status, ""
    if 300 <= result.status < 400:
        return result.status, "redirect not followed"
    return result.status, f"HTTP {result.status}"


# What a failed attempt records, by the kind of error, most specific first: never the
# exception's message, which may hold the URL and its query string.
_FAILURES: tuple[tuple[type[BaseException], str], ...] = (
    (ConnectionRefusedError, "connection refused: nothing listens at that address and port"),
    (http.client.RemoteDisconnected, "the endpoint closed the connection without a response"),
    (ConnectionResetError, "the endpoint reset the connection"),
    (BrokenPipeError, "the endpoint closed the connection before the body was sent"),
    (ssl.SSLCertVerificationError, "the endpoint's TLS certificate is not trusted"),
    (ssl.SSLError, "the TLS handshake failed"),
    (http.client.HTTPException, "the endpoint's reply is not HTTP"),
    (OSError, "network error"),
    (SoftTimeLimitExceeded, "the worker's time limit ran out during the attempt"),
)


def attempt_failure(exc: BaseException) -> str:
    """The admin's reading of a failed attempt: what went wrong, then the error's type."""
    said = next((text for kind, text in _FAILURES if isinstance(exc, kind)), "attempt failed")
    return f"{said} ({type(exc).__name__})"


def webhook_delivery_attempt(*, delivery_id: int) -> AttemptResult | None:
    """Make one attempt if the delivery is due. No transaction is held during the request.

    Returns None when there was nothing to do: delivered, given up, not due yet, or another
    worker is sending it.
    """
    started_at = timezone.now()
    if not _claim(delivery_id, started_at):
        return None
    delivery = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    clock = time.perf_counter()
    status_code, error = _send(delivery)
    elapsed_ms = int((time.perf_counter() - clock) * 1000)

    now = timezone.now()
    delivered = status_code is not None and not error
    retry_in: float | None = None
    with transaction.atomic():
        outcome = {"started_at": started_at, "duration_ms": elapsed_ms,
                   "status_code": status_code, "error": error}
        # Taken for lost by the sweep meanwhile, the attempt was logged with no outcome: it
        # has one after all.
        if not WebhookAttempt.objects.filter(delivery=delivery, number=delivery.attempts,
                                             status_code=None, error=_VANISHED
                                             ).update(**outcome):
            WebhookAttempt.objects.create(delivery=delivery, number=delivery.attempts,
                                          **outcome)
        delivery.last_status_code = status_code
        delivery.last_error = error
        delivery.lease_until = None
        if delivered:
            delivery.state = WebhookDelivery.State.DELIVERED
            delivery.delivered_at = now
        else:
            # The last try is at the end of the window, however the backoff falls. A delivery
            # sent again has a round of its own, from then.
            window_ends = (delivery.resent_at or delivery.created_at) + timedelta(
                seconds=settings.WEBHOOK_RETRY_WINDOW_SECONDS)
            round_attempts = delivery.attempts - delivery.attempts_before_resend
            next_at = min(now + timedelta(seconds=retry_delay(round_attempts)), window_ends)
            if round_attempts >= settings.WEBHOOK_MAX_ATTEMPTS or now >= window_ends:
                delivery.state = WebhookDelivery.State.FAILED
            else:
                delivery.state = WebhookDelivery.State.PENDING
                delivery.next_attempt_at = next_at
                delay = (next_at - now).total_seconds()
                # A short wait is the caller's countdown; Redis would hand a message with a
                # countdown beyond its visibility timeout to a second worker, so a long one is
                # left to the sweep.
                if delay <= settings.CELERY_VISIBILITY_TIMEOUT / 2:
                    retry_in = delay
                    delivery.dispatched_until = _dispatched_until(next_at)
                else:
                    delivery.dispatched_until = None
        # The attempt count is the claim's fencing token: if this attempt outlived its lease
        # and another worker claimed the delivery since, that worker's outcome is the one to
        # keep, and it schedules what follows.
        # An admin's resend since (of a delivery given up meanwhile) starts a round this
        # outcome knows nothing of: it is not written over it either.
        superseded = not WebhookDelivery.objects.filter(
            pk=delivery.pk, attempts=delivery.attempts, resent_at=delivery.resent_at,
        ).update(**{name: getattr(delivery, name) for name in _OUTCOME_FIELDS})
    log.info("webhook attempt", extra={
        "delivery": delivery.pk, "endpoint": delivery.endpoint_id, "attempt": delivery.attempts,
        "status_code": status_code, "error": error, "ms": elapsed_ms, "state": delivery.state,
        "superseded": superseded,
    })
    if superseded:
        delivery.refresh_from_db()
        return AttemptResult(delivery=delivery, retry_in=None)
    done = delivery.state != WebhookDelivery.State.PENDING
    return AttemptResult(delivery=delivery, retry_in=retry_in,
                         next_in_line=_next_in_line(delivery) if done else None)


def webhook_deliveries_due(*, limit: int = 500, endpoint_id: int | None = None) -> list[int]:
    """Free deliveries whose sender vanished mid-attempt, and take those due now for sending
    (of one endpoint, with `endpoint_id`): apart from those whose message is still in the
    queue, those waiting for an older event of their endpoint and answer, and those of a
    disabled endpoint. Each taken counts as in the queue from now on, so that the
    next sweep does not send it again while workers are behind.

    The vanished attempt counted (the claim counts it), so a delivery whose last allowed
    attempt vanished is given up rather than freed: a receiver that kills the worker on every
    attempt would otherwise be sent the event again every few minutes, forever."""
    now = timezone.now()
    with transaction.atomic():
        # Locked, so that of two sweeps one frees each and logs it once: the endpoint's page
        # lists the vanished attempt with the others, and says why one that was the last was
        # given up.
        vanished = list(WebhookDelivery.objects.filter(
            state=WebhookDelivery.State.SENDING, lease_until__lt=now,
        ).select_for_update(skip_locked=True).values_list("pk", "attempts", "lease_until"))
        WebhookAttempt.objects.bulk_create([
            WebhookAttempt(delivery_id=pk, number=attempts, started_at=lease_until - _lease(),
                           duration_ms=int(_lease().total_seconds() * 1000), error=_VANISHED)
            for pk, attempts, lease_until in vanished
        ])
        freed = WebhookDelivery.objects.filter(pk__in=[pk for pk, _, _ in vanished],
                                               state=WebhookDelivery.State.SENDING)
        freed.filter(
            attempts__gte=F("attempts_before_resend") + settings.WEBHOOK_MAX_ATTEMPTS
        ).update(
            state=WebhookDelivery.State.FAILED, lease_until=None, last_status_code=None,
            last_error=_VANISHED,
        )
        freed.update(state=WebhookDelivery.State.PENDING, next_attempt_at=now, lease_until=None,
                     dispatched_until=None)
    waiting = WebhookDelivery.objects.filter(
        Q(dispatched_until__isnull=True) | Q(dispatched_until__lte=now),
        ~_older_still_to_send(), _endpoint_active(),
        state=WebhookDelivery.State.PENDING, next_attempt_at__lte=now,
    )
    if endpoint_id is not None:
        waiting = waiting.filter(endpoint_id=endpoint_id)
    with transaction.atomic():
        due = list(
            waiting.select_for_update(skip_locked=True)
            .order_by("next_attempt_at").values_list("pk", flat=True)[:limit]
        )
        WebhookDelivery.objects.filter(pk__in=due).update(
            dispatched_until=_dispatched_until(now))
    return due
