from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.services import user_create_or_update
from reviewqueue.audit.services import SYSTEM
from reviewqueue.errors import FieldError

# The argument each field the service refuses is given with.
_ARGUMENTS = {"username": "name", "groups": "--group", "email": "--email"}


class Command(BaseCommand):
    help = ("Create a user with a role (reviewer, owner, admin, service) and groups, or update "
            "one: its role and groups become exactly those given (a group left out is "
            "removed), its password only with --password, its email only with --email. Says "
            "which it did.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--role", required=True, choices=[r.value for r in Role])
        parser.add_argument(
            "--group",
            action="append",
            default=[],
            help="Extra group (a principal group:<name>); repeatable",
        )
        parser.add_argument("--password", default=None,
                            help="Checked by the project's password validators")
        parser.add_argument("--email", default="",
                            help="Where conflict and hand-off mail goes; for an existing user, "
                                 "replaces the address it has")

    def handle(self, *args: object, **options: object) -> None:
        name = str(options["name"])
        existing = get_user_model().objects.filter(username=name).first()
        before = set(existing.groups.values_list("name", flat=True)) if existing else set()
        password = options["password"] or None
        if password is not None:
            try:
                validate_password(str(password), existing)
            except ValidationError as exc:
                raise CommandError(f"--password: {' '.join(exc.messages)}") from exc
        try:
            user = user_create_or_update(
                username=name,
                role=Role(str(options["role"])),
                groups=list(options["group"]),  # type: ignore[call-overload]
                password=password,  # type: ignore[arg-type]
                email=str(options["email"]),
                actor=SYSTEM,
            )
        except FieldError as exc:
            raise CommandError(f"{_ARGUMENTS[exc.field]}: {exc.field_message}") from exc
        after = set(user.groups.values_list("name", flat=True))
        said = [f"{user.username} {'updated' if existing else 'created'}: "
                f"{', '.join(sorted(after))}"]
        if removed := sorted(before - after):
            said.append(f"no longer in {', '.join(removed)}")
        if existing and password:
            said.append("password changed")
        if existing and user.email != existing.email:
            said.append(f"email now {user.email}")
        self.stdout.write("; ".join(said))
