"""PostgreSQL refuses UPDATE and DELETE on verdicts and decisions, whoever asks (design
invariant 1), as it does on the audit log and on revisions. Neither row carries a hash: the
audit timeline sets each beside the chained event that recorded it."""

from django.db import migrations

TABLES = ("reviews_verdict", "reviews_decision")

# refuse_change() is the function sources 0005 made for revisions, passages and facts.
FORWARD = "".join(f"""
CREATE TRIGGER {table}_no_update_delete
    BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
""" for table in TABLES)

BACKWARD = "".join(f"DROP TRIGGER IF EXISTS {table}_no_update_delete ON {table};\n"
                   for table in TABLES)


class Migration(migrations.Migration):
    dependencies = [("reviews", "0012_verdict_trigger_other_document"),
                    ("sources", "0005_revisions_append_only")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
