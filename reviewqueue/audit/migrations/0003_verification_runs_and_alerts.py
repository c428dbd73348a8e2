"""Verification runs and alerts, and indexes for the audit search.

A verification run is the anchor the next run checks the log against, so PostgreSQL refuses to
change or remove one, like the events themselves (TRUNCATE only with the same switch the test
runner uses). Alerts are not protected: acknowledging one is an update, and it is audited.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


RUNS_APPEND_ONLY = """
CREATE FUNCTION audit_verification_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE'
       AND current_setting('reviewqueue.allow_audit_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER audit_verification_no_update_delete
    BEFORE UPDATE OR DELETE ON audit_verificationrun
    FOR EACH ROW EXECUTE FUNCTION audit_verification_append_only();

CREATE TRIGGER audit_verification_no_truncate
    BEFORE TRUNCATE ON audit_verificationrun
    FOR EACH STATEMENT EXECUTE FUNCTION audit_verification_append_only();
"""

RUNS_APPEND_ONLY_BACKWARD = """
DROP TRIGGER IF EXISTS audit_verification_no_truncate ON audit_verificationrun;
DROP TRIGGER IF EXISTS audit_verification_no_update_delete ON audit_verificationrun;
DROP FUNCTION IF EXISTS audit_verification_append_only();
"""


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0002_append_only_trigger'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='AuditAlert',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('first_bad_seq', models.BigIntegerField(blank=True, null=True)),
                ('problem', models.CharField(max_length=32)),
                ('message', models.TextField()),
                ('acknowledged_at', models.DateTimeField(blank=True, null=True)),
            ],
            options={
                'ordering': ['-created_at'],
            },
        ),
        migrations.CreateModel(
            name='VerificationRun',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('started_at', models.DateTimeField()),
                ('finished_at', models.DateTimeField()),
                ('trigger', models.CharField(choices=[('command', 'verify_audit command'), ('nightly', 'Nightly job'), ('manual', 'Requested on the audit page')], max_length=16)),
                ('requested_by', models.CharField(blank=True, max_length=200)),
                ('ok', models.BooleanField()),
                ('events_checked', models.BigIntegerField(default=0)),
                ('last_seq', models.BigIntegerField(blank=True, null=True)),
                ('last_hash', models.CharField(blank=True, max_length=64)),
                ('first_bad_seq', models.BigIntegerField(blank=True, null=True)),
                ('problem', models.CharField(blank=True, max_length=32)),
                ('detail', models.TextField(blank=True)),
            ],
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['object_type', 'object_id', 'seq'], name='audit_event_object'),
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['actor'], name='audit_event_actor_prefix', opclasses=['varchar_pattern_ops']),
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['action'], name='audit_event_action_prefix', opclasses=['varchar_pattern_ops']),
        ),
        migrations.AddField(
            model_name='auditalert',
            name='acknowledged_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddIndex(
            model_name='verificationrun',
            index=models.Index(fields=['-finished_at'], name='audit_verif_finished'),
        ),
        migrations.AddField(
            model_name='auditalert',
            name='run',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='alerts', to='audit.verificationrun'),
        ),
        migrations.AddIndex(
            model_name='auditalert',
            index=models.Index(condition=models.Q(('acknowledged_at__isnull', True)), fields=['created_at'], name='audit_alert_open'),
        ),
        migrations.RunSQL(RUNS_APPEND_ONLY, RUNS_APPEND_ONLY_BACKWARD),
    ]
