"""Signals other areas listen to (webhooks, notifications). Sent inside the transaction;
receivers that talk to the outside world must defer with transaction.on_commit."""

from django.dispatch import Signal

# kwargs: answer, old_status, new_status, verdict, actor, cause
answer_status_changed = Signal()

# The same for many answers at once (a batch ingest). kwargs: changes, a list of dicts with
# the keys above, and actor.
answers_status_changed = Signal()
