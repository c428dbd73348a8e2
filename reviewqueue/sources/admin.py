from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from reviewqueue.accounts.principals import EVERYONE, user_principals
from reviewqueue.admin_base import ReadableOnlyAdmin, ReadOnlyAdmin
from reviewqueue.sources.models import Document, Fact, Passage, Revision


# Documents change through publishing and the owner pages (audited, re-evaluated): shown only.
# A document's page names its revisions but shows nothing of what they say.
@admin.register(Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ("key", "owner", "current_revision", "withdrawn_at")
    search_fields = ("key",)
    # A revision's name includes its document's key, so that is joined too.
    list_select_related = ("owner", "current_revision", "current_revision__document")
    # Named, not linked: the revision's own page answers only those its principals let read
    # it, and a link to a page answered as missing reads as a broken one.
    exclude = ("current_revision",)
    readonly_fields = ("current",)

    @admin.display(description=_("current revision"))
    def current(self, document: Document) -> str:
        return str(document.current_revision) if document.current_revision else "-"


class ReadableRevisionsAdmin(ReadableOnlyAdmin):
    """Rows of revisions the signed-in person may read, by the revision's own allowed
    principals, as the product's pages show a revision: being an admin is no reason to read a
    restricted document (invariant 5)."""

    # The lookup of the row's revision's allowed principals.
    principals_lookup = "revision__allowed_principals"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        principals = sorted({*user_principals(request.user), EVERYONE})
        return super().get_queryset(request).filter(
            **{f"{self.principals_lookup}__overlap": principals})


@admin.register(Revision)
class RevisionAdmin(ReadableRevisionsAdmin):
    list_display = ("document", "revision", "seq", "title", "updated_at", "published_at")
    list_select_related = ("document",)
    search_fields = ("document__key", "revision")
    principals_lookup = "allowed_principals"


@admin.register(Fact)
class FactAdmin(ReadableRevisionsAdmin):
    list_display = ("revision", "subject", "key", "value", "valid_from", "valid_until")
    list_select_related = ("revision", "revision__document")
    search_fields = ("key", "subject")


@admin.register(Passage)
class PassageAdmin(ReadableRevisionsAdmin):
    list_display = ("revision", "span")
    list_select_related = ("revision", "revision__document")
