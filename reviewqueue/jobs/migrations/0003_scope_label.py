"""A document job now also covers the answers that claim one of the document's keys; its
label says so (labels only: no column changes)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("jobs", "0002_chunk_started_at"),
    ]

    operations = [
        migrations.AlterField(
            model_name="job",
            name="scope",
            field=models.CharField(
                choices=[("answers", "Chosen answers"),
                         ("document", "Answers citing a document or claiming one of its keys"),
                         ("all", "Every answer"), ("validity", "Validity boundary reached")],
                max_length=16),
        ),
    ]
