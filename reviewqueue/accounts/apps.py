from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "reviewqueue.accounts"
    label = "accounts"
    verbose_name = "Accounts and tokens"
