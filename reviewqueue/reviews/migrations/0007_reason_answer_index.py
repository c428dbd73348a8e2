"""An index for the queue's counts per reason: they read a reason's items in answer order."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0006_lean_answer_indexes"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="reviewitem",
            index=models.Index(fields=["primary_reason", "answer"],
                               name="review_item_reason_answer"),
        ),
    ]
