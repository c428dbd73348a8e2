from django.core.management.base import BaseCommand, CommandParser

from reviewqueue.accounts.management.commands._users import user_named
from reviewqueue.accounts.services import user_reactivate
from reviewqueue.audit.services import SYSTEM


class Command(BaseCommand):
    help = ("Let a deactivated user sign in again. Their old tokens stay revoked: issue a new "
            "one with issue_token.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args: object, **options: object) -> None:
        user = user_named(options["name"])
        if user_reactivate(user=user, actor=SYSTEM):
            self.stdout.write(f"{user.username} reactivated")
        else:
            self.stdout.write(f"{user.username} was already active")
