"""Answer bodies the API refuses by name. An answer whose text is empty, or only spaces and line
breaks: the gate checks the claims, never the wording, so it would release an answer the asker
cannot read. An asker's principal given twice: two bodies asking the same would differ."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.models import QuarantinedPayload
from reviewqueue.reviews.models import Answer
from tests.conftest import answer_body

pytestmark = pytest.mark.django_db

MESSAGE = ("This field may not be blank, nor hold only citation markers and HTML comments (which "
           "show nothing): the answer's text is what the asker reads.")


@pytest.mark.parametrize("text", [
    "", "   ", "\n\t \u3000", "\u200b", " [d1] ", "[d1][d2]\u200b",
    # However long: markers alone, and characters that show nothing (a soft hyphen, an Arabic
    # letter mark, a Hangul filler, the blank Braille pattern, a lone combining accent).
    "[d1]" * 60, "[d1] " * 41, "\u200b" * 201 + "[d1]", "\u00ad[d1]", "\u061c[d1]",
    "\u3164[d1]", "\u2800 [d1]", "\u0301",
    # HTML comments, which a reader never sees (gate 2026.12.5), with markers or not; one never
    # closed hides the rest of the text.
    "<!-- [d1] -->", " <!-- a -->\n[d1]\n\n<!-- b --> ", "[d<!-- -->1]", "<!-- [d1]\nnote",
    # Markers as the gate reads them since 2026.12.8, and as character references.
    "\uff3bd1\uff3d", "[^d1]", "[d1; d2]", "&#91;d1&#93;",
])
def test_a_blank_answer_is_refused_naming_the_field(
    publish: Any, service_api: Any, text: str
) -> None:
    publish()
    response = service_api.post("/api/v1/answers", answer_body("blank", answer=text),
                                format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "answer", "message": MESSAGE}]
    assert not Answer.objects.exists()
    assert QuarantinedPayload.objects.count() == 1  # kept for the sender to look at


@pytest.mark.parametrize("text", ["[d1] 14 days.", "\u00ad14 [d1]", "[d1]" * 60 + " 14",
                                  "\u3164\u2800가", "\u2714 [d1]",
                                  # Beside a comment, or in code, which shows it as it is.
                                  "<!-- [d1] --> 14 days [d1].", "[d1] <!-- a --> 14",
                                  "`<!-- [d1] -->`", "```\n<!-- [d1] -->\n```"])
def test_an_answer_with_something_to_read_is_taken(
    publish: Any, service_api: Any, text: str
) -> None:
    publish()
    response = service_api.post("/api/v1/answers", answer_body("read", answer=text),
                                format="json")
    assert response.status_code == 201, response.content


def test_in_a_batch_only_the_blank_answer_is_refused(publish: Any, service_api: Any) -> None:
    publish()
    response = service_api.post("/api/v1/answers/batch", {"answers": [
        answer_body("b-1"), answer_body("b-2", answer=" ")]}, format="json")
    results = response.json()["results"]
    assert [r["status_code"] for r in results] == [201, 400]
    assert results[1]["errors"] == [{"field": "answer", "message": MESSAGE}]
    assert list(Answer.objects.values_list("trace_id", flat=True)) == ["b-1"]


def test_in_a_batch_an_answer_that_is_only_a_comment_is_refused(
    publish: Any, service_api: Any
) -> None:
    publish()
    response = service_api.post("/api/v1/answers/batch", {"answers": [
        answer_body("c-1", answer="<!-- [d1] -->"),
        answer_body("c-2", answer="<!-- draft --> The free trial lasts 14 days [d1].")]},
        format="json")
    results = response.json()["results"]
    assert [r["status_code"] for r in results] == [400, 201]
    assert results[0]["errors"] == [{"field": "answer", "message": MESSAGE}]
    assert list(Answer.objects.values_list("trace_id", flat=True)) == ["c-2"]


def test_an_answer_with_text_around_spaces_keeps_them(publish: Any, service_api: Any) -> None:
    publish()
    text = "  The free trial lasts 14 days [d1].\n"
    response = service_api.post("/api/v1/answers", answer_body("kept", answer=text),
                                format="json")
    assert response.status_code == 201, response.content
    assert Answer.objects.get().current_version.text == text


def test_a_principal_given_twice_in_asked_by_is_refused_by_its_index(
    publish: Any, service_api: Any
) -> None:
    publish()
    body = answer_body("twice", asked_by=["user:customer-7", "group:sales", "user:customer-7"])
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "asked_by[2]", "message": "'user:customer-7' is already in the list."}]
    assert not Answer.objects.exists()
