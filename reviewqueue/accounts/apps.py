from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "reviewqueue.accounts"
    label = "accounts"
    verbose_name = _("Accounts and tokens")

    def ready(self) -> None:
        from reviewqueue import mailing  # noqa: F401 (its deploy check: who gets mail lives here)
        from reviewqueue.accounts import schema, signals  # noqa: F401
