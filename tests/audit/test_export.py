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

from reviewqueue.audit.hashing import event_hash, hashed_fields_of

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
    assert lines[1]["after"] == {"status": "candidate", "step": 1}


def test_the_csv_export_has_a_header_and_one_row_per_event(
    admin_client: Any, chain: Callable[..., Any]
) -> None:
    chain(2)
    rows = list(csv.DictReader(io.StringIO(_body(admin_client.get("/audit/export.csv")))))
    assert [r["seq"] for r in rows] == ["1", "2", "3"]
    assert json.loads(rows[2]["before"]) == {"status": "held", "step": 1}
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


# --- checking an export offline: anchors and filtered exports ----------------------------------


def _export(client: Any, tmp_path: Path, query: str = "") -> Path:
    path = tmp_path / "audit.jsonl"
    path.write_text(_body(client.get(f"/audit/export.jsonl{query}")), encoding="utf-8")
    return path


def _lines(path: Path) -> list[str]:
    # Split on "\n" only: a value may hold a raw U+2028, which splitlines() would cut at.
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def _verify_file(path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("verify_audit", "--jsonl", str(path), *args, stdout=out)
    return out.getvalue()


def _anchor_of_the_log() -> str:
    out = io.StringIO()
    call_command("verify_audit", "--no-record", stdout=out)
    return out.getvalue().split("(verify_audit --anchor): ")[1].strip()


def test_a_full_export_checks_out_against_an_anchor(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(5)
    anchor = _anchor_of_the_log()
    output = _verify_file(_export(admin_client, tmp_path), "--anchor", anchor)
    assert output.startswith("Audit chain OK. All 6 events check out")
    assert "Event #6 still has the hash given with --anchor." in output


def test_an_export_cut_short_fails_against_the_anchor(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(5)
    anchor = _anchor_of_the_log()
    export = _export(admin_client, tmp_path)
    export.write_text("".join(f"{line}\n" for line in _lines(export)[:4]), encoding="utf-8")
    # Without the anchor, the four events left are a consistent chain.
    assert _verify_file(export).startswith("Audit chain OK. All 4 events check out")
    with pytest.raises(CommandError) as failure:
        _verify_file(export, "--anchor", anchor)
    assert failure.value.returncode == 1
    assert "Event #6 is the first bad event" in str(failure.value)
    assert "events after #4 were removed" in str(failure.value)


def test_an_anchor_whose_hash_matches_nothing_fails(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(5)
    export = _export(admin_client, tmp_path)
    with pytest.raises(CommandError) as failure:
        _verify_file(export, "--anchor", f"3:{'ab' * 32}")
    assert "Event #3 is the first bad event: its hash differs from the one given with " \
           "--anchor" in str(failure.value)


def test_an_anchor_past_the_end_of_the_export_fails(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(2)
    with pytest.raises(CommandError, match="Event #40 is the first bad event"):
        _verify_file(_export(admin_client, tmp_path), "--anchor", f"40:{'ab' * 32}")


def test_a_filtered_export_is_checked_event_by_event_not_called_deleted(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(4)
    export = _export(admin_client, tmp_path, "?trace_id=t-2")
    # Unless told it is a search's export, the command takes the gaps for deleted events.
    with pytest.raises(CommandError, match="check it with --partial"):
        _verify_file(export)
    output = _verify_file(export, "--partial")
    assert output.startswith(
        "Audit export PARTIAL. Not a full export: each event's own hash checked; only a full "
        "export proves nothing was removed, and an event the file does not follow with the next "
        "one is vouched for only by its own hash, which anyone can compute again (check the "
        "file with --against-log where its log is).")
    assert "It holds event #4, without the 3 events before #4." in output
    assert "Its one event matches its own hash." in output
    assert "deleted" not in output
    assert "missing" not in output


def test_a_filtered_export_checks_the_links_between_consecutive_events(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(4)  # seq 2 to 5; seq 1 is the admin's account
    export = _export(admin_client, tmp_path, "?action=verdict.created")
    output = _verify_file(export, "--partial")
    assert "It holds 4 events from #2 to #5, without the 1 event before #2." in output
    assert "the 3 links between consecutive events hold" in output

    # A forger re-links event 4 and re-hashes it: its own hash is right, its link is not.
    lines = _lines(export)
    forged = json.loads(lines[2])
    forged["prev_hash"] = "0" * 64
    forged["hash"] = event_hash(hashed_fields_of(forged), forged["prev_hash"])
    lines[2] = json.dumps(forged, ensure_ascii=False)
    export.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    with pytest.raises(CommandError) as failure:
        _verify_file(export, "--partial")
    message = str(failure.value)
    assert "Event #4 is the first bad event: it does not link to event #3" in message
    # Event 5 still names the genuine event 4, so its link breaks too.
    assert "\n  Event #5: it does not link to event #4" in message
    assert "Not a full export" in message


def test_an_edited_event_in_a_filtered_export_is_named(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(6)
    export = _export(admin_client, tmp_path, "?trace_id=t-3")
    edited = json.loads(_lines(export)[0])
    edited["actor"] = "user:mallory"
    export.write_text(json.dumps(edited) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="Event #5 is the first bad event: its content"):
        _verify_file(export, "--partial")


def test_an_edited_and_hashed_again_event_of_a_filtered_export_fails_against_the_log(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    # Its one event has no successor in the file: edited and hashed again, the file alone
    # cannot tell. The log can.
    chain(6)
    export = _export(admin_client, tmp_path, "?trace_id=t-2")
    assert "Each of its events is the log's event of that seq." in _verify_file(
        export, "--partial", "--against-log")
    edited = json.loads(_lines(export)[0])
    edited["actor"] = "user:somebody-else"
    edited["hash"] = event_hash(hashed_fields_of(edited), edited["prev_hash"])
    export.write_text(json.dumps(edited) + "\n", encoding="utf-8")
    assert "Its one event matches its own hash." in _verify_file(export, "--partial")

    with pytest.raises(CommandError) as failure:
        _verify_file(export, "--partial", "--against-log")
    assert failure.value.returncode == 1
    assert str(failure.value).startswith(
        "Audit export FAILED: its chain holds, but it is not the log's.")
    assert (f"1 of its events is not the log's event of that seq (edited, or not in the "
            f"log): #{edited['seq']}.") in str(failure.value)


def test_against_the_log_needs_an_export() -> None:
    with pytest.raises(CommandError, match="--against-log applies to an export"):
        call_command("verify_audit", "--against-log", stdout=io.StringIO())


def test_a_full_export_with_events_cut_out_fails(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(5)
    export = _export(admin_client, tmp_path)
    lines = _lines(export)
    export.write_text("".join(f"{line}\n" for line in lines[:2] + lines[4:]), encoding="utf-8")
    with pytest.raises(CommandError) as failure:
        _verify_file(export)
    assert failure.value.returncode == 1
    assert "Audit chain BROKEN. Event #5 is the first bad event" in str(failure.value)


def test_an_export_called_partial_says_how_many_events_it_lacks(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(5)
    export = _export(admin_client, tmp_path)
    lines = _lines(export)
    export.write_text("".join(f"{line}\n" for line in lines[:2] + lines[4:]), encoding="utf-8")
    output = _verify_file(export, "--partial")
    assert output.startswith("Audit export PARTIAL. Not a full export")
    assert "It holds 4 events from #1 to #6, without 2 events between." in output
    # Event 1 to the start of the chain, 2 to 1, and 6 to 5; nothing links 5 to 2.
    assert "the 3 links between consecutive events hold" in output


def test_an_event_repeated_in_an_export_is_named(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(3)
    export = _export(admin_client, tmp_path)
    lines = _lines(export)
    export.write_text("".join(f"{line}\n" for line in [*lines[:3], lines[1], *lines[3:]]),
                      encoding="utf-8")
    with pytest.raises(CommandError, match=r"Event #2 is the first bad event: it comes after "
                                           r"event #3"):
        _verify_file(export)


def test_a_line_that_is_not_an_event_is_refused_by_its_number(tmp_path: Path) -> None:
    export = tmp_path / "audit.jsonl"
    export.write_text('{"seq": 1}\n', encoding="utf-8")
    with pytest.raises(CommandError, match=r"audit.jsonl:1: not an audit event \(no created_at"):
        _verify_file(export)


@pytest.mark.parametrize(("kind", "reason"), [("missing", "No such file or directory"),
                                               ("directory", "Is a directory")])
def test_an_export_that_cannot_be_read_is_refused_naming_the_file(
    tmp_path: Path, kind: str, reason: str
) -> None:
    path = tmp_path if kind == "directory" else tmp_path / "audit.jsonl"
    with pytest.raises(CommandError) as raised:
        _verify_file(path)
    assert str(raised.value) == f"{path}: cannot be read ({reason})"


def test_a_line_that_is_not_utf8_is_refused_by_its_number(tmp_path: Path) -> None:
    export = tmp_path / "audit.jsonl"
    export.write_bytes(b"\n\xff\xfe{}\n")
    with pytest.raises(CommandError) as raised:
        _verify_file(export)
    assert str(raised.value) == f"{export}:2: not UTF-8 text"


def test_an_export_with_a_raw_line_separator_in_a_value_verifies(
    admin_client: Any, db: Any, tmp_path: Path
) -> None:
    from django.db import transaction

    from reviewqueue.audit.services import WORKER, audit_record

    with transaction.atomic():
        audit_record(actor=WORKER, action="x.y", object_type="answer", object_id="t",
                     after={"note": "one\u2028two\u2029three\x85four"})
    export = _export(admin_client, tmp_path)
    text = export.read_text(encoding="utf-8")
    assert "\u2028" in text  # PostgreSQL's JSON leaves it raw
    assert len(text.splitlines()) > len(_lines(export))  # what splitlines() would get wrong
    assert "All 2 events check out" in _verify_file(export)


def test_a_filtered_export_says_so_in_its_name(
    admin_client: Any, chain: Callable[..., Any]
) -> None:
    chain(1)
    full = admin_client.get("/audit/export.jsonl")
    filtered = admin_client.get("/audit/export.csv?trace_id=t-0")
    assert 'filename="audit-2' in full["Content-Disposition"]
    assert 'filename="audit-filtered-2' in filtered["Content-Disposition"]


def _reordered(export: Path, order: list[int]) -> None:
    lines = _lines(export)
    export.write_text("".join(f"{lines[i]}\n" for i in order), encoding="utf-8")


def test_two_swapped_lines_of_an_export_are_named_a_reordering_not_a_deletion(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(5)
    export = _export(admin_client, tmp_path)
    _reordered(export, [0, 1, 3, 2, 4, 5])  # events 3 and 4 swapped
    with pytest.raises(CommandError) as failure:
        _verify_file(export)
    message = str(failure.value)
    assert message.startswith(
        "Audit chain BROKEN. Event #4 is the first bad event: its line was moved up, above "
        "event #3's: the lines were reordered, not deleted. 1 problem in all. Checked 6 events, "
        "up to event #6.")
    assert "deleted from the log" not in message
    assert "--partial" not in message  # no event is missing: not a search's export


def test_a_line_moved_further_up_an_export_is_named_once(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(5)
    export = _export(admin_client, tmp_path)
    _reordered(export, [0, 4, 1, 2, 3, 5])  # event 5 moved up, before event 2
    with pytest.raises(CommandError) as failure:
        _verify_file(export)
    message = str(failure.value)
    assert ("Event #5 is the first bad event: its line was moved up, above event #2's: the "
            "lines were reordered, not deleted. 1 problem in all.") in message
    assert "deleted from the log" not in message


def test_two_swapped_lines_of_a_search_export_are_named_a_reordering(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(5)
    export = _export(admin_client, tmp_path, "?action=verdict.created")  # events 2 to 6
    _reordered(export, [0, 2, 1, 3, 4])
    with pytest.raises(CommandError) as failure:
        _verify_file(export, "--partial")
    assert ("Event #4 is the first bad event: its line was moved up, above event #3's: the "
            "lines were reordered, not deleted. 1 problem in all.") in str(failure.value)
    assert "It holds 5 events from #2 to #6, without the 1 event before #2." in str(
        failure.value)


def test_an_empty_export_is_said_to_hold_nothing_not_to_check_out(tmp_path: Path) -> None:
    export = tmp_path / "audit.jsonl"
    export.write_text("", encoding="utf-8")
    assert _verify_file(export) == (
        "Audit export EMPTY. The file holds no event, so nothing was verified: an export of a "
        "log that has events is never empty, and a file emptied since it was exported checks "
        "out like this one (only --anchor shows events removed from its end).\n")
    assert _verify_file(export, "--partial") == (
        "Audit export EMPTY. The file holds no event, so nothing was verified (a search that "
        "matched nothing exports an empty file).\n")


def test_an_anchor_past_a_search_export_is_said_not_to_be_in_it_not_removed(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    # A search's export ends where its last match is: the log's later events were not removed.
    chain(5)
    anchor = _anchor_of_the_log()
    export = _export(admin_client, tmp_path, "?trace_id=t-2")
    with pytest.raises(CommandError) as failure:
        _verify_file(export, "--partial", "--anchor", anchor)
    message = str(failure.value)
    assert failure.value.returncode == 1
    assert message.startswith(
        "Audit export NOT CHECKED against the anchor. Event #6 is the first bad event: the "
        "anchor (given with --anchor) names it, but this file does not hold it, so it cannot "
        "be checked against the anchor. 1 problem in all.")
    assert "were removed" not in message
    assert "BROKEN" not in message


def test_a_line_moved_further_down_an_export_is_named_once(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    chain(5)
    export = _export(admin_client, tmp_path)
    _reordered(export, [0, 2, 3, 4, 1, 5])  # event 2 moved down, after event 5
    with pytest.raises(CommandError) as failure:
        _verify_file(export)
    message = str(failure.value)
    assert ("Event #2 is the first bad event: its line was moved down, below event #5's: the "
            "lines were reordered, not deleted. 1 problem in all.") in message
    assert "deleted from the log" not in message
