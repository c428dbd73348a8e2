"""Events removed from the end of the log are found whatever came before: a chain already
broken somewhere, or an older anchor given by hand. An export line cannot say two things, nor
be nested deeper than Python reads."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from reviewqueue.audit.models import AuditAlert, AuditEvent, VerificationRun
from tests.audit.conftest import verify

pytestmark = pytest.mark.django_db


def _problems(run: Any) -> list[tuple[int, str]]:
    return [(p["seq"], p["problem"]) for p in run.problems]


def _break_then_grow(chain: Callable[..., Any], tamper: Any) -> None:
    """A chain found broken at #2, that then grew to 8 events and was verified again."""
    chain(4)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 2")
    assert _problems(verify()) == [(2, "changed")]
    chain(4)
    assert _problems(verify()) == [(2, "changed")]


def test_events_removed_from_the_end_after_the_chain_broke_are_named(
    chain: Callable[..., Any], tamper: Any
) -> None:
    _break_then_grow(chain, tamper)
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq >= 6")
    run = verify()
    assert _problems(run) == [(2, "changed"), (8, "truncated")]
    assert "events after #5 were removed" in run.problems[1]["detail"]
    newest = AuditAlert.objects.order_by("-id").first()
    assert AuditAlert.objects.count() == 2
    assert "event #8: the anchor" in newest.message


def test_events_removed_from_the_end_stay_named_night_after_night(
    chain: Callable[..., Any], tamper: Any
) -> None:
    _break_then_grow(chain, tamper)
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq >= 6")
    verify()
    run = verify()
    assert _problems(run) == [(2, "changed"), (8, "truncated")]
    assert AuditAlert.objects.count() == 2  # the same problems raise no new alert


def test_events_appended_after_a_break_raise_no_alert(
    chain: Callable[..., Any], tamper: Any
) -> None:
    _break_then_grow(chain, tamper)
    chain(2)
    assert _problems(verify()) == [(2, "changed")]
    assert AuditAlert.objects.count() == 1


def test_an_older_anchor_given_by_hand_does_not_hide_events_removed_from_the_end(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(6)
    kept_outside = f"2:{AuditEvent.objects.get(seq=2).hash}"
    assert verify().ok
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq >= 5")
    with pytest.raises(CommandError) as failure:
        call_command("verify_audit", "--anchor", kept_outside)
    assert "events after #4 were removed" in str(failure.value)
    assert _problems(verify()) == [(6, "truncated")]


def test_a_line_giving_a_key_twice_is_refused(
    admin_client: Any, chain: Callable[..., Any], tmp_path: Path
) -> None:
    """A reader keeping the first of two values sees a forged event; the hash covers the
    last, so the line would otherwise check out."""
    chain(3)
    body = b"".join(admin_client.get("/audit/export.jsonl").streaming_content).decode()
    lines = body.split("\n")[:-1]
    lines[2] = lines[2].replace('{"seq":3,', '{"after":{"status":"approved"},"seq":3,', 1)
    export = tmp_path / "audit.jsonl"
    export.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    with pytest.raises(CommandError, match=r"audit.jsonl:3: the key 'after' is given twice"):
        call_command("verify_audit", "--jsonl", str(export), stdout=io.StringIO())


def test_a_line_nested_too_deeply_to_read_is_refused(tmp_path: Path) -> None:
    """Python's decoder gives up on brackets nested this deep with a RecursionError: the
    line is not JSON it can read, said as for any other."""
    export = tmp_path / "audit.jsonl"
    export.write_text("[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"audit.jsonl:1: not JSON \(nested too deeply\)"):
        call_command("verify_audit", "--jsonl", str(export), stdout=io.StringIO())


def test_a_rewritten_chain_stays_named_the_night_after(
    chain: Callable[..., Any], tamper: Any
) -> None:
    """A run that finds its anchor broken vouches for nothing: the next run checks against
    the same anchor, rather than against the forged end the broken run saw."""
    from reviewqueue.audit.hashing import event_hash, hashed_fields_of

    chain(4)
    assert verify().ok
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET object_id = 'forged' WHERE seq = 3")
        for seq in (3, 4):  # re-linked and re-hashed, as a careful forger would
            prev = AuditEvent.objects.get(seq=seq - 1).hash
            row = {**AuditEvent.objects.filter(seq=seq).values().get(), "prev_hash": prev}
            cursor.execute("UPDATE audit_auditevent SET prev_hash = %s, hash = %s "
                           "WHERE seq = %s", [prev, event_hash(hashed_fields_of(row), prev), seq])
    assert _problems(verify()) == [(4, "rewritten")]
    run = verify()
    assert _problems(run) == [(4, "rewritten")]
    assert run.tip_hash == ""
    assert AuditAlert.objects.count() == 1


def test_a_line_with_a_number_longer_than_python_reads_is_refused(tmp_path: Path) -> None:
    export = tmp_path / "audit.jsonl"
    export.write_text('{"seq": ' + "9" * 5000 + "}\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"audit.jsonl:1: not JSON \(Exceeds the limit"):
        call_command("verify_audit", "--jsonl", str(export), stdout=io.StringIO())


def _anchor_of(seq: int) -> str:
    return f"{seq}:{AuditEvent.objects.get(seq=seq).hash}"


def test_every_anchor_given_is_checked_not_only_the_last(chain: Callable[..., Any]) -> None:
    chain(6)
    mistaken = f"2:{'ab' * 32}"
    with pytest.raises(CommandError) as failure:
        call_command("verify_audit", "--anchor", mistaken, "--anchor", _anchor_of(6),
                     stdout=io.StringIO())
    assert failure.value.returncode == 1
    assert ("Event #2 is the first bad event: its hash differs from the one given with "
            "--anchor") in str(failure.value)


def test_each_anchor_that_holds_is_named(chain: Callable[..., Any]) -> None:
    chain(6)
    out = io.StringIO()
    call_command("verify_audit", "--anchor", _anchor_of(3), "--anchor", _anchor_of(5),
                 "--anchor", _anchor_of(3), stdout=out)
    assert ("). Event #3 still has the hash given with --anchor. Event #5 still has the hash "
            "given with --anchor.\n") in out.getvalue()


@pytest.mark.parametrize("export", [False, True])
def test_two_anchors_giving_one_event_two_hashes_are_refused_before_anything_is_checked(
    chain: Callable[..., Any], tmp_path: Path, export: bool
) -> None:
    chain(3)
    file = tmp_path / "audit.jsonl"
    file.write_text("")
    where = ["--jsonl", str(file)] if export else []
    with pytest.raises(CommandError) as failure:
        call_command("verify_audit", *where, "--anchor", _anchor_of(2), "--anchor",
                     f"2:{'cd' * 32}", stdout=io.StringIO())
    assert str(failure.value) == (
        f"--anchor gives event #2 two different hashes ({_anchor_of(2)[2:]} and {'cd' * 32}): "
        "an event has one hash, so one of them was mistyped or kept from a log that was "
        "rewritten since. Check the log against each of them on its own.")
    assert not VerificationRun.objects.exists()


def test_an_anchor_given_by_hand_that_a_run_also_stored_is_reported_once(
    chain: Callable[..., Any], tamper: Any
) -> None:
    # The anchor the last run printed is the one it stored: given by hand, the removal it
    # shows is one problem, not one for each copy of the anchor.
    chain(6)
    printed = _anchor_of(6)
    assert verify().ok
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq >= 5")
    with pytest.raises(CommandError) as failure:
        call_command("verify_audit", "--anchor", printed, stdout=io.StringIO())
    message = str(failure.value)
    assert ("Event #6 is the first bad event: the anchor (given with --anchor) names it, but it "
            "is not there: the chain ends at event #4, so events after #4 were removed. 1 "
            "problem in all.") in message
    assert "verified on" not in message
