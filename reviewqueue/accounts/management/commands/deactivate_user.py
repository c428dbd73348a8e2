from django.core.management.base import BaseCommand, CommandParser

from reviewqueue.accounts.management.commands._users import user_named
from reviewqueue.accounts.services import user_deactivate
from reviewqueue.audit.services import SYSTEM


class Command(BaseCommand):
    help = "Deactivate a user: end their sessions and revoke their tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args: object, **options: object) -> None:
        user = user_named(options["name"])
        user_deactivate(user=user, actor=SYSTEM)
        self.stdout.write(f"{user.username} deactivated")
