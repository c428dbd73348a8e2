"""Indexes for the queue at scale: visibility checks and capped counts read indexes only."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0004_owner_handoff"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="retrieveditem",
            index=models.Index(fields=["answer", "document_key"],
                               name="retrieved_answer_document"),
        ),
        migrations.RemoveIndex(model_name="reviewitem", name="review_item_reason_age"),
        migrations.AddIndex(
            model_name="reviewitem",
            index=models.Index(fields=["primary_reason", "entered_at", "id"],
                               include=("answer",), name="review_item_reason_age"),
        ),
    ]
