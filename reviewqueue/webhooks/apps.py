from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WebhooksConfig(AppConfig):
    name = "reviewqueue.webhooks"
    label = "webhooks"
    verbose_name = _("Webhooks")

    def ready(self) -> None:
        # Connect the status-change receiver; importing the module is what registers it.
        from reviewqueue.webhooks import receivers  # noqa: F401
