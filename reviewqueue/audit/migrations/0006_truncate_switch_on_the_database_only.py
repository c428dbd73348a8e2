"""TRUNCATE of the audit log and of the verification runs is allowed only where the switch is
set on the database itself (ALTER DATABASE ... SET reviewqueue.allow_audit_truncate = 'on', as
the test runner does for its throw-away database), no longer by any session that sets it."""

from django.db import migrations

SWITCH_ON_THE_DATABASE = """
EXISTS (SELECT 1 FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
        WHERE d.datname = current_database() AND s.setrole = 0
          AND 'reviewqueue.allow_audit_truncate=on' = ANY (s.setconfig))
"""
SWITCH_IN_THE_SESSION = "current_setting('reviewqueue.allow_audit_truncate', true) = 'on'"


def functions(switch: str) -> str:
    return "".join(f"""
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' AND {switch} THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION '{message}', {args}
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
""" for name, message, args in (
        ("audit_event_append_only", "audit_auditevent is append-only: % refused", "TG_OP"),
        ("audit_verification_append_only", "% is append-only: % refused",
         "TG_TABLE_NAME, TG_OP"),
    ))


class Migration(migrations.Migration):
    dependencies = [("audit", "0005_time_ordered_indexes")]

    operations = [migrations.RunSQL(functions(SWITCH_ON_THE_DATABASE),
                                    functions(SWITCH_IN_THE_SESSION))]
