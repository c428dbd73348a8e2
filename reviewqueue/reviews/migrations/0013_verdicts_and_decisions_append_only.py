"""PostgreSQL refuses UPDATE and DELETE on verdicts and decisions, whoever asks (design
invariant 1), as it does on the audit log. Neither row carries a hash: the audit timeline sets
each beside the chained event that recorded it, and these triggers stop a change being made
through the application's own connection in the first place."""

from django.db import migrations

FORWARD = """
CREATE FUNCTION reviews_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER verdict_no_update_delete
    BEFORE UPDATE OR DELETE ON reviews_verdict
    FOR EACH ROW EXECUTE FUNCTION reviews_append_only();

CREATE TRIGGER decision_no_update_delete
    BEFORE UPDATE OR DELETE ON reviews_decision
    FOR EACH ROW EXECUTE FUNCTION reviews_append_only();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS decision_no_update_delete ON reviews_decision;
DROP TRIGGER IF EXISTS verdict_no_update_delete ON reviews_verdict;
DROP FUNCTION IF EXISTS reviews_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("reviews", "0012_verdict_trigger_other_document")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
