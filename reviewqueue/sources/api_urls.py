from django.urls import path

from reviewqueue.sources import api

urlpatterns = [
    path(
        "documents/<str:document_id>/revisions/<str:revision>",
        api.RevisionView.as_view(),
        name="revision",
    ),
    path("documents/<str:document_id>", api.DocumentView.as_view(), name="document"),
    path("documents/<str:document_id>/restore", api.DocumentRestoreView.as_view(),
         name="document-restore"),
]
