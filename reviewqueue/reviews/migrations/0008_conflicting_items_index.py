"""A partial index of the answers queued for conflicting sources (among any of their reasons).

The conflict inbox counts held answers from this side when they are fewer than the citations of
the owner's documents: a document cited by 200,000 answers, few of them held for a conflict,
no longer costs a read of every citation.

Built CONCURRENTLY: every answer that enters or leaves the queue writes to this table, and
ingest must not wait for the build."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):

    atomic = False

    dependencies = [
        ("reviews", "0007_reason_answer_index"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="reviewitem",
            index=models.Index(fields=["answer"], name="review_item_conflicting",
                               condition=models.Q(reasons__contains=["conflicting_sources"])),
        ),
    ]
