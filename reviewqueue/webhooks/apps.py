from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "reviewqueue.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        # Connect the status-change receiver; importing the module is what registers it.
        from reviewqueue.webhooks import receivers  # noqa: F401
