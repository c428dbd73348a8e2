"""Sign-in with a throttle on failed attempts, and signing out."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.i18n import set_language

from reviewqueue.accounts.services import language_remember
from reviewqueue.accounts.throttle import login_blocked


def refuse_throttled_sign_in(request: HttpRequest, form: Any = None,
                             next_url: str = "") -> HttpResponse | None:
    """A 429 sign-in page when the username or the client has failed too often, else None.
    Every view that checks a password (this site's and the Django admin's) asks first."""
    username = str(request.POST.get("username", ""))  # cut by the throttle, once stripped
    if not login_blocked(username, request):
        return None
    minutes = max(1, settings.LOGIN_FAILURE_WINDOW_SECONDS // 60)
    message = _("Too many failed sign-ins. Try again in %(minutes)d minutes.") % {
        "minutes": minutes
    }
    return render(
        request,
        "registration/login.html",
        {"form": form or AuthenticationForm(request), "throttled": message, "next": next_url},
        status=429,
    )


class ThrottledLoginView(auth_views.LoginView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        next_url = str(request.POST.get(self.redirect_field_name, ""))
        if refused := refuse_throttled_sign_in(request, self.get_form(), next_url):
            return refused
        return super().post(request, *args, **kwargs)


class SignOutView(auth_views.LogoutView):
    """Signing out is a form sent with POST, which a page elsewhere cannot send in the
    person's name; it lands on the sign-in page (LOGOUT_REDIRECT_URL), saying so. The address
    opened by itself (a bookmark) shows that form: signing out on GET would let any link or
    image sign people out."""

    http_method_names = ["get", "post", "options"]
    template_name = "registration/sign_out.html"

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().post(request, *args, **kwargs)
        # After the session is cleared: the message goes with the new one, in the language
        # the page was read in (the language cookie outlives the session).
        messages.success(request, _("You are signed out."))
        return response


def language_choose(request: HttpRequest) -> HttpResponse:
    """The language menu: Django's own view sets the language of the pages; a signed-in
    person's choice is also kept for the mail they get."""
    response = set_language(request)
    if request.method == "POST":
        language_remember(user=request.user,  # type: ignore[arg-type]
                          language=str(request.POST.get("language", "")))
    return response
