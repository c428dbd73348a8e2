from django.contrib import admin

from reviewqueue.admin_base import ReadOnlyAdmin
from reviewqueue.sources.models import Document, Fact, Passage, Revision


# Documents change through publishing and the owner pages (audited, re-evaluated): shown only.
@admin.register(Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ("key", "owner", "current_revision", "withdrawn_at")
    search_fields = ("key",)
    # A revision's name includes its document's key, so that is joined too.
    list_select_related = ("owner", "current_revision", "current_revision__document")


@admin.register(Revision)
class RevisionAdmin(ReadOnlyAdmin):
    list_display = ("document", "revision", "seq", "title", "updated_at", "published_at")
    list_select_related = ("document",)
    search_fields = ("document__key", "revision")


@admin.register(Fact)
class FactAdmin(ReadOnlyAdmin):
    list_display = ("revision", "subject", "key", "value", "valid_from", "valid_until")
    list_select_related = ("revision", "revision__document")
    search_fields = ("key", "subject")


@admin.register(Passage)
class PassageAdmin(ReadOnlyAdmin):
    list_display = ("revision", "span")
    list_select_related = ("revision", "revision__document")
