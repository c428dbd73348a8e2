"""The Prometheus text exposition format (version 0.0.4) for the operations figures."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def _label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def _metric(name: str, kind: str, help_text: str,
            samples: Iterable[tuple[dict[str, str], float]]) -> list[str]:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
    for labels, value in samples:
        rendered = ",".join(f'{key}="{_label_value(v)}"' for key, v in sorted(labels.items()))
        number = _number(value)
        lines.append(f"{name}{{{rendered}}} {number}" if rendered else f"{name} {number}")
    return lines


def exposition(ops: dict[str, Any] | None, verification: dict[str, Any] | None,
               computed_at: float | None) -> str:
    """Render `insight.selectors.operations()` as stored in the latest snapshot (None while the
    first one is computed); `verification` is the last verification of the audit chain
    (`{"at": Unix time, "ok": bool}`), read live, if there was one; `computed_at` is the Unix
    time the snapshot was computed."""
    lines: list[str] = []
    if computed_at is not None:
        lines += _metric("reviewqueue_metrics_computed_timestamp_seconds", "gauge",
                         "When the figures below were computed (Unix time); the worker "
                         "refreshes them every minute.",
                         [({}, computed_at)])
    if ops is not None:
        lines += _operations(ops)
    if verification is not None:
        lines += _metric("reviewqueue_audit_last_verification_timestamp_seconds", "gauge",
                         "When the audit chain was last verified (Unix time).",
                         [({}, verification["at"])])
        lines += _metric("reviewqueue_audit_chain_ok", "gauge",
                         "1 when the last verification of the audit chain passed, else 0.",
                         [({}, 1 if verification["ok"] else 0)])
    if not lines:
        return "# The first figures are being computed.\n"
    return "\n".join(lines) + "\n"


def _operations(ops: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    lines += _metric("reviewqueue_queue_depth", "gauge",
                     "Answers waiting in the review queue.", [({}, ops["queue_depth"])])
    lines += _metric("reviewqueue_queue_depth_by_reason", "gauge",
                     "Answers waiting in the review queue, by the primary reason they are held.",
                     [({"reason": r["reason"]}, r["count"]) for r in ops["queue_depth_by_reason"]])
    lines += _metric("reviewqueue_oldest_held_age_seconds", "gauge",
                     "Age of the oldest answer waiting in the review queue.",
                     [({}, ops["oldest_held_age_seconds"])])
    lines += _metric("reviewqueue_reevaluation_lag_seconds", "gauge",
                     "Time since the validity boundary of the most overdue answer passed "
                     "without a re-evaluation.",
                     [({}, ops["reevaluation_lag_seconds"])])
    lines += _metric("reviewqueue_task_failures_total", "counter",
                     "Background tasks that failed for good (dead letters).",
                     [({}, ops["task_failures"])])
    lines += _metric("reviewqueue_task_failures_waiting", "gauge",
                     "Dead letters neither sent again nor resolved (counted up to 1000).",
                     # A snapshot computed before this figure existed has none.
                     [({}, int(ops.get("task_failures_waiting", 0)))])
    lines += _metric("reviewqueue_audit_open_alerts", "gauge",
                     "Unacknowledged alerts about a broken audit chain.",
                     [({}, ops["audit"]["open_alerts"])])
    return lines
