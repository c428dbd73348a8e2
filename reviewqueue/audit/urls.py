from django.urls import path, re_path

from reviewqueue.audit import views

app_name = "audit"

urlpatterns = [
    path("audit/", views.events, name="events"),
    re_path(r"^audit/export\.(?P<fmt>csv|jsonl)$", views.export, name="export"),
    path("audit/answers/<str:trace_id>/", views.timeline, name="timeline"),
    path("audit/verify", views.verify, name="verify"),
    path("audit/alerts/<int:pk>/acknowledge", views.acknowledge_alert, name="acknowledge"),
]
