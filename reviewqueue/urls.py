"""Top-level routes. Each area owns its pages (`<area>/urls.py`) and API (`<area>/api_urls.py`)."""

from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from reviewqueue.accounts.views import SignOutView, ThrottledLoginView
from reviewqueue.health import healthz

api_v1 = [
    path("", include("reviewqueue.sources.api_urls")),
    path("", include("reviewqueue.reviews.api_urls")),
    path("", include("reviewqueue.jobs.api_urls")),
    path("", include("reviewqueue.insight.api_urls")),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("api/v1/", include((api_v1, "api"), namespace="api")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", csp_override(settings.API_DOCS_CSP)(
        SpectacularSwaggerSplitView.as_view(url_name="schema")), name="api-docs"),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", SignOutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("", include("reviewqueue.reviews.urls")),
    path("", include("reviewqueue.sources.urls")),
    path("", include("reviewqueue.jobs.urls")),
    path("", include("reviewqueue.webhooks.urls")),
    path("", include("reviewqueue.audit.urls")),
    path("", include("reviewqueue.insight.urls")),
]

# Every refused HTML request is logged (API refusals are logged by api_errors).
handler403 = "reviewqueue.denied.permission_denied"
# An unknown address under /api/ answers in the API's error shape, not with the HTML page.
handler404 = "reviewqueue.api_errors.page_not_found"
