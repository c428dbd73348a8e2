"""The insight page speaks to people: reason labels instead of the gate's codes, chart titles
and age buckets through gettext. The JSON API and /metrics keep codes and English labels."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from tests.insight.conftest import Builder
from tests.insight.test_endpoints import RANGE, _computed

pytestmark = pytest.mark.django_db

EN = {"HTTP_ACCEPT_LANGUAGE": "en"}


def _page(client: Client, capture: Any, query: str = RANGE) -> str:
    return str(_computed(client, f"/insight/?{query}", capture, **EN).content.decode())


def _visible(html: str) -> str:
    """The page without tag attributes (a title may keep the code for whoever hovers)."""
    return re.sub(r"<[^>]*>", " ", html)


def test_the_page_names_reasons_by_their_labels(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    page = _page(admin_client, django_capture_on_commit_callbacks)
    visible = _visible(page)
    assert "Conflicting sources" in visible
    assert "conflicting_sources" not in visible
    assert "CONFLICTING_SOURCES" not in page
    matrix = page.split('data-testid="release-matrix"')[1].split("</table>")[0]
    assert '<th scope="row" title="conflicting_sources">Conflicting sources</th>' in matrix
    assert "Reason held" in matrix


def test_the_chart_titles_and_age_buckets_are_words(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    page = _page(admin_client, django_capture_on_commit_callbacks)
    for text in ("Hold rate per day", "Review queue by age", "1 to 24 hours", "under 1 hour",
                 "Share of answers held, by primary reason",
                 "Hold rate per index release, with 95% interval",
                 "False-pass estimate from audit samples, with 95% Wilson interval"):
        assert text in page, text


def test_a_long_window_is_titled_per_week(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    page = _page(admin_client, django_capture_on_commit_callbacks,
                 "since=2026-01-01&until=2026-10-07")
    assert "Hold rate per week" in page


def test_the_window_form_is_labelled(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    page = _page(admin_client, django_capture_on_commit_callbacks)
    assert "From <input" in page and "To <input" in page
    assert '<option value="" selected>automatic</option>' in page


def test_the_api_keeps_codes_and_english_labels(
    admin_user: Any, token_client: Any, scenario: Builder,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client = token_client(admin_user)
    body = json.loads(_computed(client, f"/api/v1/metrics?{RANGE}",
                                django_capture_on_commit_callbacks,
                                HTTP_ACCEPT_LANGUAGE="ja").content)
    assert {r["reason"] for r in body["gate"]["by_reason"]} >= {"conflicting_sources"}
    assert [b["age"] for b in body["backlog"]["by_age"]] == [
        "under 1 hour", "1 to 24 hours", "1 to 7 days", "over 7 days"]
