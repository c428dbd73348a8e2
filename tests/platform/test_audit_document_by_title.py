"""An admin names a document by its id or by its title: in the audit log's search and in the
jobs page's "Re-evaluate document". A title two documents share asks which one (listing
their ids), a text that is neither an id nor a title says so at the field, and the pages show
a document's title beside its id where the admin may read it, for one query a page."""

from __future__ import annotations

import re
from collections.abc import Callable
from html import unescape
from typing import Any
from urllib.parse import urlencode

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor, audit_record
from reviewqueue.jobs.models import Job

pytestmark = pytest.mark.django_db


def _seqs(response: Any) -> list[int]:
    return [int(s) for s in re.findall(r">#(\d+)</a></td>", response.content.decode())]


def _read(html: str) -> str:
    """HTML as read: tags dropped, entities undone, spaces collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def _text(response: Any) -> str:
    return _read(response.content.decode())


def _audit(**query: str) -> str:
    return f"/audit/?{urlencode(query)}"


def _document_field(response: Any) -> str:
    """The text of the search form's Document field: its label, errors and help."""
    match = re.search(r'<div class="field">\s*<label>Document .*?</div>',
                      response.content.decode(), re.S)
    assert match, response.content.decode()
    return _read(match.group(0))


@pytest.fixture
def library(publish: Callable[..., Any]) -> dict[str, str]:
    """Three documents: two of them titled alike, one restricted to HR."""
    publish("pricing", title="Pricing and plans")
    publish("handbook", title="Employee Handbook")
    publish("handbook-2025", title="Employee handbook")
    publish("salaries", title="Salary bands", principals=["group:hr"])
    return {"pricing": "Pricing and plans", "handbook": "Employee Handbook"}


def _by_hand() -> Any:
    """The jobs started on the jobs page (publishing starts jobs of its own)."""
    return Job.objects.filter(trigger="manual")


def _events_naming(document: str) -> list[int]:
    return list(AuditEvent.objects.filter(document_id=document).order_by("-seq")
                .values_list("seq", flat=True))


# --- the audit log ------------------------------------------------------------------------------


def test_an_admin_finds_a_documents_events_by_its_title_in_any_case(
    admin_client: Any, library: dict[str, str]
) -> None:
    by_id = admin_client.get(_audit(document="pricing"))
    by_title = admin_client.get(_audit(document="PRICING and Plans"))
    assert by_title.status_code == 200
    assert _seqs(by_title) == _seqs(by_id) == _events_naming("pricing") != []
    # The field keeps what was typed; paging and exports go on by the id it stands for.
    page = by_title.content.decode()
    assert 'value="PRICING and Plans"' in page
    assert "export.csv?document=pricing" in page


def test_the_export_of_a_search_by_title_holds_that_documents_events(
    admin_client: Any, library: dict[str, str]
) -> None:
    response = admin_client.get("/audit/export.jsonl?" + urlencode(
        {"document": "pricing and plans"}))
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert lines and all('"document_id":"pricing"' in line for line in lines)


def test_a_title_two_documents_share_is_refused_listing_their_ids(
    admin_client: Any, library: dict[str, str]
) -> None:
    response = admin_client.get(_audit(document="employee handbook"))
    assert response.status_code == 400
    assert _document_field(response).startswith(
        "Document Several documents have the title “employee handbook”: handbook, "
        "handbook-2025. Enter the id of the one you mean.")
    assert _seqs(response) == []


def test_a_text_that_is_no_id_and_no_title_is_refused_at_the_document_field(
    admin_client: Any, library: dict[str, str]
) -> None:
    response = admin_client.get(_audit(document="Pricing & plans"))
    assert response.status_code == 400
    assert _document_field(response).startswith(
        "Document There is no document Pricing & plans. Neither a document id nor the title "
        "of a document you may read matches it: a document you may not read is found by its "
        "id.")


def test_an_id_only_the_log_names_is_still_searched(admin_client: Any, db: Any) -> None:
    """An answer may cite a document never received: its id is in the log, not stored."""
    with transaction.atomic():
        event = audit_record(actor=Actor("worker", "worker"), action="answer.ingested",
                             object_type="answer", object_id="t-1", trace_id="t-1",
                             document_id="not-received-yet")
    response = admin_client.get(_audit(document="not-received-yet"))
    assert response.status_code == 200
    assert _seqs(response) == [event.seq]


def test_a_restricted_documents_title_is_neither_matched_nor_shown(
    admin_client: Any, library: dict[str, str]
) -> None:
    """Managing every document is no reason for an admin to read a restricted one's title."""
    by_title = admin_client.get(_audit(document="Salary bands"))
    assert by_title.status_code == 400
    # Said so: the admin learns to use the id, not that such a title exists.
    assert _document_field(by_title).startswith(
        "Document There is no document Salary bands. Neither a document id nor the title of "
        "a document you may read matches it: a document you may not read is found by its id.")
    by_id = admin_client.get(_audit(document="salaries"))
    assert _seqs(by_id) == _events_naming("salaries") != []
    assert "Salary bands" not in by_id.content.decode()


def test_each_event_shows_the_title_of_its_document_beside_the_id(
    admin_client: Any, library: dict[str, str]
) -> None:
    text = _text(admin_client.get("/audit/"))
    assert "doc pricing · Pricing and plans" in text
    assert "doc handbook · Employee Handbook" in text
    assert "doc salaries" in text and "Salary bands" not in text


def test_the_titles_of_a_page_cost_one_query_however_many_documents(
    admin_client: Any, publish: Callable[..., Any]
) -> None:
    def page_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert admin_client.get("/audit/").status_code == 200
        return len(queries)

    publish("doc-0", title="Document 0")
    admin_client.get("/audit/")  # the session and anything read once
    few = page_queries()
    for n in range(1, 12):
        publish(f"doc-{n}", title=f"Document {n}")
    text = _text(admin_client.get("/audit/"))
    assert "doc doc-11 · Document 11" in text and "doc doc-0 · Document 0" in text
    assert page_queries() == few


# --- the jobs page ------------------------------------------------------------------------------


def test_an_admin_re_evaluates_a_document_named_by_its_title(
    admin_client: Any, library: dict[str, str]
) -> None:
    response = admin_client.post("/jobs/start", {"document_id": "  pricing AND plans "})
    job = _by_hand().get()
    assert response.status_code == 302
    assert response["Location"] == job.get_absolute_url()
    assert (job.scope, job.document_key) == ("document", "pricing")


def test_an_id_is_still_an_id_on_the_jobs_page(admin_client: Any,
                                               library: dict[str, str]) -> None:
    assert admin_client.post("/jobs/start", {"document_id": "handbook"}).status_code == 302
    assert _by_hand().get().document_key == "handbook"


def test_a_job_for_a_title_two_documents_share_is_refused_listing_their_ids(
    admin_client: Any, library: dict[str, str]
) -> None:
    response = admin_client.post("/jobs/start", {"document_id": "Employee handbook"})
    assert response.status_code == 400
    assert ("Several documents have the title “Employee handbook”: handbook, handbook-2025. "
            "Enter the id of the one you mean.") in _text(response)
    assert 'value="Employee handbook"' in response.content.decode()
    assert not _by_hand().exists()


def test_a_job_for_a_text_that_is_no_id_and_no_title_is_refused_at_the_field(
    admin_client: Any, library: dict[str, str]
) -> None:
    response = admin_client.post("/jobs/start", {"document_id": "Pricing plans"})
    assert response.status_code == 400
    assert ("There is no document Pricing plans. Neither a document id nor the title of a "
            "document you may read matches it") in _text(response)
    page = response.content.decode()
    # The field is marked and points at the error, so a screen reader reads it there too.
    field = re.search(r'<input type="text" name="document_id"[^>]*>', page).group(0)
    assert 'aria-invalid="true"' in field and "job-document-error" in field
    assert 'id="job-document-error"' in page
    assert not _by_hand().exists()


def test_the_jobs_page_says_a_title_will_do_and_shows_each_documents_title(
    admin_client: Any, library: dict[str, str]
) -> None:
    admin_client.post("/jobs/start", {"document_id": "pricing"})
    admin_client.post("/jobs/start", {"document_id": "salaries"})
    text = _text(admin_client.get("/jobs/"))
    assert "A document id, or a document's title (exact, any case)" in text
    assert "pricing · Pricing and plans" in text
    assert "salaries" in text and "Salary bands" not in text


def test_an_unconfirmed_start_of_every_answer_does_not_mark_the_document_field(
    admin_client: Any, db: Any
) -> None:
    response = admin_client.post("/jobs/start", {"scope": "all"})
    assert response.status_code == 400
    assert "Tick the box to confirm re-evaluating every stored answer." in _text(response)
    field = re.search(r'<input type="text" name="document_id"[^>]*>',
                      response.content.decode()).group(0)
    assert "aria-invalid" not in field and "job-document-error" not in field
