from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from reviewqueue.health import healthz
from reviewqueue.reviews import api as reviews_api
from reviewqueue.sources import api as sources_api

api_v1 = [
    path("documents/<str:document_id>/revisions/<str:revision>",
         sources_api.RevisionView.as_view(), name="revision"),
    path("documents/<str:document_id>", sources_api.DocumentView.as_view(), name="document"),
    path("answers", reviews_api.AnswerCreateView.as_view(), name="answers"),
    path("answers/batch", reviews_api.AnswerBatchView.as_view(), name="answers-batch"),
    path("answers/<str:trace_id>", reviews_api.AnswerDetailView.as_view(), name="answer"),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("api/v1/", include((api_v1, "api"), namespace="api")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("", include("reviewqueue.reviews.urls")),
]
