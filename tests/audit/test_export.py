"""Streamed CSV and JSON Lines exports."""

from __future__ import annotations

import csv
import gc
import io
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def _body(response: Any) -> str:
    assert response.streaming
    return b"".join(response.streaming_content).decode()


def test_the_jsonl_export_holds_every_field_oldest_first(
    admin_client: Any, chain: Callable[..., Any]
) -> None:
    events = chain(3)
    response = admin_client.get("/audit/export.jsonl")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert 'filename="audit-' in response["Content-Disposition"]
    lines = [json.loads(line) for line in _body(response).splitlines()]
    # The first event is the admin's own account being created.
    assert [line["action"] for line in lines] == ["user.created"] + ["verdict.created"] * 3
    assert [line["seq"] for line in lines] == [1, 2, 3, 4]
    assert lines[3]["hash"] == events[2].hash
    assert lines[3]["prev_hash"] == events[1].hash
    assert lines[1]["after"] == {"status": "candidate", "verdict": 1}


def test_the_csv_export_has_a_header_and_one_row_per_event(
    admin_client: Any, chain: Callable[..., Any]
) -> None:
    chain(2)
    rows = list(csv.DictReader(io.StringIO(_body(admin_client.get("/audit/export.csv")))))
    assert [r["seq"] for r in rows] == ["1", "2", "3"]
    assert json.loads(rows[2]["before"]) == {"status": "held", "verdict": 1}
    assert rows[2]["action"] == "verdict.created"


def test_the_export_applies_the_search_filters(
    admin_client: Any, chain: Callable[..., Any]
) -> None:
    chain(4)
    lines = _body(admin_client.get("/audit/export.jsonl?trace_id=t-2")).splitlines()
    assert [json.loads(line)["object_id"] for line in lines] == ["t-2"]


def test_a_csv_cell_that_a_spreadsheet_would_run_is_defused(
    admin_client: Any, db: Any
) -> None:
    from django.db import transaction

    from reviewqueue.audit.services import WORKER, audit_record

    with transaction.atomic():
        audit_record(actor=WORKER, action="document.withdrawn", object_type="document",
                     object_id="=HYPERLINK(\"http://x\")", document_id="doc")
    rows = list(csv.DictReader(io.StringIO(
        _body(admin_client.get("/audit/export.csv?action=document.withdrawn")))))
    assert rows[0]["object_id"].startswith("'=HYPERLINK")


def test_an_unknown_export_parameter_is_refused(admin_client: Any) -> None:
    response = admin_client.get("/audit/export.csv?limit=10")
    assert response.status_code == 400
    assert b"limit: not a search parameter" in response.content


def test_paging_cursors_are_not_export_parameters(admin_client: Any) -> None:
    assert admin_client.get("/audit/export.csv?before=10").status_code == 400


def test_a_reviewer_may_not_export(reviewer_client: Any, chain: Callable[..., Any]) -> None:
    chain(1)
    assert reviewer_client.get("/audit/export.jsonl").status_code == 403


def test_a_full_jsonl_export_verifies_offline(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(5)
    export = tmp_path / "audit.jsonl"
    export.write_text(_body(admin_client.get("/audit/export.jsonl")))
    out = io.StringIO()
    call_command("verify_audit", "--jsonl", str(export), stdout=out)
    assert "All 6 events check out" in out.getvalue()

    lines = export.read_text().splitlines()
    edited = json.loads(lines[3])
    edited["actor"] = "user:mallory"
    lines[3] = json.dumps(edited)
    export.write_text("\n".join(lines) + "\n")
    with pytest.raises(CommandError, match="Event #4 is the first bad event"):
        call_command("verify_audit", "--jsonl", str(export))


def _export_peak(client: Any, url: str) -> tuple[int, int]:
    """Peak Python memory while requesting and reading the whole export, and its size."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        response = client.get(url)
        size = 0
        for chunk in response.streaming_content:
            size += len(chunk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, size


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_exporting_100000_events_keeps_memory_flat(
    admin_client: Any, bulk: Callable[..., None], fmt: str
) -> None:
    # Warm up first: the first request of a process imports and compiles things once.
    _export_peak(admin_client, f"/audit/export.{fmt}?trace_id=warm-up")
    bulk(10_000)
    small_peak, small_size = _export_peak(admin_client, f"/audit/export.{fmt}")
    bulk(90_000)
    large_peak, large_size = _export_peak(admin_client, f"/audit/export.{fmt}")
    # Ten times the events, ten times the bytes, but not ten times the memory: the rows
    # stream through in chunks.
    assert large_size > 9 * small_size
    assert large_peak < 2 * small_peak, (small_peak, large_peak)
