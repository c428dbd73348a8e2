"""python manage.py verify_audit: walk the audit chain and name the first bad event."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewqueue.audit.chain import Anchor, walk
from reviewqueue.audit.models import VerificationRun
from reviewqueue.audit.services import audit_verify


def _jsonl_rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise CommandError(f"{path}:{number}: not JSON ({exc.msg})") from None


def _anchor(text: str) -> Anchor:
    seq, _, digest = text.partition(":")
    if not (seq.isdigit() and int(seq) > 0 and len(digest) == 64
            and all(c in "0123456789abcdef" for c in digest)):
        raise CommandError(f"--anchor: {text!r} is not SEQ:HASH (an event number, a colon and "
                           "the 64 hex digits of its hash), as printed by an earlier run")
    return Anchor(seq=int(seq), hash=digest, verified_at="the anchor given")


class Command(BaseCommand):
    help = ("Verify the hash chain of the audit log. Prints the first bad event, or that all "
            "N events check out; exits with status 1 when the chain is broken.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--jsonl", type=Path, default=None,
            help="Verify a full JSON Lines export instead of the database (nothing is stored).",
        )
        parser.add_argument(
            "--anchor", type=_anchor, default=None, metavar="SEQ:HASH",
            help="Check the log against an anchor kept outside the database (printed by an "
                 "earlier run): that event must still be there with that hash.",
        )
        parser.add_argument(
            "--no-record", action="store_true",
            help="Do not store the result (the audit page shows stored results).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["jsonl"] is not None:
            report = walk(_jsonl_rows(options["jsonl"]))
            ok, message = report.ok, report.describe()
        else:
            run = audit_verify(trigger=VerificationRun.Trigger.COMMAND,
                               requested_by="verify_audit command",
                               record=not options["no_record"], anchor=options["anchor"])
            ok, message = run.ok, run.detail
            if ok and run.last_seq:
                message += ("\nAnchor to keep outside the database (verify_audit --anchor): "
                            f"{run.last_seq}:{run.last_hash}")
        if not ok:
            raise CommandError(f"Audit chain BROKEN. {message}", returncode=1)
        self.stdout.write(f"Audit chain OK. {message}")
