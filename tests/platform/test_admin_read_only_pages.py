"""The admin's read-only pages, as an admin sees them: records shown with no Save button (a
form sent anyway changes nothing), the actions they do offer still work, and a list's help
reads as a sentence under the title, not as a heading."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.test import Client
from django.utils import timezone

from reviewqueue.jobs.models import DeadLetter
from reviewqueue.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db

ENDPOINTS = "/admin/webhooks/webhookendpoint/"
DELIVERIES = "/admin/webhooks/webhookdelivery/"
SAVE_BUTTONS = ('name="_save"', 'name="_continue"', 'name="_addanother"', 'name="_saveasnew"')


@pytest.fixture
def endpoint(admin_user: Any) -> WebhookEndpoint:
    return WebhookEndpoint.objects.create(url="https://hooks.example.com/rq", secret="s" * 32,
                                          description="Support desk", created_by=admin_user)


@pytest.fixture
def delivery(endpoint: WebhookEndpoint) -> WebhookDelivery:
    now = timezone.now()
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint, event_type="answer.status_changed", trace_id="t-1",
        payload={"trace_id": "t-1", "status": "approved"}, state=WebhookDelivery.State.FAILED,
        attempts=1, next_attempt_at=now, last_status_code=502, last_error="Bad gateway")
    WebhookAttempt.objects.create(delivery=delivery, number=1, started_at=now, duration_ms=120,
                                  status_code=502, error="Bad gateway")
    return delivery


def offers_no_save(page: str) -> bool:
    return not any(button in page for button in SAVE_BUTTONS)


def test_an_endpoint_page_shows_the_endpoint_with_no_save_button(
    admin_client: Client, endpoint: WebhookEndpoint
) -> None:
    response = admin_client.get(f"{ENDPOINTS}{endpoint.pk}/change/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "https://hooks.example.com/rq" in page and "Support desk" in page
    assert offers_no_save(page)
    assert endpoint.secret not in page


def test_a_form_sent_to_an_endpoint_page_changes_nothing(
    admin_client: Client, endpoint: WebhookEndpoint
) -> None:
    response = admin_client.post(f"{ENDPOINTS}{endpoint.pk}/change/", {
        "url": "https://elsewhere.example.com/", "description": "Changed", "is_active": "",
        "_save": "Save"})
    assert response.status_code == 403
    endpoint.refresh_from_db()
    assert (endpoint.url, endpoint.description, endpoint.is_active) == (
        "https://hooks.example.com/rq", "Support desk", True)
    assert not LogEntry.objects.exists()  # no "Changed nothing" line in its history either


def test_an_admin_still_switches_an_endpoint_off_from_the_list(
    admin_client: Client, endpoint: WebhookEndpoint
) -> None:
    response = admin_client.post(ENDPOINTS, {"action": "disable_selected",
                                             "_selected_action": [endpoint.pk]})
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.is_active is False
    listing = admin_client.get(ENDPOINTS).content.decode()
    assert "Enable the selected endpoints" in listing


def test_a_reviewer_gets_no_endpoint_page(client: Client, reviewer: Any,
                                          endpoint: WebhookEndpoint) -> None:
    client.force_login(reviewer)
    response = client.get(f"{ENDPOINTS}{endpoint.pk}/change/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_a_delivery_page_shows_its_attempts_with_no_save_button(
    admin_client: Client, delivery: WebhookDelivery
) -> None:
    response = admin_client.get(f"{DELIVERIES}{delivery.pk}/change/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Bad gateway" in page and "502" in page
    assert offers_no_save(page)
    assert 'name="attempt_log-0-error"' not in page  # the attempts are shown, not fields


def test_a_form_sent_to_a_delivery_page_changes_nothing(
    admin_client: Client, delivery: WebhookDelivery
) -> None:
    attempt = delivery.attempt_log.get()
    response = admin_client.post(f"{DELIVERIES}{delivery.pk}/change/", {
        "state": "delivered", "attempt_log-TOTAL_FORMS": "1", "attempt_log-INITIAL_FORMS": "1",
        "attempt_log-0-id": str(attempt.pk), "attempt_log-0-delivery": str(delivery.pk),
        "attempt_log-0-error": "Edited", "attempt_log-0-status_code": "200", "_save": "Save"})
    assert response.status_code == 403
    delivery.refresh_from_db()
    attempt.refresh_from_db()
    assert delivery.state == WebhookDelivery.State.FAILED
    assert (attempt.status_code, attempt.error) == (502, "Bad gateway")


def test_a_dead_letter_page_offers_no_save_button_though_it_can_be_retried(
    admin_client: Client
) -> None:
    letter = DeadLetter.objects.create(task_name="jobs.fan_out_job", error_type="Timeout",
                                       failed_at=timezone.now())
    url = f"/admin/jobs/deadletter/{letter.pk}/change/"
    response = admin_client.get(url)
    assert response.status_code == 200
    assert offers_no_save(response.content.decode())
    assert admin_client.post(url, {"_save": "Save"}).status_code == 403
    assert not LogEntry.objects.exists()


def test_a_lists_help_reads_as_a_sentence_under_the_title_not_a_heading(
    admin_client: Client
) -> None:
    response = admin_client.get("/admin/auth/user/")
    assert response.status_code == 200
    page = response.content.decode()
    help_text = re.search(r'<p class="help" data-list-help>(.*?)</p>', page, re.S)
    assert help_text is not None and "Roles and groups decide" in help_text.group(1)
    headings = " ".join(re.findall(r"<h[1-6][^>]*>(.*?)</h[1-6]>", page, re.S))
    assert "Roles and groups decide" not in headings
    title = re.search(r"<title>(.*?)</title>", page, re.S)
    assert title is not None and "Roles and groups" not in title.group(1)
