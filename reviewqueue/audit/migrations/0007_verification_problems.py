"""Every problem a verification finds, not only the first: how far the walk got, how many
problems, the first of them and a digest of all of them.

Adding columns rewrites no row, so the append-only trigger on the runs is not involved; runs
recorded before this have no list and no digest, which the alert check allows for.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0006_truncate_switch_on_the_database_only'),
    ]

    operations = [
        migrations.AddField(
            model_name='verificationrun',
            name='checked_to_seq',
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='verificationrun',
            name='problem_count',
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='verificationrun',
            name='problems',
            field=models.JSONField(blank=True, default=list, help_text='The first problems found: seq, problem, detail'),
        ),
        migrations.AddField(
            model_name='verificationrun',
            name='problems_digest',
            field=models.CharField(blank=True, max_length=64),
        ),
    ]
