"""A broken run keeps the hash of the last event it checked when its anchor held, so the next
run can still tell that events were removed from the end after the chain broke.

Adding a column rewrites no row, so the append-only trigger on the runs is not involved; runs
recorded before this keep no tip, and the next run falls back to the last clean one.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0008_actor_type_labels'),
    ]

    operations = [
        migrations.AddField(
            model_name='verificationrun',
            name='tip_hash',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
    ]
