"""Users, groups and API tokens in the Django admin: shown, never edited through a form.

Who may do and read what (roles, groups, tokens, whether an account is active) changes only
through reviewqueue.accounts.services, which writes each change to the audit log: roles and
groups with `manage.py adduser`, tokens with `issue_token`, `revoke_token` and `rotate_token`.
The admin actions below (revoke tokens or rotate one's own, deactivate users, change a
password) call those same services with the signed-in admin as the actor.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import ActionLocation
from django.contrib.admin.utils import flatten_fieldsets, unquote
from django.contrib.auth import get_user_model, update_session_auth_hash
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.forms import AdminPasswordChangeForm
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.debug import sensitive_post_parameters

from reviewqueue.accounts.models import ApiToken
from reviewqueue.accounts.services import (
    token_replace,
    tokens_revoke,
    user_deactivate,
    user_password_changed,
    user_password_set,
    user_reactivate,
)
from reviewqueue.accounts.views import refuse_throttled_sign_in
from reviewqueue.admin_base import ReadOnlyAdmin
from reviewqueue.audit.services import Actor
from reviewqueue.errors import FieldError

ROLE_HELP = _(
    "Roles and groups decide what a user may do and which documents they may read. They are "
    "set with `manage.py adduser NAME --role ROLE --group GROUP`, which records the change in "
    "the audit log; here they are only shown. Users are never deleted: deactivate them with "
    "the action \"Deactivate selected users\" or `manage.py deactivate_user NAME`, and bring "
    "them back with \"Reactivate selected users\" or `manage.py reactivate_user NAME`."
)

# Actions offered both on the list (for the ticked rows) and on one record's own page.
LIST_AND_FORM = [ActionLocation.CHANGE_LIST, ActionLocation.CHANGE_FORM]


class TokenStateFilter(admin.SimpleListFilter):
    title = _("state")
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("active", gettext("Active")), ("revoked", gettext("Revoked"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> QuerySet[ApiToken]:
        if self.value() in ("active", "revoked"):
            return queryset.filter(revoked_at__isnull=self.value() == "active")
        return queryset


@admin.register(ApiToken)
class ApiTokenAdmin(ReadOnlyAdmin):
    """Read-only, with two actions: revoking (tokens_revoke) and rotating (token_replace), both
    audited. Widening a token's scopes or un-revoking it is not possible anywhere: issue a new
    one."""

    list_display = ("prefix", "user", "name", "scope_list", "state", "created_at", "last_used_at")
    list_select_related = ("user",)
    list_filter = (TokenStateFilter,)
    # The digest is left out: nobody needs to read it, and it would single the token out.
    fields = ("prefix", "user", "name", "scopes", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke_selected", "rotate_selected"]
    list_help = _("Tokens are issued with `manage.py issue_token NAME` (the only time a token is "
                 "shown), revoked here or with `manage.py revoke_token`, and rotated with "
                 "`manage.py rotate_token` (here, your own only).")

    @admin.display(description=_("scopes"))
    def scope_list(self, token: ApiToken) -> str:
        return ", ".join(token.scopes) or gettext("none")

    @admin.display(description=_("state"), ordering="revoked_at")
    def state(self, token: ApiToken) -> str:
        """Whether the token still works, first: a rotation leaves two rows of one name."""
        if token.revoked_at is None:
            return gettext("active")
        return gettext("revoked %(when)s") % {
            "when": f"{timezone.localtime(token.revoked_at):%Y-%m-%d %H:%M}"}

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return self.holds_model_permission(request, "change")

    @admin.action(description=_("Revoke selected tokens"), permissions=["revoke"],
                  location=LIST_AND_FORM)
    def revoke_selected(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        ids = list(queryset.values_list("pk", flat=True))
        revoked = tokens_revoke(actor=Actor.of_user(request.user), token_ids=ids)
        message = ngettext("%(count)d token revoked.", "%(count)d tokens revoked.",
                           revoked) % {"count": revoked}
        if revoked < len(ids):
            already = len(ids) - revoked
            message += " " + ngettext("%(count)d had been revoked already.",
                                      "%(count)d had been revoked already.",
                                      already) % {"count": already}
        self.message_user(request, message, messages.SUCCESS)

    @admin.action(description=_("Rotate the selected token (revoke it, issue its successor)"),
                  permissions=["revoke"], location=LIST_AND_FORM)
    def rotate_selected(self, request: HttpRequest,
                        queryset: QuerySet[ApiToken]) -> HttpResponse | None:
        """For a token of yours that leaked: you get a successor with the same name and scopes,
        shown on the page this returns and nowhere else. Another's is refused: its successor
        would be shown to you, and with it whatever its holder may read and do (a service
        reads every answer), which being an admin is no reason to."""
        ids = list(queryset.values_list("pk", flat=True)[:2])
        if len(ids) != 1:
            self.message_user(request, gettext("Rotate one token at a time: its successor is "
                                               "shown once, on its own page."), messages.ERROR)
            return None
        if queryset.exclude(user=request.user).exists():
            self.message_user(request, gettext(
                "Only your own tokens are rotated here: another's successor would be shown to "
                "you, and with it what its holder may read and do. Revoke it here, and have "
                "its successor issued to its holder with manage.py rotate_token."),
                messages.ERROR)
            return None
        try:
            raw = token_replace(token_id=ids[0], actor=Actor.of_user(request.user))
        except FieldError as error:
            self.message_user(request, str(error), messages.ERROR)
            return None
        old = ApiToken.objects.select_related("user").get(pk=ids[0])
        new = ApiToken.objects.get(digest=ApiToken.digest_of(raw))
        context = {**self.admin_site.each_context(request), "opts": self.opts,
                   "title": gettext("New token for %(user)s") % {
                       "user": old.user.get_username()},
                   "old": old, "new": new, "raw": raw}
        request.current_app = self.admin_site.name
        response = TemplateResponse(request, "admin/accounts/token_rotated.html", context)
        add_never_cache_headers(response)  # the secret must not stay in any cache
        return response


# Django registers its own user and group admins; these replace them.
User = get_user_model()
for model in (User, Group):
    if admin.site.is_registered(model):
        admin.site.unregister(model)


class PasswordOnlyChangeForm(AdminPasswordChangeForm):  # type: ignore[type-arg]
    """Django's admin password form without its switch that turns password sign-in off: a new
    password may replace the old one, but whether the account signs in with a password at all
    stays as `adduser` set it."""

    def __init__(self, user: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        self.fields.pop("usable_password", None)
        self.fields["password1"].required = True
        self.fields["password2"].required = True


@admin.register(User)
class BoundedUserAdmin(ReadOnlyAdmin, UserAdmin):  # type: ignore[type-arg]
    """Users are shown, never added, edited or deleted here.

    Deleting a user would null the publisher of revisions and the submitter of answers (rows
    that are meant never to change) and drop their tokens without an audit event; editing the
    form would change roles, groups or the superuser flag without one. Deactivating and
    changing a password go through the account services, which audit them.
    """

    list_display = ("username", "email", "is_active", "is_staff", "is_superuser", "last_login")
    fieldsets = (
        (None, {"fields": ("username", "password_state")}),
        (_("Personal info"), {"fields": ("first_name", "last_name", "email")}),
        (_("Access"), {
            "fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions"),
            "description": ROLE_HELP,
        }),
        (_("Important dates"), {"fields": ("last_login", "date_joined")}),
    )
    actions = ["deactivate_selected", "reactivate_selected"]
    list_help = ROLE_HELP
    change_password_form = PasswordOnlyChangeForm

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # Every field, whatever the permissions say: were the form ever editable again, it
        # would still change nothing.
        return [str(name) for name in flatten_fieldsets(self.fieldsets)]

    @admin.display(description=_("Password"))
    def password_state(self, user: Any) -> str:
        # Shown instead of the password field, which would print the stored hash.
        if not user.has_usable_password():
            return gettext("None: this account signs in with API tokens only.")
        url = reverse("admin:auth_user_password_change", args=[user.pk])
        return format_html('{} <a href="{}">{}</a>', gettext("Set."), url,
                           gettext("Change the password"))

    def has_deactivate_permission(self, request: HttpRequest) -> bool:
        return self.holds_model_permission(request, "change")

    @admin.action(description=_("Deactivate selected users"), permissions=["deactivate"],
                  location=LIST_AND_FORM)
    def deactivate_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        actor = Actor.of_user(request.user)
        done = 0
        # Through the service one by one: it ends their sessions, revokes their tokens and
        # records both. The admin's own account is left alone so nobody locks themselves out
        # with "select all".
        for user in queryset.exclude(pk=request.user.pk).filter(is_active=True):
            user_deactivate(user=user, actor=actor)
            done += 1
        self.message_user(request, ngettext("%(count)d user deactivated.",
                                            "%(count)d users deactivated.", done)
                          % {"count": done}, messages.SUCCESS)
        if queryset.filter(pk=request.user.pk).exists():
            self.message_user(request, gettext("Your own account was left active."),
                              messages.WARNING)

    def has_reactivate_permission(self, request: HttpRequest) -> bool:
        return self.holds_model_permission(request, "change")

    @admin.action(description=_("Reactivate selected users (their old tokens stay revoked)"),
                  permissions=["reactivate"], location=LIST_AND_FORM)
    def reactivate_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        actor = Actor.of_user(request.user)
        done = sum(user_reactivate(user=user, actor=actor) for user in queryset)
        self.message_user(request, ngettext("%(count)d user reactivated.",
                                            "%(count)d users reactivated.", done)
                          % {"count": done}, messages.SUCCESS)

    @method_decorator(sensitive_post_parameters())
    def user_change_password(self, request: HttpRequest, id: str,
                             form_url: str = "") -> HttpResponse:
        """Django's password view, but the new password is set by user_password_set, so the
        change is audited, and only for accounts that already have a password."""
        if not self.holds_model_permission(request, "change"):
            raise PermissionDenied
        user = self.get_object(request, unquote(id))
        if user is None:
            raise Http404(f"no user with id {id!r}")
        if not user.has_usable_password():
            # Giving a token-only account a password would let it sign in on the pages.
            raise PermissionDenied
        form = self.change_password_form(user, request.POST if request.method == "POST" else None)
        if form.is_valid():
            user_password_set(user=user, password=form.cleaned_data["password1"],
                              actor=Actor.of_user(request.user))
            if user.pk == request.user.pk:
                # Changing one's own password would otherwise sign this session out.
                update_session_auth_hash(request, user)
            self.message_user(request, gettext("Password changed."), messages.SUCCESS)
            return HttpResponseRedirect(
                reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_change",
                        args=[user.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Change password: %(user)s") % {"user": user.get_username()},
            "form": form,
            "opts": self.opts,
            "original": user,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "admin/accounts/password_change.html", context)


@admin.register(Group)
class BoundedGroupAdmin(ReadOnlyAdmin, GroupAdmin):
    """Groups are roles and reading principals (`group:<name>`): renaming one, changing its
    permissions or deleting it would change who reads what with no audit event. Shown only."""

    fieldsets = ((None, {"fields": ("name", "permissions"), "description": ROLE_HELP}),)
    list_help = ROLE_HELP


_django_password_change = admin.site.password_change


def _audited_password_change(request: HttpRequest,
                             extra_context: dict[str, Any] | None = None) -> HttpResponse:
    """The admin header's "Change password" (an admin changing their own) is Django's view;
    a change it makes (a redirect after the POST) is recorded like one made on a user's page."""
    # One transaction: the new password is saved with its audit event, or neither is.
    with transaction.atomic():
        response = _django_password_change(request, extra_context)
        if request.method == "POST" and response.status_code == 302:
            user_password_changed(user=request.user, actor=Actor.of_user(request.user))
    return response


# An instance attribute: the admin site builds its URLs from `self.password_change`.
admin.site.password_change = _audited_password_change  # type: ignore[method-assign]


_django_login = admin.site.login


def _throttled_login(request: HttpRequest,
                     extra_context: dict[str, Any] | None = None) -> HttpResponse:
    """The admin's own sign-in form (/admin/login/) checks passwords too: without the
    throttle of /accounts/login/ it would let anyone guess an admin's password without end."""
    if request.method == "POST":
        next_url = request.POST.get("next") or request.GET.get("next") or reverse("admin:index")
        if refused := refuse_throttled_sign_in(request, next_url=str(next_url)):
            return refused
    return _django_login(request, extra_context)


admin.site.login = _throttled_login  # type: ignore[method-assign]
