from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewqueue.accounts.management.commands._users import user_named
from reviewqueue.accounts.models import ApiToken
from reviewqueue.accounts.services import role_scopes, token_issue
from reviewqueue.audit.services import SYSTEM
from reviewqueue.errors import FieldError


class Command(BaseCommand):
    help = "Issue an API token for a user and print it (it is shown only this once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument(
            "--scope",
            action="append",
            default=None,
            choices=[s.value for s in ApiToken.Scope],
            help="Limit the token to these scopes (default: by role)",
        )
        parser.add_argument("--label", default="")

    def handle(self, *args: object, **options: object) -> None:
        user = user_named(options["name"], hint="; create it with adduser", active=True)
        allowed = role_scopes(user)
        # --scope narrows what the role gives; a scope beyond it would do nothing but mislead.
        if beyond := sorted(set(options["scope"] or ()) - set(allowed)):
            raise CommandError(
                f"scope: {', '.join(beyond)} is not given by {user.username}'s role; it may "
                f"have {', '.join(allowed) or 'no scope'}")
        try:
            raw = token_issue(user=user, actor=SYSTEM, name=str(options["label"]),
                              scopes=options["scope"])  # type: ignore[arg-type]
        except FieldError as exc:
            raise CommandError(f"--label: {exc.field_message}") from exc
        self.stdout.write(raw)
