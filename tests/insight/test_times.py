"""Every time on the insight page is in the page's time zone, and says which."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_the_last_audit_verification_is_shown_in_the_pages_time_zone(
    admin_client: Client, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from reviewqueue.audit.models import VerificationRun

    settings.TIME_ZONE = "Asia/Tokyo"
    finished = dt.datetime(2026, 10, 6, 23, 30, tzinfo=dt.UTC)  # 08:30 on the 7th in Tokyo
    VerificationRun.objects.create(started_at=finished, finished_at=finished,
                                   trigger="command", ok=True)
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.get("/insight/")

    page = admin_client.get("/insight/").content.decode()

    operations = page.split("Audit chain")[1].split("</dd>")[0]
    assert "intact" in operations
    assert "2026-10-07 08:30 JST" in operations
    assert "2026-10-06T23:30" not in page
