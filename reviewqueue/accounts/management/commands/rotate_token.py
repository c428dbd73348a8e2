from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewqueue.accounts.management.commands._users import user_named
from reviewqueue.accounts.services import token_rotate
from reviewqueue.audit.services import SYSTEM
from reviewqueue.errors import FieldError


class Command(BaseCommand):
    help = ("Replace one of a user's tokens with a new one of the same name and scopes, and "
            "revoke it. Name it with --prefix when the user has more than one.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--prefix", help="the token's prefix, as shown in the admin")

    def handle(self, *args: object, **options: object) -> None:
        user = user_named(options["name"], active=True)
        try:
            raw = token_rotate(user=user, actor=SYSTEM, prefix=options["prefix"] or None)  # type: ignore[arg-type]
        except FieldError as exc:
            raise CommandError(f"--{exc.field}: {exc.field_message}") from exc
        self.stdout.write(raw)
