from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "reviewqueue.accounts"
    label = "accounts"
    verbose_name = "Accounts and tokens"

    def ready(self) -> None:
        from reviewqueue.accounts import schema, signals  # noqa: F401
