"""PostgreSQL refuses UPDATE and DELETE on revisions, their passages and their facts, whoever
asks (design invariant 1): a correction is a new revision. `verify_sources` checks what is
stored against the audit events that published it. The function is shared: verdicts and
decisions use it too (reviews 0013)."""

from django.db import migrations

TABLES = ("sources_revision", "sources_passage", "sources_fact")

FORWARD = """
CREATE FUNCTION refuse_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
""" + "".join(f"""
CREATE TRIGGER {table}_no_update_delete
    BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
""" for table in TABLES)

BACKWARD = "".join(f"DROP TRIGGER IF EXISTS {table}_no_update_delete ON {table};\n"
                   for table in TABLES) + "DROP FUNCTION IF EXISTS refuse_change();\n"


class Migration(migrations.Migration):
    dependencies = [("sources", "0004_revision_title_upper")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
