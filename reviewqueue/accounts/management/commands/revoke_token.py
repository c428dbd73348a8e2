from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewqueue.accounts.management.commands._users import user_named
from reviewqueue.accounts.services import tokens_revoke
from reviewqueue.audit.services import SYSTEM


class Command(BaseCommand):
    help = "Revoke an API token by its prefix (as shown in the admin), or all tokens of a user."

    def add_arguments(self, parser: CommandParser) -> None:
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--prefix")
        group.add_argument("--user")

    def handle(self, *args: object, **options: object) -> None:
        for option in ("prefix", "user"):
            if options[option] is not None and not str(options[option]).strip():
                raise CommandError(f"--{option} is empty: give a token prefix or a username")
        user = None
        if options["user"]:
            user = user_named(options["user"])
        count = tokens_revoke(
            actor=SYSTEM,
            prefix=options["prefix"] or None,  # type: ignore[arg-type]
            user=user,
        )
        if count == 0:
            raise CommandError("no active token matched")
        self.stdout.write(f"revoked {count} token(s)")
