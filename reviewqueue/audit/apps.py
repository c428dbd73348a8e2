from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "reviewqueue.audit"
    label = "audit"
    verbose_name = "Audit log and quarantine"

    def ready(self) -> None:
        # Registers the nightly verification in the beat schedule in every process that loads
        # Django, not only in those where Celery's autodiscovery has run.
        from reviewqueue.audit import tasks  # noqa: F401
