"""A GIN index of answer versions' claims (jsonb_path_ops), for "which answers claim key K?".

The gate compares each claim with the facts on its key in every document of the knowledge
base, cited or not, so a publish or a withdrawal re-evaluates the answers that claim one of the
document's keys as well as those that cite it.

Built CONCURRENTLY: every ingest and every edit writes to this table."""

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations


class Migration(migrations.Migration):

    atomic = False

    dependencies = [
        ("reviews", "0008_conflicting_items_index"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="answerversion",
            index=GinIndex(fields=["claims"], name="answer_version_claims",
                           opclasses=["jsonb_path_ops"]),
        ),
    ]
