"""The insight page (admins) and the Prometheus endpoint."""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reviewqueue.accounts.models import ApiToken, Role
from reviewqueue.api_base import RoleAndScope
from reviewqueue.audit.permissions import admin_required
from reviewqueue.insight import charts, selectors, snapshots
from reviewqueue.insight.forms import WINDOW_PARAMS, WindowForm
from reviewqueue.insight.prometheus import exposition
from reviewqueue.params import unexpected_params
from reviewqueue.reviews.labels import reason_label

PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _over_time_title(bucket: str) -> str:
    return _("Hold rate per week") if bucket == "week" else _("Hold rate per day")


def _age_label(age: str) -> str:
    """A backlog age bucket in the reader's language. The snapshot keeps the English label
    (selectors.AGE_BUCKETS, marked with gettext_noop), which the JSON API returns as is."""
    return _(age)


def _charts(metrics: dict[str, Any]) -> dict[str, Any]:
    """The charts of the page, labelled in the reader's language. The snapshot itself keeps
    codes and English labels: the JSON API and /metrics return it unchanged."""
    gate, review, citations = metrics["gate"], metrics["review"], metrics["citations"]
    false_pass = review["false_pass"]
    return {
        "over_time": charts.line_chart(
            [(p["period"], p["rate"]) for p in metrics["hold_rate_over_time"]],
            title=_over_time_title(metrics["window"]["bucket"]),
        ),
        "by_reason": charts.bar_chart(
            [charts.Bar(reason_label(r["reason"]), r["rate"] or 0.0, f"({r['count']})")
             for r in gate["by_reason"]],
            title=_("Share of answers held, by primary reason"),
        ),
        "releases": charts.interval_chart(
            [charts.Interval(r["release"] or _("(none)"), r["held"]["rate"], r["held"]["low"],
                             r["held"]["high"], f"n={r['answers']}")
             for r in metrics["releases"]],
            title=_("Hold rate per index release, with %(level)s interval") % {"level": "95%"},
        ),
        "review": charts.bar_chart(
            [charts.Bar(_("approved unchanged (over-hold)"), review["over_hold"]["rate"] or 0.0),
             charts.Bar(_("edited"), review["edit"]["rate"] or 0.0),
             charts.Bar(_("rejected"), review["reject"]["rate"] or 0.0),
             charts.Bar(_("expanded a passage first"),
                        review["expanded_passage"]["rate"] or 0.0)],
            title=_("Review outcomes of held answers"),
        ),
        "citations": charts.bar_chart(
            [charts.Bar(_("fabricated citation"), citations["fabricated"]["rate"] or 0.0),
             charts.Bar(_("no citation marker"), citations["uncited"]["rate"] or 0.0),
             charts.Bar(_("single-source claim"), citations["single_source"]["rate"] or 0.0),
             charts.Bar(_("retrieved, cited by no claim"),
                        citations["never_cited"]["rate"] or 0.0)],
            title=_("Citation quality of first verdicts"),
        ),
        "false_pass": charts.interval_chart(
            [charts.Interval(_("samples rejected"), false_pass["rejected"]["rate"],
                             false_pass["low"], false_pass["high"],
                             f"n={false_pass['samples_decided']}")],
            title=_("False-pass estimate from audit samples, with %(level)s Wilson interval")
            % {"level": "95%"},
            width=520, label_w=120, value_w=190,
        ),
        "backlog": charts.bar_chart(
            [charts.Bar(_age_label(b["age"]), b["count"]) for b in metrics["backlog"]["by_age"]],
            title=_("Review queue by age"), share=False,
        ),
    }


@require_GET
@admin_required
def insight(request: HttpRequest) -> HttpResponse:
    problems = unexpected_params(request.GET, WINDOW_PARAMS, shown=True)
    form = WindowForm(request.GET)
    if problems or not form.is_valid():
        return render(request, "insight/index.html", {"form": form, "problems": problems},
                      status=400)
    # The figures come from a snapshot the worker computed (see insight/snapshots.py): the page
    # itself counts nothing, and says when the figures were computed.
    snapshot = snapshots.snapshot_read(form.window)
    metrics = snapshot.metrics
    return render(request, "insight/index.html", {
        "form": form,
        "snapshot": snapshot,
        "computed_at": snapshot.computed_at,
        "computed_ago": snapshot.age_seconds(),
        "refresh_every": snapshots.REFRESH_EVERY,
        "metrics": metrics,
        "charts": _charts(metrics) if metrics else None,
        "reason_matrix": _reason_matrix(metrics["releases"]) if metrics else None,
        "last_verification_at": _last_verification_at(metrics),
        "releases_in_window": _releases_in_window(form.window, metrics),
    })


def _releases_in_window(w: selectors.Window, metrics: dict[str, Any] | None
                        ) -> list[tuple[str, str]] | None:
    """When a release filter matched no answer of the window: the releases the window's
    answers did come from, with their links ([] until the worker has computed them); else
    None. Read from the whole window's snapshot: the page itself counts nothing."""
    if not (w.release and metrics and not metrics["gate"]["answers"]):
        return None
    whole = snapshots.snapshot_read(replace(w, release=""))
    if whole.metrics is None:
        return []
    return [(r["release"], "?" + urlencode({"since": w.since, "until": w.until,
                                            "release": r["release"]}))
            for r in whole.metrics["releases"] if r["release"]]


def _last_verification_at(metrics: dict[str, Any] | None) -> Any:
    """When the audit chain was last verified, as a datetime the page shows in its time zone,
    like every other time on it (the snapshot keeps it as UTC text)."""
    stamp = metrics["operations"]["audit"]["last_verification_at"] if metrics else None
    return parse_datetime(stamp) if stamp else None


def _reason_matrix(releases: list[dict[str, Any]]) -> dict[str, Any]:
    """Rows of reasons, columns of releases, cells the share held for that reason. Each row
    carries the reason's label, shown to people, and its code."""
    reasons = sorted({reason for r in releases for reason in r["by_reason"]})
    return {
        "releases": [r["release"] or _("(none)") for r in releases],
        "rows": [{"reason": reason, "label": reason_label(reason),
                  "cells": [r["by_reason"].get(reason, {"rate": 0.0, "count": 0})
                            for r in releases]}
                 for reason in reasons],
    }


# --- Prometheus ---------------------------------------------------------------------------------


class PrometheusRenderer(BaseRenderer):
    media_type = "text/plain"
    format = "prometheus"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None,
               renderer_context: Any = None) -> bytes:
        if isinstance(data, str):
            return data.encode()
        detail = data.get("detail", "") if isinstance(data, dict) else str(data)
        return f"# {detail}\n".encode()


class AlwaysPrometheus(BaseContentNegotiation):
    """Prometheus asks for OpenMetrics first; the text format is the one we speak."""

    def select_parser(self, request: Any, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type


class PrometheusMetricsView(APIView):
    """GET /metrics for Prometheus: queue depth, oldest held age, re-evaluation lag, task
    failures and the state of the audit chain. Admins only: a signed-in admin, or an admin's
    token with the read scope (Prometheus: `authorization: {type: Token, credentials: ...}`)."""

    permission_classes = [RoleAndScope]
    allowed_roles = (Role.ADMIN,)
    required_scope = ApiToken.Scope.READ
    renderer_classes = [PrometheusRenderer]
    content_negotiation_class = AlwaysPrometheus
    schema = None

    def get(self, request: Request) -> Response:
        from reviewqueue.audit.models import VerificationRun

        # Queue and failure figures come from the snapshot the worker refreshes every minute
        # (none yet: only the audit chain's state, read live, is exposed); the snapshot's time
        # is exposed too, so an alert can tell stale figures from a quiet queue.
        snapshot = snapshots.snapshot_read(selectors.default_window())
        ops = snapshot.metrics["operations"] if snapshot.metrics else None
        computed = snapshot.computed_at
        last = VerificationRun.objects.order_by("-finished_at", "-id").first()
        verification = None
        if last is not None:
            verification = {"at": last.finished_at.timestamp(), "ok": last.ok}
        text = exposition(ops, verification,
                          computed.timestamp() if computed else None)
        return Response(text, content_type=PROMETHEUS_CONTENT_TYPE)
