"""An index of revisions' titles, case aside: UPPER(title), as `title__iexact` compares them.

Admins name a document by its title in the audit search and on the jobs page
(selectors.document_keys_named); without it, each lookup read every revision.

Built CONCURRENTLY: every publish writes to this table."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models
from django.db.models.functions import Upper


class Migration(migrations.Migration):

    atomic = False

    dependencies = [
        ("sources", "0003_conflict_documents_ever"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="revision",
            index=models.Index(Upper("title"), name="revision_title_upper"),
        ),
    ]
