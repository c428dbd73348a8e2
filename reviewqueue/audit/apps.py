from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AuditConfig(AppConfig):
    name = "reviewqueue.audit"
    label = "audit"
    verbose_name = _("Audit log and quarantine")

    def ready(self) -> None:
        # Registers the nightly verification in the beat schedule in every process that loads
        # Django, not only in those where Celery's autodiscovery has run.
        from reviewqueue.audit import tasks  # noqa: F401
