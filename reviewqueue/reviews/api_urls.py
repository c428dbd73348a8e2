from django.urls import path

from reviewqueue.reviews import api

urlpatterns = [
    path("answers", api.AnswerCreateView.as_view(), name="answers"),
    path("answers/batch", api.AnswerBatchView.as_view(), name="answers-batch"),
    path("answers/<str:trace_id>", api.AnswerDetailView.as_view(), name="answer"),
]
