from django.urls import path

from reviewqueue.webhooks import views

app_name = "webhooks"

urlpatterns = [
    path("webhooks/", views.endpoint_list, name="list"),
    path("webhooks/<int:endpoint_id>/", views.endpoint_detail, name="detail"),
    path("webhooks/<int:endpoint_id>/active", views.endpoint_toggle, name="toggle"),
    path("webhooks/<int:endpoint_id>/resend", views.endpoint_resend, name="resend"),
]
