"""Conflicts dismissed as an exception before 0006 kept no exception facts, so every fact on
their key stayed out of the gate, the exception's value too. Those still dismissed get their
exception facts now, where the rule finds them; one it finds none in stays as it was."""

from django.db import migrations


def exceptions_of_earlier_dismissals(apps, schema_editor):
    from reviewqueue.sources.conflicts import EXCEPTION, exception_facts

    Conflict = apps.get_model("sources", "Conflict")
    for conflict in Conflict.objects.filter(status="dismissed", exceptions=[],
                                            dismissal_reason__startswith=EXCEPTION):
        conflict.exceptions = exception_facts(conflict.participants)
        if conflict.exceptions:
            conflict.save(update_fields=["exceptions"])


class Migration(migrations.Migration):

    dependencies = [("sources", "0006_conflict_exceptions")]

    operations = [migrations.RunPython(exceptions_of_earlier_dismissals,
                                       migrations.RunPython.noop)]
