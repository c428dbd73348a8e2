"""The owners a question asked, kept with it. A question asked before is given the owners its
audit event names: the first "review_item.sent_to_owner" event of its answer recorded at or
after it was asked (both are written in one transaction). Owners are named there by username,
as they are now."""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
from django.conf import settings
from django.db import migrations, models


def owners_from_the_log(apps, schema_editor):
    OwnerQuestion = apps.get_model("reviews", "OwnerQuestion")
    AuditEvent = apps.get_model("audit", "AuditEvent")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    ids = dict(User.objects.values_list("username", "id"))
    for question in OwnerQuestion.objects.select_related("answer"):
        event = (AuditEvent.objects.filter(action="review_item.sent_to_owner",
                                           trace_id=question.answer.trace_id,
                                           created_at__gte=question.asked_at)
                 .order_by("seq").first())
        named = ((event.after or {}).get("owners") or []) if event is not None else []
        question.owners = sorted(ids[name] for name in named if name in ids)
        question.save(update_fields=["owners"])


class Migration(migrations.Migration):

    dependencies = [
        ('reviews', '0015_verdict_trigger_restoration'),
        ("audit", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='ownerquestion',
            name='owners',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), blank=True, default=list, help_text='Ids of the owners asked: whose inbox lists the question and who may reply, whatever the sources behind the hold become while it waits'),
        ),
        migrations.AddIndex(
            model_name='ownerquestion',
            index=django.contrib.postgres.indexes.GinIndex(fields=['owners'], name='owner_question_owners'),
        ),
        migrations.RunPython(owners_from_the_log, migrations.RunPython.noop),
    ]
