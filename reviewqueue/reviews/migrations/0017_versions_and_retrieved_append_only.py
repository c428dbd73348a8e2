"""PostgreSQL refuses UPDATE and DELETE on answer versions and retrieved items, as it does on
verdicts and decisions (0013): an edit adds a version, and nothing rewrites the text or claims
a reviewer approved, nor what the answer retrieved."""

from django.db import migrations

TABLES = ("reviews_answerversion", "reviews_retrieveditem")

# refuse_change() is the function sources 0005 made for revisions, passages and facts.
FORWARD = "".join(f"""
CREATE TRIGGER {table}_no_update_delete
    BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
""" for table in TABLES)

BACKWARD = "".join(f"DROP TRIGGER IF EXISTS {table}_no_update_delete ON {table};\n"
                   for table in TABLES)


class Migration(migrations.Migration):
    dependencies = [("reviews", "0016_owner_question_owners")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
