"""Every audit search reads its page in (created_at, seq) order, its dates as an index range.

(actor, seq), (action, seq) and (document_id, seq) become (field, created_at, seq); a partial
index holds the events about a document that name no document (or another one); the single
column indexes on trace_id and document_id, which the (field, ...) indexes cover, go.

The new indexes are built CONCURRENTLY, before the old ones go, so that appending to the log
(every state change does) is never blocked and no search is left without its index."""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):

    atomic = False

    dependencies = [
        ('audit', '0004_page_indexes'),
    ]

    operations = [
        AddIndexConcurrently(
            model_name='auditevent',
            index=models.Index(fields=['actor', 'created_at', 'seq'],
                               name='audit_event_actor_time'),
        ),
        AddIndexConcurrently(
            model_name='auditevent',
            index=models.Index(fields=['action', 'created_at', 'seq'],
                               name='audit_event_action_time'),
        ),
        AddIndexConcurrently(
            model_name='auditevent',
            index=models.Index(fields=['document_id', 'created_at', 'seq'],
                               name='audit_event_document_time'),
        ),
        AddIndexConcurrently(
            model_name='auditevent',
            index=models.Index(condition=~models.Q(document_id=models.F('object_id')),
                               fields=['object_type', 'object_id', 'created_at', 'seq'],
                               name='audit_event_object_other'),
        ),
        RemoveIndexConcurrently(
            model_name='auditevent',
            name='audit_audit_action_4839b2_idx',
        ),
        RemoveIndexConcurrently(
            model_name='auditevent',
            name='audit_audit_actor_dbe21c_idx',
        ),
        RemoveIndexConcurrently(
            model_name='auditevent',
            name='audit_event_document_seq',
        ),
        migrations.AlterField(
            model_name='auditevent',
            name='document_id',
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AlterField(
            model_name='auditevent',
            name='trace_id',
            field=models.CharField(blank=True, max_length=200),
        ),
    ]
