"""python manage.py verify_audit: walk the audit chain and report every bad event."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewqueue.audit.chain import Anchor, Problem, problem_lines, walk
from reviewqueue.audit.hashing import HASHED_FIELDS
from reviewqueue.audit.models import AuditEvent, VerificationRun
from reviewqueue.audit.services import audit_verify
from reviewqueue.reviews.integrity import records_report
from reviewqueue.sources.integrity import sources_report

_EVENT_FIELDS = (*HASHED_FIELDS, "prev_hash", "hash")


class _DuplicateKey(ValueError):
    pass


def _one_value_per_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all different. JSON allows a key twice; `json` keeps the last
    value and other readers the first, so a line could hash as the event it was and be read
    as another. PostgreSQL's export never writes a key twice."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(key)
        found[key] = value
    return found


def _jsonl_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The events of an export, one a line, read as they come (an export of millions of
    events is never held whole).

    Lines end at "\\n" only: a value may hold a raw U+2028 or another character that
    str.splitlines() and universal newlines would take for a line break. Each line is decoded
    by itself, so one that is not UTF-8 is named by its number (a "\\n" byte is never part
    of another character in UTF-8)."""
    try:
        handle = path.open("rb")
    except OSError as exc:  # missing, a directory, not readable
        raise CommandError(f"{path}: cannot be read ({exc.strerror})") from None
    with handle:
        for number, data in enumerate(handle, start=1):
            try:
                line = data.decode("utf-8")
                if not line.strip():
                    continue
                row = json.loads(line, object_pairs_hook=_one_value_per_key)
            except UnicodeDecodeError:
                raise CommandError(f"{path}:{number}: not UTF-8 text") from None
            except json.JSONDecodeError as exc:
                raise CommandError(f"{path}:{number}: not JSON ({exc.msg})") from None
            except RecursionError:  # brackets nested deeper than Python's decoder goes
                raise CommandError(f"{path}:{number}: not JSON (nested too deeply)") from None
            except _DuplicateKey as exc:
                raise CommandError(f"{path}:{number}: the key {exc.args[0]!r} is given twice "
                                   "in one object, so the line does not say one thing: not "
                                   "an export of the audit log") from None
            except ValueError as exc:  # a number longer than Python reads (4,300 digits)
                raise CommandError(f"{path}:{number}: not JSON ({exc})") from None
            missing = ([name for name in _EVENT_FIELDS if name not in row]
                       if isinstance(row, dict) else list(_EVENT_FIELDS))
            if missing:
                raise CommandError(f"{path}:{number}: not an audit event "
                                   f"(no {', '.join(missing)})")
            # A key of no event is covered by no hash: the file would say more than the chain
            # vouches for, and a reader would take it for part of the event.
            extra = next((key for key in row if key not in _EVENT_FIELDS), None)
            if extra is not None:
                raise CommandError(f"{path}:{number}: the key {extra!r} is not a field of an "
                                   "audit event, and no hash covers it: not an export of the "
                                   "audit log")
            if (not isinstance(row["seq"], int) or isinstance(row["seq"], bool)
                    or not isinstance(row["created_at"], str)):
                raise CommandError(f"{path}:{number}: not an audit event (seq must be a whole "
                                   "number and created_at a time in ISO 8601)")
            yield row


_AGAINST_LOG_CHUNK = 5000


class _AgainstLog:
    """The export's events, passed on as read, each compared with the event of its seq in
    this database's log, a chunk at a time: one that differs (edited, then hashed again, which
    the file alone cannot show when the event after it is not in the file) or that the log
    lacks is counted, the first few named."""

    def __init__(self, rows: Iterator[dict[str, Any]]) -> None:
        self.rows = rows
        self.differ: list[int] = []
        self.count = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        chunk: dict[int, Any] = {}
        for row in self.rows:
            chunk[row["seq"]] = row["hash"]
            if len(chunk) >= _AGAINST_LOG_CHUNK:
                self._compare(chunk)
                chunk = {}
            yield row
        self._compare(chunk)

    def _compare(self, chunk: dict[int, Any]) -> None:
        stored = dict(AuditEvent.objects.filter(seq__in=list(chunk)).values_list("seq", "hash"))
        for seq, digest in chunk.items():
            if stored.get(seq) != digest:
                self.count += 1
                if len(self.differ) < 10:
                    self.differ.append(seq)

    def report(self) -> str:
        if not self.count:
            return "Each of its events is the log's event of that seq."
        named = ", ".join(f"#{seq}" for seq in self.differ)
        are = "is" if self.count == 1 else "are"
        return (f"{self.count} of its events {are} not the log's event of that seq "
                f"(edited, or not in the log): {named}.")


def _anchor(text: str) -> Anchor:
    seq, _, digest = text.partition(":")
    if not (seq.isascii() and seq.isdigit() and int(seq) > 0 and len(digest) == 64
            and all(c in "0123456789abcdef" for c in digest)):
        # A usage error: argparse prints it under the usage line, with no traceback.
        raise argparse.ArgumentTypeError(
            f"{text!r} is not SEQ:HASH (an event number, a colon and the 64 hex digits of its "
            "hash), as printed by an earlier run")
    return Anchor(seq=int(seq), hash=digest, source="given with --anchor")


def _distinct(anchors: list[Anchor]) -> list[Anchor]:
    """The anchors given, each once; two that give one event different hashes are refused
    before anything is checked: at least one of them is wrong, and a walk could only say that
    the chain was rewritten, not which of the two the log still holds."""
    kept: dict[int, Anchor] = {}
    for anchor in anchors:
        other = kept.setdefault(anchor.seq, anchor)
        if other.hash != anchor.hash:
            raise CommandError(
                f"--anchor gives event #{anchor.seq} two different hashes ({other.hash} and "
                f"{anchor.hash}): an event has one hash, so one of them was mistyped or kept "
                "from a log that was rewritten since. Check the log against each of them on "
                "its own.")
    return list(kept.values())


def _sources(run: VerificationRun) -> str:
    """The run's check of the sources against the events that published them, and of the
    answers, verdicts, decisions and API tokens against the events that recorded them."""
    checked = run.sources_checked or {}
    rows = run.records_checked or {}
    return ("\n" + sources_report(checked.get("revisions", 0), checked.get("documents", 0),
                                  run.sources_problem_count,
                                  [p["detail"] for p in run.sources_problems])
            + "\n" + records_report(rows.get("answers"), rows.get("verdicts", 0),
                                    rows.get("decisions", 0),
                                    run.records_problem_count,
                                    [p["detail"] for p in run.records_problems],
                                    rows.get("tokens")))


class Command(BaseCommand):
    help = ("Verify the hash chain of the audit log, or of a JSON Lines export of it. Says how "
            "far it checked, whether the chain is intact, and lists every bad event (the "
            "first 100). Against the database it also checks every stored revision against "
            "the event that published it, as verify_sources does, every verdict, decision "
            "and API token against the events that recorded it, and every answer's status "
            "and body against its events. Exits with status 1 when the chain is broken, a "
            "revision changed, or an answer, verdict, decision or API token differs or was "
            "recorded by no event.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--jsonl", type=Path, default=None,
            help="Verify a JSON Lines export instead of the database (nothing is stored). It "
                 "must be a full export: an event missing from it fails, as one deleted from "
                 "the log would, but for events cut from its end, which only --anchor shows.",
        )
        parser.add_argument(
            "--partial", action="store_true",
            help="With --jsonl: the file is a filtered export (a search's), so events it lacks "
                 "are not failures; each event's own hash, and the links between consecutive "
                 "events, are checked. Only a full export proves that nothing was removed.",
        )
        parser.add_argument(
            "--against-log", action="store_true",
            help="With --jsonl: also compare each event of the file with the event of the same "
                 "seq in this database's log (the file must be an export of it). This proves a "
                 "search's export: an event it does not follow with the next one is otherwise "
                 "vouched for only by its own hash, which anyone can compute again.",
        )
        parser.add_argument(
            "--anchor", type=_anchor, action="append", default=[], metavar="SEQ:HASH",
            help="Check the log (or the export) against an anchor kept outside the database "
                 "(printed by an earlier run): that event must be there with that hash. May "
                 "be given more than once; each anchor is checked.",
        )
        parser.add_argument(
            "--no-record", action="store_true",
            help="Do not store the result (the audit page shows stored results).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        for option in ("partial", "against_log"):
            if options[option] and options["jsonl"] is None:
                raise CommandError(f"--{option.replace('_', '-')} applies to an export: give it "
                                   "with --jsonl FILE")
        sources_ok = True  # checked with the database's log only
        unchecked = False  # only a search's export lacked an anchored event: nothing broke
        anchors = _distinct(options["anchor"])
        if options["jsonl"] is not None:
            rows: Any = _jsonl_rows(options["jsonl"])
            against = _AgainstLog(rows) if options["against_log"] else None
            # Strict unless told otherwise: a file with events cut out of its middle must not
            # pass for a search's export. --partial is the auditor saying it is one.
            report = walk(against or rows, anchor=anchors[0] if anchors else None,
                          also=anchors[1:], allow_partial=options["partial"], lines=True)
            ok, message, lines = report.ok, report.describe(), report.problem_lines()
            unchecked = not ok and report.problem_count == len(report.problems) and all(
                finding.problem == Problem.NOT_IN_EXPORT for finding in report.problems)
            heading = "Audit export PARTIAL." if report.partial else "Audit chain OK."
            if ok and not report.checked:
                # The file is empty, not the log: say what that can and cannot mean.
                heading, message = "Audit export EMPTY.", (
                    "The file holds no event, so nothing was verified (a search that matched "
                    "nothing exports an empty file)." if options["partial"] else
                    "The file holds no event, so nothing was verified: an export of a log "
                    "that has events is never empty, and a file emptied since it was exported "
                    "checks out like this one (only --anchor shows events removed from its "
                    "end).")
            if not options["partial"] and any(
                    finding.problem == Problem.MISSING for finding in report.problems):
                message += ("\n(A search's export lacks events by design: check it with "
                            "--partial.)")
            if against is not None:
                message += f"\nAgainst the log: {against.report()}"
                if ok and against.count:
                    raise CommandError("Audit export FAILED: its chain holds, but it is not "
                                       f"the log's. {message}", returncode=1)
        else:
            run = audit_verify(trigger=VerificationRun.Trigger.COMMAND,
                               requested_by="verify_audit command",
                               record=not options["no_record"], anchors=anchors)
            ok, heading = run.ok, "Audit chain OK."
            # The sources' line comes before the anchor's, which stays the last to keep.
            message = run.detail + _sources(run)
            sources_ok = run.sources_ok and run.records_ok
            lines = problem_lines(run.problems, run.problem_count)
            if ok and run.last_seq:
                message += ("\nAnchor to keep outside the database (verify_audit --anchor): "
                            f"{run.last_seq}:{run.last_hash}")
            elif run.checked_to_seq and run.seen_tip_hash:
                message += ("\nThe end of the log as read now, not vouched for (keep it to "
                            "catch removals after this check; verify_audit --anchor): "
                            f"{run.checked_to_seq}:{run.seen_tip_hash}")
        if not ok:
            listing = "".join(f"\n  {line}" for line in lines)
            heading = ("Audit export NOT CHECKED against the anchor." if unchecked
                       else "Audit chain BROKEN.")
            if options["jsonl"] is None:
                listing += ("\nHistory cannot be repaired. To see what the events named held "
                            "before, compare them with the same events of a full JSON Lines "
                            "export taken earlier (verify_audit --jsonl FILE checks that the "
                            "file itself is intact).")
            raise CommandError(f"{heading} {message}\nProblems:{listing}", returncode=1)
        if not sources_ok:
            # Not "Audit chain OK." first: Django prints "CommandError: " before the message.
            raise CommandError("Audit check FAILED: the chain is intact, but stored sources "
                               f"or records differ from it. {message}", returncode=1)
        self.stdout.write(f"{heading} {message}")
