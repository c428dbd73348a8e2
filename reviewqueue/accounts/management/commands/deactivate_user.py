from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewqueue.accounts.services import user_deactivate
from reviewqueue.audit.services import SYSTEM


class Command(BaseCommand):
    help = "Deactivate a user: end their sessions and revoke their tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args: object, **options: object) -> None:
        user = get_user_model().objects.filter(username=options["name"]).first()
        if user is None:
            raise CommandError(f"no user named {options['name']!r}")
        user_deactivate(user=user, actor=SYSTEM)
        self.stdout.write(f"{user.username} deactivated")
