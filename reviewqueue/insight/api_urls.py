from django.urls import path

from reviewqueue.insight import api

urlpatterns = [
    path("metrics", api.MetricsView.as_view(), name="metrics"),
]
