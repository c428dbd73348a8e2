from django.urls import path

from reviewqueue.insight import views

app_name = "insight"

urlpatterns = [
    path("insight/", views.insight, name="index"),
    path("metrics", views.PrometheusMetricsView.as_view(), name="prometheus"),
]
