from django.urls import path

from reviewqueue.jobs import api

urlpatterns = [
    path("jobs", api.JobStartView.as_view(), name="jobs"),
    path("jobs/<uuid:job_id>", api.JobDetailView.as_view(), name="job"),
]
