"""Admin pages of webhooks: register an endpoint, read its delivery log, switch it off."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.roles import has_role
from reviewqueue.audit.services import Actor
from reviewqueue.errors import FieldError
from reviewqueue.params import refuse_unknown_params
from reviewqueue.webhooks.forms import EndpointForm
from reviewqueue.webhooks.models import WebhookEndpoint
from reviewqueue.webhooks.selectors import (
    endpoint_deliveries,
    endpoints_with_counts,
    resendable_count,
)
from reviewqueue.webhooks.services import (
    webhook_deliveries_resend,
    webhook_endpoint_register,
    webhook_endpoint_set_active,
)

# The session key holding a just-registered endpoint's id and secret until the page shows them.
_REGISTERED = "webhooks.registered"


def _require_admin(request: HttpRequest) -> None:
    if not has_role(request.user, Role.ADMIN):
        raise PermissionDenied


@login_required
@require_http_methods(["GET", "POST"])
def endpoint_list(request: HttpRequest) -> HttpResponse:
    _require_admin(request)
    if refused := refuse_unknown_params(request):
        return refused
    form = EndpointForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            registered = webhook_endpoint_register(
                url=form.cleaned_data["url"], description=form.cleaned_data["description"],
                secret=form.cleaned_data["secret"], user=request.user,
                actor=Actor.of_user(request.user),
            )
        except FieldError as exc:
            # The service words it to follow "url: " in the API; on the page it opens a line.
            form.add_error(exc.field if exc.field in form.fields else None,
                           capfirst(exc.field_message))
        else:
            # Redirected, so that reloading the page registers nothing a second time; the
            # secret waits in the (server-side) session for the one page that shows it.
            request.session[_REGISTERED] = {"id": registered.endpoint.pk,
                                            "secret": registered.secret}
            return redirect("webhooks:list")
    # A refused form comes back without the secret typed into it, as a refused form's page
    # never shows one (reviewqueue/denied.py): a page can be read over a shoulder or kept in a
    # screenshot, and the secret is the receiver's.
    withheld = request.method == "POST" and bool(str(form.data.get("secret", "")).strip())
    if withheld:
        form.data = form.data.copy()
        form.data["secret"] = ""
    shown = request.session.pop(_REGISTERED, None) if request.method == "GET" else None
    endpoint = WebhookEndpoint.objects.filter(pk=shown["id"]).first() if shown else None
    response = render(request, "webhooks/list.html", {
        "endpoints": endpoints_with_counts(), "form": form, "secret_withheld": withheld,
        "registered": {"endpoint": endpoint, "secret": shown["secret"]} if endpoint else None,
    }, status=400 if request.method == "POST" else 200)
    if endpoint:
        response["Cache-Control"] = "no-store"  # the secret is shown once, and kept nowhere
    return response


@login_required
def endpoint_detail(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    _require_admin(request)
    endpoint = get_object_or_404(WebhookEndpoint, pk=endpoint_id)
    refused = refuse_unknown_params(request, ["before"])
    if refused is not None:
        return refused
    raw = request.GET.get("before")
    if raw is not None and not (raw.isascii() and raw.isdigit() and 0 < len(raw) < 19):
        return render(request, "bad_params.html", {
            "problems": [("before", _("not a delivery number"))], "without_url": request.path,
        }, status=400)
    deliveries, older = endpoint_deliveries(endpoint, before=int(raw) if raw else None)
    return render(request, "webhooks/detail.html", {
        "endpoint": endpoint, "deliveries": deliveries, "older": older,
        "paged": raw is not None, "resendable": resendable_count(endpoint),
    })


def _delivery_number(raw: str | None) -> int | None:
    return int(raw) if raw and raw.isascii() and raw.isdigit() and len(raw) < 19 else None


@login_required
@require_POST
def endpoint_resend(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    """Send given-up deliveries again: the one the form names, or every one that may be."""
    _require_admin(request)
    endpoint = get_object_or_404(WebhookEndpoint, pk=endpoint_id)
    raw = request.POST.get("delivery")
    delivery = _delivery_number(raw)
    if raw is not None and delivery is None:
        return render(request, "bad_params.html", {
            "problems": [("delivery", _("not a delivery number"))],
            "without_url": reverse("webhooks:detail", args=[endpoint.pk]),
        }, status=400)
    count = webhook_deliveries_resend(endpoint_id=endpoint.pk, delivery_id=delivery,
                                      actor=Actor.of_user(request.user))
    endpoint.refresh_from_db(fields=["is_active"])
    if not count:
        messages.info(request, _(
            "Nothing was sent again: a delivery is sent again only when it was given up and "
            "no newer event of its answer follows it.") if delivery is not None else _(
            "Nothing was sent again: no given-up delivery is the newest event of its answer."))
    else:
        said = ngettext("%(count)d given-up delivery is sent again, with a new round of "
                        "attempts.", "%(count)d given-up deliveries are sent again, each with "
                        "a new round of attempts.", count) % {"count": count}
        if not endpoint.is_active:
            said += " " + ngettext("It waits until the endpoint is enabled.",
                                   "They wait until the endpoint is enabled.", count)
        messages.success(request, said)
    return redirect("webhooks:detail", endpoint_id=endpoint_id)


@login_required
@require_POST
def endpoint_toggle(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    _require_admin(request)
    webhook_endpoint_set_active(endpoint_id=endpoint_id,
                                active=request.POST.get("active") == "1",
                                actor=Actor.of_user(request.user))
    return redirect("webhooks:detail", endpoint_id=endpoint_id)
