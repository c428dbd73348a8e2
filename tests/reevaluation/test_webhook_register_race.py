"""Two registrations of one address at the same moment (a double click on Register, two
admins) give one endpoint. Before, both passed the "already registered" check while the other
looked the address up, and every event then went out twice."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection

from reviewqueue.audit.services import Actor
from reviewqueue.errors import FieldError
from reviewqueue.webhooks import netguard
from reviewqueue.webhooks.models import WebhookEndpoint
from reviewqueue.webhooks.services import webhook_endpoint_register


@pytest.mark.django_db(transaction=True)
def test_one_address_registered_twice_at_once_gives_one_endpoint(
    admin_user: Any, monkeypatch: Any, settings: Any
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = ["127.0.0.1"]
    real = netguard.resolve_target
    both_checked = threading.Barrier(2, timeout=10)

    def slow_lookup(url: str, *args: Any, **kwargs: Any) -> Any:
        # The DNS lookup of the address takes a moment, as it does for a real host.
        both_checked.wait()
        time.sleep(0.2)
        return real(url, *args, **kwargs)

    monkeypatch.setattr(netguard, "resolve_target", slow_lookup)
    outcomes: list[Any] = []

    def register() -> None:
        try:
            outcomes.append(webhook_endpoint_register(
                url="http://127.0.0.1:9/in", user=admin_user,
                actor=Actor.of_user(admin_user)))
        except FieldError as exc:
            outcomes.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=register) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert WebhookEndpoint.objects.filter(url="http://127.0.0.1:9/in").count() == 1, outcomes
    [refused] = [o for o in outcomes if isinstance(o, FieldError)]
    assert refused.field == "url" and "already registered" in str(refused)
