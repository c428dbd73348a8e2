"""Admin pages of the audit log: search, per-answer timeline, exports and verification."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from reviewqueue.audit import selectors
from reviewqueue.audit.forms import FILTER_PARAMS, PAGE_PARAMS, AuditSearchForm
from reviewqueue.audit.models import VerificationRun
from reviewqueue.audit.permissions import admin_required
from reviewqueue.audit.services import Actor, audit_alert_acknowledge
from reviewqueue.params import unexpected_params

EXPORT_BATCH_ROWS = 500
# Cells a spreadsheet would run as a formula; such cells get a leading apostrophe in the CSV.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _bad_request(request: HttpRequest, form: AuditSearchForm | None,
                 problems: list[str]) -> HttpResponse:
    context = {"form": form or AuditSearchForm(), "problems": problems,
               "status": selectors.chain_status(), "page": None}
    return render(request, "audit/events.html", context, status=400)


@require_GET
@admin_required
def events(request: HttpRequest) -> HttpResponse:
    problems = unexpected_params(request.GET, FILTER_PARAMS | PAGE_PARAMS)
    if problems:
        return _bad_request(request, None, problems)
    form = AuditSearchForm(request.GET)
    if not form.is_valid():
        return _bad_request(request, form, [])
    page = selectors.event_page(form.event_filter(), before=form.cleaned_data["before"],
                                after=form.cleaned_data["after"])
    return render(request, "audit/events.html", {
        "form": form,
        "page": page,
        "filter_query": form.filter_query(),
        "filtered": not form.event_filter().is_empty(),
        "status": selectors.chain_status(),
    })


@require_GET
@admin_required
def timeline(request: HttpRequest, trace_id: str) -> HttpResponse:
    found = selectors.answer_timeline(trace_id)
    if found is None:
        raise Http404("No such answer")
    return render(request, "audit/timeline.html", {"timeline": found,
                                                   "status": selectors.chain_status()})


@require_POST
@admin_required
def verify(request: HttpRequest) -> HttpResponse:
    from reviewqueue.audit.tasks import verify_chain

    actor = Actor.of_user(request.user)
    try:
        verify_chain.delay(trigger=VerificationRun.Trigger.MANUAL, requested_by=actor.name)
    except Exception as exc:  # a broker that is down must not turn into a 500
        messages.error(request, f"The verification could not be started ({type(exc).__name__}).")
    else:
        messages.info(request, "Verification requested. The result appears below when it is done.")
    return redirect("audit:events")


@require_POST
@admin_required
def acknowledge_alert(request: HttpRequest, pk: int) -> HttpResponse:
    alert = audit_alert_acknowledge(alert_id=pk, user=request.user,
                                    actor=Actor.of_user(request.user))
    if alert is None:
        raise Http404("No such alert")
    messages.info(request, f"Alert about event #{alert.first_bad_seq} acknowledged.")
    return redirect("audit:events")


# --- Exports ------------------------------------------------------------------------------------


def _csv_cell(value: Any) -> str:
    if isinstance(value, dict | list):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    elif hasattr(value, "isoformat"):
        text = value.isoformat()
    else:
        text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


class _Line:
    """A file-like object whose write returns what it was given, for csv.writer."""

    def write(self, value: str) -> str:
        return value


def _batched(lines: Iterable[str]) -> Iterator[str]:
    """Join lines into chunks of a few hundred rows: one write per row would make the server
    send thousands of tiny chunks."""
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= EXPORT_BATCH_ROWS:
            yield "".join(batch)
            batch = []
    if batch:
        yield "".join(batch)


def _csv_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    writer = csv.writer(_Line())
    yield writer.writerow(selectors.EXPORT_FIELDS)
    for row in rows:
        yield writer.writerow([_csv_cell(row[name]) for name in selectors.EXPORT_FIELDS])


def _jsonl_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    for row in rows:
        row["created_at"] = row["created_at"].isoformat()
        yield json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


@require_GET
@admin_required
def export(request: HttpRequest, fmt: str) -> HttpResponseBase:
    """The matching events, oldest first, streamed: memory stays flat however many there are.

    The JSON Lines export keeps every field as stored, so a full export can be verified offline
    with `verify_audit --jsonl`. The CSV is for people: JSON columns are compact JSON and cells
    that a spreadsheet would run as a formula start with an apostrophe.
    """
    problems = unexpected_params(request.GET, FILTER_PARAMS)
    if problems:
        return _bad_request(request, None, problems)
    form = AuditSearchForm(request.GET)
    if not form.is_valid():
        return _bad_request(request, form, [])
    rows = selectors.export_rows(form.event_filter())
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    if fmt == "csv":
        response = StreamingHttpResponse(_batched(_csv_lines(rows)),
                                         content_type="text/csv; charset=utf-8")
    else:
        response = StreamingHttpResponse(_batched(_jsonl_lines(rows)),
                                         content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.{fmt}"'
    response["Cache-Control"] = "no-store"
    return response
