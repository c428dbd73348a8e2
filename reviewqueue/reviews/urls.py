from django.urls import path

from reviewqueue.reviews import views

app_name = "reviews"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("answers/<str:trace_id>/", views.item, name="item"),
]
