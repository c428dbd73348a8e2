"""Top-level routes. Each area owns its pages (`<area>/urls.py`) and API (`<area>/api_urls.py`)."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from reviewqueue.health import healthz

api_v1 = [
    path("", include("reviewqueue.sources.api_urls")),
    path("", include("reviewqueue.reviews.api_urls")),
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
