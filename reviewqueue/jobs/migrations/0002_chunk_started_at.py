"""When a worker first took a chunk up, and an index to find chunks sent after a chunk that did
start.

jobs_resume_stalled sends a chunk again as soon as chunks of its batch sent after it have been
taken up and it has not, instead of waiting REEVALUATION_CHUNK_LOST_SECONDS.

The column is nullable without a default, so adding it does not rewrite the table. Every
existing chunk has it NULL, so the partial index starts empty; it is still built CONCURRENTLY
because building it reads the whole table, and workers finish chunks all the time."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):

    atomic = False

    dependencies = [
        ("jobs", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="jobchunk",
            name="started_at",
            field=models.DateTimeField(
                blank=True, null=True, help_text="When a worker first took the chunk up"
            ),
        ),
        AddIndexConcurrently(
            model_name="jobchunk",
            index=models.Index(condition=models.Q(started_at__isnull=False),
                               fields=["job", "enqueued_at", "number"],
                               name="job_chunk_started_order"),
        ),
    ]
