"""verify_audit names the first bad event whatever was done to the history, and goes on to
find every other one."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Iterator
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from reviewqueue.audit.chain import MAX_LISTED, walk
from reviewqueue.audit.hashing import GENESIS_HASH, event_hash, hashed_fields_of
from reviewqueue.audit.models import AuditEvent, VerificationRun
from tests.audit.conftest import verify

pytestmark = pytest.mark.django_db


def _rehash(cursor: Any, seq: int) -> None:
    """Recompute one event's hash from its (changed) content, as a careful forger would."""
    row = AuditEvent.objects.filter(seq=seq).values().get()
    cursor.execute("UPDATE audit_auditevent SET hash = %s WHERE seq = %s",
                   [event_hash(hashed_fields_of(row), row["prev_hash"]), seq])


def test_an_untouched_chain_checks_out(chain: Callable[..., Any]) -> None:
    events = chain(6)
    run = verify()
    assert run.ok
    assert run.events_checked == 6
    assert run.last_seq == 6
    assert run.last_hash == events[-1].hash
    assert run.detail.startswith("All 6 events check out")


def test_an_empty_log_checks_out(db: Any) -> None:
    run = verify()
    assert run.ok
    assert run.events_checked == 0


def test_the_command_reports_that_all_events_check_out(chain: Callable[..., Any]) -> None:
    chain(4)
    out = StringIO()
    call_command("verify_audit", stdout=out)
    assert "Audit chain OK. All 4 events check out" in out.getvalue()
    assert VerificationRun.objects.get().ok


def test_an_edited_event_is_named(chain: Callable[..., Any], tamper: Any) -> None:
    chain(6)
    with tamper() as cursor:
        cursor.execute("""UPDATE audit_auditevent SET after = '{"status": "approved"}'
                          WHERE seq = 3""")
    run = verify()
    assert not run.ok
    assert run.first_bad_seq == 3
    assert run.problem == "changed"
    assert "Event #3 is the first bad event" in run.detail


def test_an_edited_actor_is_named(chain: Callable[..., Any], tamper: Any) -> None:
    chain(6)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 5")
    run = verify()
    assert (run.first_bad_seq, run.problem) == (5, "changed")


def test_an_edit_that_recomputes_the_hash_breaks_the_next_link(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(6)
    with tamper() as cursor:
        cursor.execute("""UPDATE audit_auditevent SET after = '{"status": "approved"}'
                          WHERE seq = 3""")
        _rehash(cursor, 3)
    run = verify()
    assert (run.first_bad_seq, run.problem) == (4, "broken_link")


def test_a_deleted_event_is_named(chain: Callable[..., Any], tamper: Any) -> None:
    chain(6)
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = 3")
    run = verify()
    assert (run.first_bad_seq, run.problem) == (4, "missing")
    assert "event #3 is missing" in run.detail


def test_a_deleted_first_event_is_named(chain: Callable[..., Any], tamper: Any) -> None:
    chain(3)
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = 1")
    run = verify()
    assert (run.first_bad_seq, run.problem) == (2, "missing")


def test_an_event_inserted_in_the_middle_is_named(
    chain: Callable[..., Any], tamper: Any
) -> None:
    events = chain(6)
    with tamper() as cursor:
        # Make room at position 3 (in two steps, so seq stays unique), then insert an event
        # there that links to event 2 but whose hash the forger could only guess.
        cursor.execute("UPDATE audit_auditevent SET seq = -(seq + 1) WHERE seq >= 3")
        cursor.execute("UPDATE audit_auditevent SET seq = -seq WHERE seq < 0")
        cursor.execute(
            """INSERT INTO audit_auditevent (seq, created_at, actor_type, actor, action,
                   object_type, object_id, trace_id, document_id, request_id, before, after,
                   prev_hash, hash)
               VALUES (3, %s, 'user', 'user:mallory', 'decision.approved', 'answer', 't-2',
                       't-2', '', '', '{}', '{}', %s, %s)""",
            [events[2].created_at, events[1].hash, events[2].hash],
        )
    run = verify()
    assert (run.first_bad_seq, run.problem) == (3, "changed")


def test_a_well_forged_insertion_is_caught_at_the_event_after_it(
    chain: Callable[..., Any], tamper: Any
) -> None:
    events = chain(6)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET seq = -(seq + 1) WHERE seq >= 3")
        cursor.execute("UPDATE audit_auditevent SET seq = -seq WHERE seq < 0")
        forged = {"seq": 3, "created_at": events[2].created_at.isoformat(), "actor_type": "user",
                  "actor": "user:mallory", "action": "decision.approved",
                  "object_type": "answer", "object_id": "t-2", "trace_id": "t-2",
                  "document_id": "", "request_id": "", "before": {}, "after": {}}
        cursor.execute(
            """INSERT INTO audit_auditevent (seq, created_at, actor_type, actor, action,
                   object_type, object_id, trace_id, document_id, request_id, before, after,
                   prev_hash, hash)
               VALUES (3, %s, 'user', 'user:mallory', 'decision.approved', 'answer', 't-2',
                       't-2', '', '', '{}', '{}', %s, %s)""",
            [events[2].created_at, events[1].hash, event_hash(forged, events[1].hash)],
        )
    run = verify()
    # The forged event itself is consistent; the original event 3, now at 4, no longer
    # links to what precedes it.
    assert (run.first_bad_seq, run.problem) == (4, "broken_link")


def test_an_event_smuggled_in_before_the_first_is_named(
    chain: Callable[..., Any], tamper: Any
) -> None:
    events = chain(3)
    with tamper() as cursor:
        cursor.execute(
            """INSERT INTO audit_auditevent (seq, created_at, actor_type, actor, action,
                   object_type, object_id, trace_id, document_id, request_id, before, after,
                   prev_hash, hash)
               VALUES (0, %s, 'system', 'system', 'user.created', 'user', 'mallory', '', '',
                       '', '{}', '{}', %s, %s)""",
            [events[0].created_at, "0" * 64, "1" * 64],
        )
    run = verify()
    assert (run.first_bad_seq, run.problem) == (0, "out_of_order")


def test_two_swapped_events_are_named(chain: Callable[..., Any], tamper: Any) -> None:
    chain(6)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET seq = -1 WHERE seq = 3")
        cursor.execute("UPDATE audit_auditevent SET seq = 3 WHERE seq = 4")
        cursor.execute("UPDATE audit_auditevent SET seq = 4 WHERE seq = -1")
    run = verify()
    assert (run.first_bad_seq, run.problem) == (3, "broken_link")


def test_events_removed_from_the_end_after_a_verification_are_named(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(6)
    assert verify().ok
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq >= 5")
    run = verify()
    assert (run.first_bad_seq, run.problem) == (6, "truncated")
    assert "events after #4 were removed" in run.detail


def test_a_chain_rewritten_and_rehashed_after_a_verification_is_detected(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(6)
    assert verify().ok
    with tamper() as cursor:
        cursor.execute("""UPDATE audit_auditevent SET after = '{"status": "approved"}'
                          WHERE seq = 2""")
        prev = AuditEvent.objects.get(seq=1).hash
        for seq in range(2, 7):
            cursor.execute("UPDATE audit_auditevent SET prev_hash = %s WHERE seq = %s",
                           [prev, seq])
            _rehash(cursor, seq)
            prev = AuditEvent.objects.get(seq=seq).hash
    run = verify()
    assert (run.first_bad_seq, run.problem) == (6, "rewritten")


def test_events_appended_after_a_verification_still_check_out(
    chain: Callable[..., Any]
) -> None:
    chain(3)
    assert verify().ok
    chain(2)
    run = verify()
    assert run.ok
    assert run.events_checked == 5


def test_the_command_fails_and_names_the_first_bad_event(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(5)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET object_id = 'other' WHERE seq = 2")
    with pytest.raises(CommandError) as failure:
        call_command("verify_audit")
    assert "Audit chain BROKEN. Event #2 is the first bad event" in str(failure.value)
    assert failure.value.returncode == 1
    # What to do next: the log cannot say what an edited event held; an earlier export can.
    assert str(failure.value).endswith(
        "\nHistory cannot be repaired. To see what the events named held before, compare them "
        "with the same events of a full JSON Lines export taken earlier (verify_audit --jsonl "
        "FILE checks that the file itself is intact).")
    run = VerificationRun.objects.get()
    assert (run.ok, run.first_bad_seq) == (False, 2)


def test_the_command_can_leave_no_record(chain: Callable[..., Any]) -> None:
    chain(2)
    call_command("verify_audit", "--no-record", stdout=StringIO())
    assert not VerificationRun.objects.exists()


@pytest.mark.parametrize("value", [0.1, 1e300, -0.0, 1e-7, 12345678901234567890, "\u2028ü"])
def test_values_that_jsonb_rewrites_still_check_out(db: Any, value: Any) -> None:
    from django.db import transaction

    from reviewqueue.audit.services import WORKER, audit_record

    with transaction.atomic():
        audit_record(actor=WORKER, action="x.y", object_type="answer", object_id="t",
                     after={"value": value, "nested": [{"value": value}]})
    assert verify().ok


def test_a_history_rewritten_with_a_forged_verification_fails_against_an_anchor_kept_outside(
    chain: Callable[..., Any], tamper: Any
) -> None:
    """Whoever can write to the database can rewrite the whole log and store a verification
    run vouching for the forgery; the anchor printed by an earlier run, kept elsewhere, still
    catches it."""
    chain(4)
    out = StringIO()
    call_command("verify_audit", stdout=out)
    anchor = out.getvalue().split("(verify_audit --anchor): ")[1].strip()
    assert anchor == f"4:{AuditEvent.objects.get(seq=4).hash}"
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET object_id = 'forged' WHERE seq >= 1")
        prev = GENESIS_HASH
        for seq in range(1, 5):
            cursor.execute("UPDATE audit_auditevent SET prev_hash = %s WHERE seq = %s",
                           [prev, seq])
            _rehash(cursor, seq)
            prev = AuditEvent.objects.get(seq=seq).hash
    # A forger who knows the schema forges every end a run records.
    VerificationRun.objects.create(started_at=timezone.now(), finished_at=timezone.now(),
                                   trigger="nightly", ok=True, events_checked=4, last_seq=4,
                                   last_hash=prev, checked_to_seq=4, tip_hash=prev,
                                   seen_tip_hash=prev)
    call_command("verify_audit", "--no-record", stdout=StringIO())  # the forged run vouches
    with pytest.raises(CommandError) as failure:
        call_command("verify_audit", "--anchor", anchor, "--no-record")
    assert "Event #4 is the first bad event" in str(failure.value)
    assert "the chain up to here was rewritten" in str(failure.value)


def test_an_anchor_that_is_not_seq_and_hash_is_refused(db: Any) -> None:
    with pytest.raises(CommandError, match="--anchor: '12:abc' is not SEQ:HASH"):
        call_command("verify_audit", "--anchor", "12:abc")


def test_an_anchor_numbered_in_a_superscript_digit_is_refused_as_not_seq_and_hash(
    db: Any
) -> None:
    """"\u00b2" is a digit to str.isdigit, and no number int() reads."""
    with pytest.raises(CommandError, match="is not SEQ:HASH"):
        call_command("verify_audit", "--anchor", "\u00b2:" + "a" * 64)


def test_a_mistyped_anchor_on_the_command_line_is_a_usage_error(
    db: Any, capsys: Any
) -> None:
    """As the shell runs it: the usage and the reason, with no Python traceback."""
    from django.core.management import ManagementUtility

    with pytest.raises(SystemExit) as ended:
        ManagementUtility(["manage.py", "verify_audit", "--anchor", "349:not-a-hash"]).execute()

    said = capsys.readouterr().err
    assert ended.value.code == 2
    assert "usage: manage.py verify_audit" in said
    assert "argument --anchor: '349:not-a-hash' is not SEQ:HASH" in said
    assert "Traceback" not in said


# --- every problem, not only the first --------------------------------------------------------


def _problems(run: Any) -> list[tuple[int, str]]:
    return [(p["seq"], p["problem"]) for p in run.problems]


def test_the_walk_goes_on_past_the_first_bad_event(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(8)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 3")
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = 6")
    run = verify()
    assert _problems(run) == [(3, "changed"), (7, "missing")]
    assert (run.first_bad_seq, run.problem, run.problem_count) == (3, "changed", 2)
    assert run.checked_to_seq == 8
    assert "Event #3 is the first bad event" in run.detail
    assert "2 problems in all. Checked 7 events, up to event #8." in run.detail


def test_an_edit_made_after_an_earlier_break_is_found(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(6)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 2")
    assert _problems(verify()) == [(2, "changed")]
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET object_id = 'other' WHERE seq = 5")
    run = verify()
    assert _problems(run) == [(2, "changed"), (5, "changed")]
    assert run.first_bad_seq == 2


def test_a_rehashed_edit_breaks_only_the_link_after_it(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(6)
    with tamper() as cursor:
        cursor.execute("""UPDATE audit_auditevent SET after = '{"status": "approved"}'
                          WHERE seq = 3""")
        _rehash(cursor, 3)
    # Event 5 links to the stored hash of event 4, which nobody touched: one problem, not a
    # cascade down the rest of the log.
    assert _problems(verify()) == [(4, "broken_link")]


def test_events_after_a_gap_are_still_checked(chain: Callable[..., Any], tamper: Any) -> None:
    chain(6)
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq IN (2, 3)")
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 6")
    run = verify()
    assert _problems(run) == [(4, "missing"), (6, "changed")]
    assert "events #2 to #3 are missing" in run.detail


def test_the_command_lists_every_problem(chain: Callable[..., Any], tamper: Any) -> None:
    chain(5)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET object_id = 'other' WHERE seq IN (2, 4)")
    with pytest.raises(CommandError) as failure:
        call_command("verify_audit")
    message = str(failure.value)
    assert message.startswith("Audit chain BROKEN. Event #2 is the first bad event")
    assert "2 problems in all. Checked 5 events, up to event #5." in message
    assert "\n  Event #2: its content no longer matches its hash" in message
    assert "\n  Event #4: its content no longer matches its hash" in message


def test_a_long_list_of_problems_is_cut_short_but_counted_in_full(
    bulk: Callable[..., None], tamper: Any
) -> None:
    bulk(150)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory'")
    run = verify()
    assert run.problem_count == 150
    assert len(run.problems) == 100
    assert run.problems[-1]["seq"] == 100
    assert "150 problems in all" in run.detail
    with pytest.raises(CommandError) as failure:
        call_command("verify_audit", "--no-record")
    assert "\n  ... and 50 more (only the first 100 are listed)." in str(failure.value)


def test_a_tip_is_vouched_for_only_by_a_clean_run(chain: Callable[..., Any], tamper: Any) -> None:
    chain(4)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 2")
    run = verify()
    # A broken run says how far it got, but leaves no anchor for the next run to trust.
    assert (run.checked_to_seq, run.last_seq, run.last_hash) == (4, None, "")


def _rows(count: int, *, bad: bool) -> Iterator[dict[str, Any]]:
    """A chain built on the fly, never held whole; with `bad`, every stored hash is wrong."""
    prev = GENESIS_HASH
    for seq in range(1, count + 1):
        row = {"seq": seq, "created_at": "2026-10-01T12:00:00+00:00", "actor_type": "worker",
               "actor": "worker", "action": "verdict.created", "object_type": "answer",
               "object_id": f"t-{seq}", "trace_id": f"t-{seq}", "document_id": "",
               "request_id": "", "before": {}, "after": {"n": seq}, "prev_hash": prev}
        row["hash"] = "f" * 64 if bad else event_hash(hashed_fields_of(row), prev)
        prev = row["hash"]
        yield row


def _walk_peak(count: int) -> tuple[int, Any]:
    gc.collect()
    tracemalloc.start()
    try:
        report = walk(_rows(count, bad=True))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, report


def test_a_walk_over_many_bad_events_keeps_memory_flat() -> None:
    _walk_peak(100)  # warm-up
    small_peak, small = _walk_peak(2_000)
    large_peak, large = _walk_peak(40_000)
    assert (small.problem_count, large.problem_count) == (2_000, 40_000)
    assert len(large.problems) == MAX_LISTED
    assert large_peak < 2 * small_peak, (small_peak, large_peak)


def test_the_digest_tells_the_same_problems_from_different_ones() -> None:
    def changed_at(*seqs: int) -> str:
        rows = []
        for row in _rows(20, bad=False):
            if row["seq"] in seqs:
                row = {**row, "actor": "user:mallory"}
            rows.append(row)
        return walk(rows).digest

    assert changed_at(3, 17) == changed_at(3, 17)
    assert changed_at(3, 17) != changed_at(3)
    assert changed_at(3) != changed_at(4)
    assert walk(_rows(20, bad=False)).digest == ""


def test_two_renumbered_events_are_named_reordered_not_edited(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(6)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET seq = -1 WHERE seq = 3")
        cursor.execute("UPDATE audit_auditevent SET seq = 3 WHERE seq = 4")
        cursor.execute("UPDATE audit_auditevent SET seq = 4 WHERE seq = -1")
    run = verify()
    found = {(p["seq"], p["problem"]): p["detail"] for p in run.problems}
    assert found[(3, "out_of_order")] == (
        "it is event #4 numbered #3 (its content matches its hash as #4): the events were "
        "reordered, not edited.")
    assert found[(4, "out_of_order")] == (
        "it is event #3 numbered #4 (its content matches its hash as #3): the events were "
        "reordered, not edited.")
    assert "changed" not in {problem for _, problem in found}
