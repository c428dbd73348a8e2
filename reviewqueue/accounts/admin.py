from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group

from reviewqueue.accounts.models import ApiToken
from reviewqueue.admin_base import BoundedCountAdmin


@admin.register(ApiToken)
class ApiTokenAdmin(BoundedCountAdmin):
    list_display = ("prefix", "user", "name", "scopes", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "digest", "created_at", "last_used_at")
    list_select_related = ("user",)


# Django's own user and group lists, with the same bounded count as every other list.
User = get_user_model()
for model in (User, Group):
    if admin.site.is_registered(model):
        admin.site.unregister(model)


@admin.register(User)
class BoundedUserAdmin(BoundedCountAdmin, UserAdmin):  # type: ignore[type-arg]
    pass


@admin.register(Group)
class BoundedGroupAdmin(BoundedCountAdmin, GroupAdmin):
    pass
