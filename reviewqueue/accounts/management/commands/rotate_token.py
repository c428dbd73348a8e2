from django.core.management.base import BaseCommand, CommandParser

from reviewqueue.accounts.management.commands._users import user_named
from reviewqueue.accounts.services import token_rotate
from reviewqueue.audit.services import SYSTEM


class Command(BaseCommand):
    help = "Issue a new token for a user with the same scopes and revoke their other tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args: object, **options: object) -> None:
        user = user_named(options["name"], active=True)
        self.stdout.write(token_rotate(user=user, actor=SYSTEM))
