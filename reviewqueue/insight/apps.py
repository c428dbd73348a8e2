from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InsightConfig(AppConfig):
    name = "reviewqueue.insight"
    label = "insight"
    verbose_name = _("Insight: hold rates, review outcomes and operations metrics")
