"""Sign-in with a throttle on failed attempts."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from reviewqueue.accounts.throttle import login_blocked


class ThrottledLoginView(auth_views.LoginView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        username = str(request.POST.get("username", ""))[:150]
        if login_blocked(username, request):
            minutes = max(1, settings.LOGIN_FAILURE_WINDOW_SECONDS // 60)
            message = _("Too many failed sign-ins. Try again in %(minutes)d minutes.") % {
                "minutes": minutes
            }
            return render(
                request,
                "registration/login.html",
                {"form": self.get_form(), "throttled": message},
                status=429,
            )
        return super().post(request, *args, **kwargs)
