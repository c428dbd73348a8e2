"""Check every stored revision against the audit event that published it, and every document's
access list against its current revision's (sources/integrity.py). Exit status 1 on a problem."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from reviewqueue.sources.integrity import sources_check, sources_report


class Command(BaseCommand):
    help = ("Check each revision's title, dates, access list, passages and facts against the "
            "digest its publication's audit event recorded, and each document's access list "
            "against its current revision's.")

    def handle(self, *args: Any, **options: Any) -> None:
        check = sources_check()
        report = sources_report(check.revisions, check.documents, len(check.problems),
                                [problem.detail for problem in check.problems])
        if check.problems:
            raise CommandError(report, returncode=1)
        self.stdout.write(report)
