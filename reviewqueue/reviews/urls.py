from django.urls import path

from reviewqueue.accounts.views import language_choose
from reviewqueue.reviews import views

app_name = "reviews"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("next", views.next_item, name="next"),
    path("language", language_choose, name="set_language"),
    path("answers/<str:trace_id>/", views.item, name="item"),
    path("answers/<str:trace_id>/claim", views.claim, name="claim"),
    path("answers/<str:trace_id>/release", views.release, name="release"),
    path("answers/<str:trace_id>/renew", views.renew, name="renew"),
    path("answers/<str:trace_id>/leave", views.leave, name="leave"),
    path("answers/<str:trace_id>/expanded", views.expanded, name="expanded"),
    path("answers/<str:trace_id>/decide", views.decide, name="decide"),
    path("answers/<str:trace_id>/send-to-owner", views.send_to_owner, name="send-to-owner"),
    path("answers/<str:trace_id>/owner-reply", views.owner_reply, name="owner-reply"),
    path("answers/<str:trace_id>/reevaluate", views.reevaluate_now, name="reevaluate"),
]
