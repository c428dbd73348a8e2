"""Admin classes shared by the areas; their list pages count at most a cap of rows
(see reviewqueue.counting)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from django.contrib import admin
from django.contrib.auth import get_permission_codename
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Model, QuerySet
from django.forms import ModelForm
from django.http import Http404, HttpRequest, HttpResponse

from reviewqueue.counting import COUNT_CAP, bounded_count


class BoundedPaginator(Paginator):
    """The admin's paginator, counting at most `ceiling` rows (and one more, to know there
    are more). Its page links stop at the ceiling; BoundedCountAdmin sets the ceiling a few
    pages past the page shown, so every row can still be reached page by page."""

    def __init__(self, object_list: Any, per_page: int, *args: Any, ceiling: int = COUNT_CAP,
                 **kwargs: Any) -> None:
        super().__init__(object_list, per_page, *args, **kwargs)
        self.ceiling = ceiling

    @cached_property
    def count(self) -> int:  # type: ignore[override]
        if not isinstance(self.object_list, QuerySet):
            return len(self.object_list)
        return bounded_count(self.object_list, self.ceiling)


class BoundedCountAdmin(admin.ModelAdmin):
    """Lists count at most a few pages past the one shown, never the whole table: the paginator
    reads "1000+ audit events" and the search box "1000+ results"."""

    show_full_result_count = False
    # "Show counts" next to the filters would count every choice over the whole table.
    show_facets = admin.ShowFacets.NEVER
    paginator = BoundedPaginator
    # How many pages past the current one the page links reach.
    pages_ahead = 5
    # One sentence under the list's title: where the things listed are changed, when that is
    # not here.
    list_help = ""

    def changelist_view(self, request: HttpRequest,
                        extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if self.list_help:  # drawn under the list's title by templates/admin/change_list.html
            extra_context = {"list_help": self.list_help, **(extra_context or {})}
        return super().changelist_view(request, extra_context)

    def holds_model_permission(self, request: HttpRequest, action: str) -> bool:
        """Django's own permission ("change", "delete", ...) on this model, whatever the
        has_*_permission methods of this admin say: admin actions that go through a service
        check it, since the read-only admins answer False for their forms."""
        opts = self.opts
        codename = get_permission_codename(action, opts)
        return request.user.has_perm(f"{opts.app_label}.{codename}")  # type: ignore[union-attr]

    def get_paginator(self, request: HttpRequest, queryset: Any, per_page: int,
                      orphans: int = 0, allow_empty_first_page: bool = True) -> Paginator:
        try:
            # Clamped: past the last page the admin says so itself; a huge number would
            # overflow PostgreSQL's LIMIT.
            page = min(max(1, int(request.GET.get("p", 1))), 10**9)
        except ValueError:
            page = 1
        ceiling = max(COUNT_CAP, (page + self.pages_ahead) * per_page)
        return self.paginator(queryset, per_page, orphans, allow_empty_first_page,
                              ceiling=ceiling)


class ReadOnlyAdmin(BoundedCountAdmin):
    """For immutable records (revisions, verdicts, audit events): shown, never edited here.

    A subclass may still answer True to has_change_permission (for an action that goes
    through a service): its change page offers no Save buttons all the same, and a form sent
    to it anyway is refused (403) before anything is written.
    """

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def render_change_form(self, request: HttpRequest, context: dict[str, Any],
                           add: bool = False, change: bool = False, form_url: str = "",
                           obj: Any = None) -> HttpResponse:
        # Every field is read-only: "Save" would save nothing (the admin offers it whenever
        # the change permission or an inline says yes). "Close" is offered instead.
        context.update(show_save=False, show_save_and_continue=False,
                       show_save_and_add_another=False)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def save_model(self, request: HttpRequest, obj: Model, form: ModelForm,  # type: ignore[type-arg]
                   change: bool) -> None:
        raise PermissionDenied("read-only: nothing is saved through this admin")

    def save_related(self, request: HttpRequest, form: ModelForm,  # type: ignore[type-arg]
                     formsets: Any, change: bool) -> None:
        raise PermissionDenied("read-only: nothing is saved through this admin")


class ReadableOnlyAdmin(ReadOnlyAdmin):
    """Read-only rows that `get_queryset` limits to what the signed-in person may read. Another
    row is answered as missing, like a row that does not exist, so its id cannot be probed:
    Django's own answer to a missing row is a redirect to the admin's index with a message,
    the product's pages answer 404 (the change, history and delete views all come through
    here)."""

    def get_object(self, request: HttpRequest, object_id: str,
                   from_field: str | None = None) -> Any:
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            raise Http404(f"no {self.opts.verbose_name} with id {object_id!r}")
        return obj


def fixed_choices_filter(
    field: str, choices: Mapping[str, Any] | Callable[[], Mapping[str, Any]], label: Any = ""
) -> type[admin.SimpleListFilter]:
    """A list filter offering a fixed set of values for a text column (or a function giving
    them, asked on each page). Django's own filter for such a column lists the values found in
    it, with a SELECT DISTINCT over the whole table on every page of the list."""

    def offered() -> Mapping[str, Any]:
        return choices() if callable(choices) else choices

    class FixedChoicesFilter(admin.SimpleListFilter):
        title = label or field.replace("_", " ")
        parameter_name = field

        def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
            return [(value, str(name)) for value, name in offered().items()]

        def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
            value = self.value()
            return queryset.filter(**{field: value}) if value in offered() else queryset

    return FixedChoicesFilter
