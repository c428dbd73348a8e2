"""Indexes that let every audit search read one page in index order, however long the log.

The (created_at) index becomes (created_at, seq); traces and documents get (field, seq)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0003_verification_runs_and_alerts'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='auditevent',
            name='audit_audit_created_7710b7_idx',
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['created_at', 'seq'], name='audit_event_time_seq'),
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['trace_id', 'seq'], name='audit_event_trace_seq'),
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['document_id', 'seq'], name='audit_event_document_seq'),
        ),
    ]
