from django.apps import AppConfig


class InsightConfig(AppConfig):
    name = "reviewqueue.insight"
    label = "insight"
    verbose_name = "Insight: hold rates, review outcomes and operations metrics"
