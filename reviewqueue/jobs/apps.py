from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "reviewqueue.jobs"
    label = "jobs"
    verbose_name = "Background jobs"
