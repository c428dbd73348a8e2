from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.services import user_create_or_update
from reviewqueue.audit.services import SYSTEM
from reviewqueue.errors import FieldError


class Command(BaseCommand):
    help = "Create or update a user with a role (reviewer, owner, admin, service) and groups."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--role", required=True, choices=[r.value for r in Role])
        parser.add_argument(
            "--group",
            action="append",
            default=[],
            help="Extra group (a principal group:<name>); repeatable",
        )
        parser.add_argument("--password", default=None)
        parser.add_argument("--email", default="")

    def handle(self, *args: object, **options: object) -> None:
        try:
            user = user_create_or_update(
                username=str(options["name"]),
                role=Role(str(options["role"])),
                groups=list(options["group"]),  # type: ignore[call-overload]
                password=options["password"] or None,  # type: ignore[arg-type]
                email=str(options["email"]),
                actor=SYSTEM,
            )
        except FieldError as exc:
            raise CommandError(f"--group: {exc.field_message}") from exc
        groups = ", ".join(sorted(user.groups.values_list("name", flat=True)))
        self.stdout.write(f"{user.username}: {groups}")
