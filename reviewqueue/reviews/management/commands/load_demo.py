from collections import Counter

from django.core.management.base import BaseCommand, CommandParser

from reviewqueue import demo
from reviewqueue.arguments import count
from reviewqueue.reviews.models import Answer, ReviewItem


class Command(BaseCommand):
    help = "Load the Kestrel Software demo: accounts, ~20 documents and a few hundred answers."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--answers", type=count, default=300)

    def handle(self, *args: object, **options: object) -> None:
        printed = demo.load(self.stdout, answers=int(options["answers"]))  # type: ignore[call-overload]
        statuses = Counter(Answer.objects.values_list("status", flat=True))
        reasons = Counter(ReviewItem.objects.values_list("primary_reason", flat=True))
        self.stdout.write(f"answers by status: {dict(sorted(statuses.items()))}")
        self.stdout.write(f"held by reason: {dict(sorted(reasons.items()))}")
        self.stdout.write("")
        self.stdout.write(f"Demo accounts (password for people: {demo.DEMO_PASSWORD}):")
        for name, note in printed.items():
            self.stdout.write(f"  {name:<12} {note}")
