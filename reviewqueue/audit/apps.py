from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "reviewqueue.audit"
    label = "audit"
    verbose_name = "Audit log and quarantine"
