"""Re-evaluate answers on the current revisions and today's date.

    python manage.py reevaluate --all               # e.g. after a new gate version
    python manage.py reevaluate --document pricing  # every answer citing the document
    python manage.py reevaluate --answer t-1 --answer t-2

The work runs on the Celery workers (in this process when there is no broker). `--wait`
follows the job until it has finished.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewqueue.arguments import seconds
from reviewqueue.audit.services import SYSTEM, Actor
from reviewqueue.jobs.models import Job
from reviewqueue.jobs.services import (
    job_start_for_all,
    job_start_for_answers,
    job_start_for_document,
)
from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.sources.models import Document


class Command(BaseCommand):
    help = "Re-evaluate every answer, the answers citing a document, or chosen answers."

    def add_arguments(self, parser: CommandParser) -> None:
        scope = parser.add_mutually_exclusive_group(required=True)
        scope.add_argument("--all", action="store_true", help="every answer")
        scope.add_argument("--document", action="append", metavar="DOCUMENT_ID",
                           help="answers citing this document (repeatable)")
        scope.add_argument("--answer", action="append", metavar="TRACE_ID",
                           help="this answer (repeatable)")
        parser.add_argument("--trigger", choices=[Verdict.Trigger.GATE_VERSION,
                                                  Verdict.Trigger.MANUAL,
                                                  Verdict.Trigger.REVISION],
                            help="recorded on new verdicts (default: gate_version for --all, "
                                 "manual otherwise)")
        parser.add_argument("--wait", action="store_true",
                            help="follow the job(s) until they have finished")
        parser.add_argument("--timeout", type=seconds, default=3600.0,
                            help="seconds --wait waits at most (default 3600)")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = Actor(SYSTEM.type, "manage.py reevaluate")
        jobs: list[Job] = []
        if options["all"]:
            trigger = options["trigger"] or Verdict.Trigger.GATE_VERSION
            jobs.append(job_start_for_all(trigger=trigger, actor=actor))
        elif options["document"]:
            trigger = options["trigger"] or Verdict.Trigger.MANUAL
            wanted = list(dict.fromkeys(options["document"]))
            known = set(Document.objects.filter(key__in=wanted).values_list("key", flat=True))
            if missing := [key for key in wanted if key not in known]:
                # A typo would start a job that finds nothing to do (the API's 404 likewise).
                raise CommandError("no such document: " + ", ".join(missing))
            for key in wanted:
                jobs.append(job_start_for_document(document_key=key, trigger=trigger,
                                                   actor=actor))
        else:
            trigger = options["trigger"] or Verdict.Trigger.MANUAL
            wanted = list(dict.fromkeys(options["answer"]))
            found = dict(Answer.objects.filter(trace_id__in=wanted).values_list("trace_id",
                                                                                  "id"))
            missing = [t for t in wanted if t not in found]
            if missing:
                raise CommandError("no such answer: " + ", ".join(missing))
            jobs.append(job_start_for_answers(found.values(), trigger, None, actor=actor))

        for job in jobs:
            self.stdout.write(f"job {job.pk}: {job.get_scope_display().lower()}"
                              f"{' ' + job.document_key if job.document_key else ''}")
        if options["wait"]:
            self._wait(jobs, options["timeout"])
        else:
            for job in jobs:
                job.refresh_from_db()
                self._report(job)

    def _wait(self, jobs: list[Job], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        open_jobs = list(jobs)
        failed = 0
        while open_jobs:
            for job in list(open_jobs):
                job.refresh_from_db()
                if job.ended:
                    self._report(job)
                    failed += job.failed + (1 if job.state == Job.State.FAILED else 0)
                    open_jobs.remove(job)
            if open_jobs:
                if time.monotonic() > deadline:
                    raise CommandError(f"{len(open_jobs)} job(s) still running after "
                                       f"{timeout:.0f} s")
                time.sleep(1.0)
        if failed:
            raise CommandError(f"{failed} answer(s) could not be re-evaluated; see the dead "
                               "letters in the admin")

    def _report(self, job: Job) -> None:
        self.stdout.write(f"job {job.pk}: {job.state}, {job.done}/{job.total} re-evaluated, "
                          f"{job.changed} changed, {job.failed} failed")
