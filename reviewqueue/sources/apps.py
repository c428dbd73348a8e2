from django.apps import AppConfig


class SourcesConfig(AppConfig):
    name = "reviewqueue.sources"
    label = "sources"
    verbose_name = "Sources"
