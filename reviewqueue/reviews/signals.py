"""Signals other areas listen to (webhooks, notifications). Sent inside the transaction;
receivers that talk to the outside world must defer with transaction.on_commit."""

from django.dispatch import Signal

# Answers changed status: one send for one answer or a whole batch. kwargs: actor, and changes,
# a list of dicts with the keys answer, old_status, new_status, verdict, actor, cause.
answers_status_changed = Signal()
