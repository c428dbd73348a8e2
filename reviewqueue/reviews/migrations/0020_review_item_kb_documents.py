"""A queue entry keeps what its hold rests on through the knowledge base: the documents its
current verdict's conflicting_sources findings name in `kb_documents`. The owner inbox counts,
and a conflict's page lists, the answers held over its documents this way through an index of
them; before, only those that retrieved one of its documents were found.

The column is filled in for the items already queued, from their answer's current verdict, in
one statement: the findings are read only for verdicts with such a finding (the jsonpath test
runs on each queued item's verdict once; 100,000 items take a second or two). The documents are
sorted by code point ("C"), as Python's sorted() orders those the services write, and kept once
each. The index is built after the fill, in one pass. Undone, the index and the column are
dropped; nothing else depends on them."""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
from django.db import migrations, models

FILL = """
UPDATE reviews_reviewitem AS item
SET kb_documents = ARRAY(
    SELECT DISTINCT named.key COLLATE "C"
    FROM jsonb_array_elements(verdict.findings) AS finding,
         -- A finding with no list there (none, or JSON null) names nothing.
         jsonb_array_elements_text(CASE WHEN jsonb_typeof(finding -> 'kb_documents') = 'array'
                                        THEN finding -> 'kb_documents' END) AS named(key)
    WHERE finding ->> 'code' = 'conflicting_sources'
    ORDER BY 1)::varchar(200)[]
FROM reviews_answer AS answer
JOIN reviews_verdict AS verdict ON verdict.id = answer.current_verdict_id
WHERE answer.id = item.answer_id
  AND jsonb_typeof(verdict.findings) = 'array'
  AND jsonb_path_exists(verdict.findings,
                        '$[*] ? (@.code == "conflicting_sources" && exists(@.kb_documents[*]))')
"""


class Migration(migrations.Migration):

    dependencies = [
        ('reviews', '0019_verbose_names'),
    ]

    operations = [
        migrations.AddField(
            model_name='reviewitem',
            name='kb_documents',
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(max_length=200),
                db_default=models.Value([], output_field=django.contrib.postgres.fields.ArrayField(
                    base_field=models.CharField(max_length=200))),
                default=list),
        ),
        # Undone with the column: nothing to do before it is dropped.
        migrations.RunSQL(FILL, reverse_sql=migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name='reviewitem',
            index=django.contrib.postgres.indexes.GinIndex(
                condition=models.Q(('kb_documents', []), _negated=True), fields=['kb_documents'],
                name='review_item_kb_documents'),
        ),
    ]
