from django.urls import path

from reviewqueue.reviews import api, api_queue

urlpatterns = [
    path("answers", api.AnswerCreateView.as_view(), name="answers"),
    path("answers/batch", api.AnswerBatchView.as_view(), name="answers-batch"),
    path("answers/<str:trace_id>", api.AnswerDetailView.as_view(), name="answer"),
    # The reviewer's work: queue, leases and decisions.
    path("queue", api_queue.QueueView.as_view(), name="queue"),
    path("answers/<str:trace_id>/claim", api_queue.ClaimView.as_view(), name="answer-claim"),
    path("answers/<str:trace_id>/release", api_queue.ReleaseView.as_view(),
         name="answer-release"),
    path("answers/<str:trace_id>/decisions", api_queue.DecisionView.as_view(),
         name="answer-decisions"),
]
