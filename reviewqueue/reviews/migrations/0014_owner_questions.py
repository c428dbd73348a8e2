"""A reviewer's questions to the owners get a table of their own, with the owner's reply, and
outlive the queue entry: the answer's page shows them after it is decided. The question a
queue entry was waiting on moves there."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVE_QUESTIONS = """
WITH asked AS (
    INSERT INTO reviews_ownerquestion (answer_id, asked_by_id, asked_at, note, reply)
    SELECT answer_id, sent_to_owner_by_id, sent_to_owner_at, owner_note, ''
    FROM reviews_reviewitem WHERE sent_to_owner_at IS NOT NULL
    RETURNING id, answer_id
)
UPDATE reviews_reviewitem AS item SET owner_question_id = asked.id
FROM asked WHERE item.answer_id = asked.answer_id
"""

# The old columns hold one question per queue entry and no reply: undoing this migration
# would lose every reply, and every question of an answer no longer queued, so it is refused
# while there is one.
REFUSE_LOSING_QUESTIONS = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM reviews_ownerquestion AS q
               WHERE q.reply <> '' OR q.replied_at IS NOT NULL OR NOT EXISTS (
                   SELECT 1 FROM reviews_reviewitem AS item
                   WHERE item.owner_question_id = q.id)) THEN
        RAISE EXCEPTION 'reviews 0014 cannot be undone: owners'' replies, or questions about '
            'answers no longer in the queue, have no column to go back to and would be lost';
    END IF;
END $$;
"""

MOVE_THEM_BACK = REFUSE_LOSING_QUESTIONS + """
UPDATE reviews_reviewitem AS item
SET owner_note = q.note, sent_to_owner_by_id = q.asked_by_id, sent_to_owner_at = q.asked_at
FROM reviews_ownerquestion AS q WHERE q.id = item.owner_question_id
"""


class Migration(migrations.Migration):

    dependencies = [
        ("reviews", "0013_verdicts_and_decisions_append_only"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="OwnerQuestion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                                           verbose_name="ID")),
                ("asked_at", models.DateTimeField()),
                ("note", models.TextField(help_text="What the reviewer asked the owners")),
                ("replied_at", models.DateTimeField(blank=True, null=True)),
                ("reply", models.TextField(blank=True, help_text="What the owner answered")),
                ("answer", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                             related_name="owner_questions",
                                             to="reviews.answer")),
                ("asked_by", models.ForeignKey(blank=True, null=True,
                                               on_delete=django.db.models.deletion.SET_NULL,
                                               related_name="+", to=settings.AUTH_USER_MODEL)),
                ("replied_by", models.ForeignKey(blank=True, null=True,
                                                 on_delete=django.db.models.deletion.SET_NULL,
                                                 related_name="+",
                                                 to=settings.AUTH_USER_MODEL)),
            ],
            options={
                "indexes": [models.Index(fields=["answer", "asked_at"],
                                         name="owner_question_answer")],
            },
        ),
        migrations.AddField(
            model_name="reviewitem",
            name="owner_question",
            field=models.ForeignKey(blank=True, null=True,
                                    on_delete=django.db.models.deletion.SET_NULL,
                                    related_name="+", to="reviews.ownerquestion"),
        ),
        migrations.RunSQL(MOVE_QUESTIONS, MOVE_THEM_BACK),
        migrations.RemoveField(model_name="reviewitem", name="owner_note"),
        migrations.RemoveField(model_name="reviewitem", name="sent_to_owner_at"),
        migrations.RemoveField(model_name="reviewitem", name="sent_to_owner_by"),
        migrations.AddConstraint(
            model_name="reviewitem",
            constraint=models.CheckConstraint(
                condition=models.Q(waiting_for_owner=False)
                | models.Q(owner_question__isnull=False),
                name="review_item_waits_on_a_question"),
        ),
    ]
