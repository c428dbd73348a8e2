"""The keys each answer version claims, as a text[] column with a GIN index, in place of the
GIN index of the claims themselves (jsonb_path_ops), for "which answers claim key K?".

At 100,000 answers PostgreSQL scanned every version (about 15 ms) rather than read the jsonb
index (about 2). It prices a jsonb_path_ops scan high (an entry per path and value of every
claim) and keeps no element statistics for jsonb. For an array column ANALYZE keeps the most
common elements and their frequencies, from which `claim_keys && ARRAY[K]` is estimated, and
the index holds one small entry per key. (The query changed as well: `answer_ids_claiming`.)

`claim_keys` is a stored generated column: PostgreSQL computes it from `claims` on every
INSERT and COPY, whatever writes the row, and no code can set it. Adding it rewrites the
table, which fills it in for the versions already stored; the table is locked meanwhile (about
0.6 s for 100,000 versions). The indexes are then built and dropped CONCURRENTLY: every ingest
and every edit writes to this table.

`reviews_claim_keys(claims)` is the string `key` of each object element of the array, in
order: exactly the keys K for which `claims @> '[{"key": K}]'` holds (a claims value that is
not an array, an element that is not an object and a key that is not a string claim no key). A
key claimed twice is listed twice: `&&`, the GIN index and ANALYZE take each once, and leaving
out DISTINCT makes the function a quarter cheaper (3 microseconds a version, not 4). A
SQL-standard body, parsed once here: it does not depend on the search_path of whoever writes a
row or restores a dump."""

import django.contrib.postgres.fields
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models

CREATE_FUNCTION = """
CREATE FUNCTION reviews_claim_keys(claims jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ARRAY(
    SELECT claim ->> 'key'
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(claims) = 'array' THEN claims END) AS claim
    WHERE jsonb_typeof(claim -> 'key') = 'string'
)
"""


class Migration(migrations.Migration):

    atomic = False

    dependencies = [
        ("reviews", "0009_version_claims_index"),
    ]

    operations = [
        migrations.RunSQL(CREATE_FUNCTION, "DROP FUNCTION reviews_claim_keys(jsonb)"),
        migrations.AddField(
            model_name="answerversion",
            name="claim_keys",
            field=models.GeneratedField(
                db_persist=True,
                expression=models.Func(
                    "claims", function="reviews_claim_keys",
                    output_field=django.contrib.postgres.fields.ArrayField(
                        base_field=models.TextField()),
                ),
                output_field=django.contrib.postgres.fields.ArrayField(
                    base_field=models.TextField()),
            ),
        ),
        AddIndexConcurrently(
            model_name="answerversion",
            index=GinIndex(fields=["claim_keys"], name="answer_version_claim_keys"),
        ),
        RemoveIndexConcurrently(
            model_name="answerversion",
            name="answer_version_claims",
        ),
    ]
