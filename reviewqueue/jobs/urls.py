from django.urls import path

from reviewqueue.jobs import views

app_name = "jobs"

urlpatterns = [
    path("jobs/", views.job_list, name="list"),
    path("jobs/start", views.job_start, name="start"),
    path("jobs/<uuid:job_id>/", views.job_detail, name="detail"),
    path("jobs/<uuid:job_id>/progress", views.job_progress_json, name="progress"),
]
