"""Admin classes shared by the areas."""

from __future__ import annotations

from typing import Any

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """For immutable records (revisions, verdicts, audit events): shown, never edited here."""

    show_full_result_count = False

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False
