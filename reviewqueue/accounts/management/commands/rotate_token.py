from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewqueue.accounts.services import token_rotate
from reviewqueue.audit.services import SYSTEM


class Command(BaseCommand):
    help = "Issue a new token for a user with the same scopes and revoke their other tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args: object, **options: object) -> None:
        user = get_user_model().objects.filter(username=options["name"]).first()
        if user is None:
            raise CommandError(f"no user named {options['name']!r}")
        self.stdout.write(token_rotate(user=user, actor=SYSTEM))
