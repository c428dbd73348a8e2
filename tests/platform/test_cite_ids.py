"""An evidence id the answer's `[markers]` cannot name is refused, naming its field.

Markers name ids of letters, digits and `_ . : -`. Before, `"cite": "doc 1"` was taken, and
the answer's `[doc 1]` read as no marker at all: an answer of more than 200 characters was
stored and abstained as having no citation, a verdict about data the service sent wrongly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reviewqueue.reviews.models import Answer
from tests.conftest import answer_body

pytestmark = pytest.mark.django_db

TEXT = ("Every plan includes a free trial, and this sentence goes on long enough for the answer "
        "to pass the length past which an answer with no marker at all abstains: two hundred "
        "characters of prose, so on it goes a little more [{cite}].")


@pytest.mark.parametrize("cite", ["doc 1", "d]1", "\uff441", "[1]", "d1,d2", "d\u00e91"])
def test_a_cite_no_marker_can_name_is_refused_and_nothing_stored(
    publish: Callable[..., Any], service_api: Any, cite: str
) -> None:
    publish("pricing", "r1")
    body = answer_body("t-cite", answer=TEXT.format(cite=cite),
                       retrieved=[{"cite": cite, "document_id": "pricing", "revision": "r1",
                                   "span": "p1"}],
                       claims=[{"key": "trial_days", "value": 14, "cite": cite}])

    single = service_api.post("/api/v1/answers", body, format="json")
    batch = service_api.post("/api/v1/answers/batch", {"answers": [body]}, format="json")

    assert single.status_code == 400, single.json()
    errors = {e["field"]: e["message"] for e in single.json()["errors"]}
    assert set(errors) == {"retrieved[0].cite", "claims[0].cite"}
    assert errors["retrieved[0].cite"] == ("Must be letters A-Z or a-z, digits, or _ . : - "
                                           "only: the answer's [markers] can name no other id.")
    [result] = batch.json()["results"]
    assert result["status_code"] == 400
    assert {e["field"] for e in result["errors"]} == set(errors)
    assert not Answer.objects.exists()


@pytest.mark.parametrize("cite", ["d1", "doc_2", "kb:faq.3", "A-9"])
def test_the_ids_a_marker_names_are_taken(submit: Callable[..., Any], publish: Callable[..., Any],
                                          cite: str) -> None:
    publish("pricing", "r1")
    response = submit("t-cite", answer=f"The free trial lasts 14 days [{cite}].",
                      retrieved=[{"cite": cite, "document_id": "pricing", "revision": "r1",
                                  "span": "p1"}],
                      claims=[{"key": "trial_days", "value": 14, "cite": cite}])

    assert response.status_code == 201, response.json()
    assert response.json()["status"] == "candidate"
