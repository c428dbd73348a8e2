"""Check every stored revision against the audit event that published it, and every document's
access list against its current revision's (sources/integrity.py). Exit status 1 on a problem."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from reviewqueue.sources.integrity import sources_check


class Command(BaseCommand):
    help = ("Check each revision's title, dates, access list, passages and facts against the "
            "digest its publication's audit event recorded, and each document's access list "
            "against its current revision's.")

    def handle(self, *args: Any, **options: Any) -> None:
        check = sources_check()
        if check.problems:
            listing = "".join(f"\n  {problem}" for problem in check.problems[:100])
            more = len(check.problems) - 100
            raise CommandError(
                f"Sources CHANGED: {len(check.problems)} problem(s) in {check.revisions} "
                f"revisions and {check.documents} documents:{listing}"
                + (f"\n  ... and {more} more" if more > 0 else ""), returncode=1)
        self.stdout.write(f"Sources OK: {check.revisions} revisions match the audit events that "
                          f"published them; {check.documents} documents let read whom their "
                          "current revision does.")
