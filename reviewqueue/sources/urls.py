from django.urls import path

from reviewqueue.sources import views

app_name = "sources"

urlpatterns = [
    path("owner/", views.inbox, name="inbox"),
    path("owner/facts/", views.expiring_facts, name="facts"),
    path("owner/progress", views.progress, name="progress"),
    path("owner/conflicts/<int:conflict_id>/", views.conflict_detail, name="conflict"),
    path(
        "owner/conflicts/<int:conflict_id>/dismiss",
        views.conflict_dismiss_view,
        name="conflict-dismiss",
    ),
    path(
        "owner/conflicts/<int:conflict_id>/reopen",
        views.conflict_reopen_view,
        name="conflict-reopen",
    ),
    path("owner/documents/<str:key>/", views.document_detail, name="document"),
    path("owner/documents/<str:key>/publish", views.document_publish, name="document-publish"),
    path(
        "owner/documents/<str:key>/end-validity",
        views.document_end_validity,
        name="document-end-validity",
    ),
    path("owner/documents/<str:key>/withdraw", views.document_withdraw, name="document-withdraw"),
    path("owner/documents/<str:key>/restore", views.document_restore, name="document-restore"),
]
