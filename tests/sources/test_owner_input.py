"""What an owner (or the document system) types that the app must refuse clearly: an edit
made on a revision that is no longer current, values PostgreSQL or the gate cannot hold,
impossible days and ids longer than a column."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest

from reviewqueue.sources.models import Document, Revision

pytestmark = pytest.mark.django_db


def fact(key: str, value: Any, **extra: Any) -> dict[str, Any]:
    return {
        "key": key,
        "value": value,
        "valid_from": "2026-01-01",
        "valid_until": None,
        "span": "p1",
        **extra,
    }


def field_value(page: str, name: str) -> str:
    """The value attribute of the input named `name`, as the browser would show it."""
    tag = re.search(rf'<input[^>]*name="{re.escape(name)}"[^>]*>', page)
    assert tag is not None, f"no input named {name}"
    value = re.search(r'value="([^"]*)"', tag.group(0))
    return html.unescape(value.group(1)) if value else ""


def field_errors(page: str, field_id: str) -> str:
    """The text of the error list Django renders for the field with id `field_id`."""
    found = re.search(
        rf'<ul class="errorlist" id="{re.escape(field_id)}_error">(.*?)</ul>', page, re.S
    )
    return html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))) if found else ""


def publish_form(facts: list[Any], values: dict[str, str], **extra: str) -> dict[str, str]:
    """The publish form as the page posts it, with `values` typed over the facts' keys, and
    "The passages are right as they are" ticked (test_passage_left_behind.py is about it)."""
    data = {"facts-TOTAL_FORMS": str(len(facts)), "facts-INITIAL_FORMS": str(len(facts)),
            "passages_checked": "1"}
    for i, f in enumerate(facts):
        data |= {
            f"facts-{i}-fact_id": str(f.pk),
            f"facts-{i}-value": values.get(f.key, json.dumps(f.value)),
            f"facts-{i}-valid_from": str(f.valid_from),
            f"facts-{i}-valid_until": str(f.valid_until or ""),
        }
    return data | extra


def current(key: str = "pricing") -> Revision:
    return Document.objects.get(key=key).current_revision


# --- An edit made on a revision that is no longer current ---------------------------------


@pytest.fixture
def opened_then_republished(client: Any, publish: Any, owner: Any) -> list[Any]:
    """Olivia opens pricing@r1; meanwhile the document system publishes r2 (seats 5 -> 10).
    Returns the facts of r1, which her open form carries."""
    publish("pricing", facts=[fact("trial_days", 14), fact("seats", 5)])
    client.force_login(owner)
    page = client.get("/owner/documents/pricing/").content.decode()
    assert field_value(page, "revision") == "r1"
    r1_facts = list(current().facts.order_by("position"))
    publish("pricing", revision="r2", facts=[fact("trial_days", 14), fact("seats", 10)])
    return r1_facts


def test_an_edit_made_on_an_older_revision_is_refused_and_keeps_what_was_typed(
    client: Any, opened_then_republished: list[Any]
) -> None:
    response = client.post(
        "/owner/documents/pricing/publish",
        publish_form(
            opened_then_republished, {"trial_days": "30"}, revision="r1", note="Longer trial"
        ),
    )
    assert response.status_code == 409
    page = response.content.decode()
    assert "This document changed since you opened it: revision r2 was published." in page
    assert field_value(page, "revision") == "r2"
    assert field_value(page, "facts-0-value") == "30"  # what Olivia typed
    assert field_value(page, "facts-1-value") == "10"  # r2's value, not her stale 5
    assert "Longer trial" in page
    assert current().revision == "r2"
    assert current().facts.get(key="trial_days").value == 14


def test_an_edit_carrying_fact_ids_of_an_older_revision_is_refused(
    client: Any, opened_then_republished: list[Any]
) -> None:
    # A form from before the page posted its revision: only its fact ids tell.
    response = client.post(
        "/owner/documents/pricing/publish",
        publish_form(opened_then_republished, {"trial_days": "30"}),
    )
    assert response.status_code == 409
    assert "revision r2 was published" in response.content.decode()
    assert current().revision == "r2"


def test_the_refused_edit_can_be_submitted_again_on_the_new_revision(
    client: Any, opened_then_republished: list[Any]
) -> None:
    refused = client.post(
        "/owner/documents/pricing/publish",
        publish_form(opened_then_republished, {"trial_days": "30"}, revision="r1"),
    ).content.decode()
    r2_facts = list(current().facts.order_by("position"))
    again = publish_form(
        r2_facts,
        {
            "trial_days": field_value(refused, "facts-0-value"),
            "seats": field_value(refused, "facts-1-value"),
        },
        revision=field_value(refused, "revision"),
    )
    response = client.post("/owner/documents/pricing/publish", again)
    assert response.status_code == 302
    values = {f.key: f.value for f in current().facts.all()}
    assert values == {"trial_days": 30, "seats": 10}
    assert current().seq == 3


def test_a_value_typed_for_a_fact_the_new_revision_dropped_is_still_shown(
    client: Any, publish: Any, owner: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", 14), fact("seats", 5)])
    r1_facts = list(current().facts.order_by("position"))
    publish("pricing", revision="r2", facts=[fact("trial_days", 14)])
    client.force_login(owner)
    response = client.post(
        "/owner/documents/pricing/publish",
        publish_form(r1_facts, {"seats": "12"}, revision="r1"),
    )
    assert response.status_code == 409
    page = response.content.decode()
    assert "no longer in this revision" in page
    assert re.search(r"seats</code>\s*=\s*<code>12</code>", page)


# --- Values the owner's form cannot publish --------------------------------------------------


@pytest.mark.parametrize(
    "typed",
    [
        "NaN",
        "Infinity",
        "-Infinity",
        "1e400",
        "1e16",  # PostgreSQL would keep it as the integer 10000000000000000
        "-0.0",
        "99999999999999999999",
        "-9223372036854775809",
        '"a\\u0000b"',  # NUL written as a JSON escape
        '"\\ud800"',  # a lone surrogate
    ],
)
def test_a_value_that_cannot_be_stored_is_a_field_error_keeping_the_typed_text(
    client: Any, publish: Any, owner: Any, typed: str
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    client.force_login(owner)
    response = client.post(
        "/owner/documents/pricing/publish",
        publish_form(list(current().facts.all()), {"trial_days": typed}, revision="r1"),
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert field_errors(page, "id_facts-0-value"), page
    assert field_value(page, "facts-0-value") == typed


def test_a_number_that_cannot_be_stored_is_refused_in_the_owners_language(
    client: Any, publish: Any, owner: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    client.force_login(owner)
    response = client.post(
        "/owner/documents/pricing/publish",
        publish_form(list(current().facts.all()), {"trial_days": "1e400"}, revision="r1"),
        HTTP_ACCEPT_LANGUAGE="ja",
    )
    assert response.status_code == 400
    assert ("ゲートが保持できる数値を入力してください: -9223372036854775808 から "
            "9223372036854775807 までの整数、または大きさが 1e16 未満の小数です。") in field_errors(
        response.content.decode(), "id_facts-0-value")
    assert current().revision == "r1"


def test_the_largest_64_bit_integer_is_published(client: Any, publish: Any, owner: Any) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    client.force_login(owner)
    response = client.post(
        "/owner/documents/pricing/publish",
        publish_form(list(current().facts.all()), {"trial_days": str(2**63 - 1)}, revision="r1"),
    )
    assert response.status_code == 302
    assert current().facts.get().value == 2**63 - 1


@pytest.mark.parametrize(("was", "typed", "says", "published"), [
    (30, "thirty", "This fact is a number. To make it the text thirty, write it in quotes: "
                   '"thirty".', None),
    (True, "yes", "This fact is a boolean (true or false). To make it the text yes, write it "
                  'in quotes: "yes".', None),
    (30, '"thirty"', "", "thirty"),  # quoted: the change of type is meant
    ("Basic", "Premium", "", "Premium"),  # text stays text unquoted
    (30, "45", "", 45),
    # 30.0 is not 30 to the gate: every answer stating 30 would be held.
    (30, "30.0", "This fact is a whole number: write 30. The gate tells 30 from 30.0, so every "
                 "answer stating 30 would be held.", None),
    (30, "45.0", "This fact is a whole number: write 45. The gate tells 45 from 45.0, so every "
                 "answer stating 45 would be held.", None),
    (2.5, "3.0", "", 3.0),  # a decimal number stays one
])
def test_plain_text_over_a_number_or_boolean_must_be_quoted(
    client: Any, publish: Any, owner: Any, was: Any, typed: str, says: str, published: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", was)])
    client.force_login(owner)
    response = client.post(
        "/owner/documents/pricing/publish",
        publish_form(list(current().facts.all()), {"trial_days": typed}, revision="r1"),
    )
    if says:
        assert response.status_code == 400
        page = response.content.decode()
        assert field_errors(page, "id_facts-0-value").strip() == says
        assert field_value(page, "facts-0-value") == typed
        assert current().revision == "r1"
    else:
        assert response.status_code == 302, response.content.decode()[-3000:]
        assert current().facts.get().value == published


# --- Ending a fact's validity ----------------------------------------------------------------


@pytest.mark.parametrize(("language", "last_day", "says"), [
    ("en", "2027-06-01", "Last valid day: must be before the day the fact ends now; to extend "
                         "it, correct its values instead"),
    ("en", "2026-12-31", "Last valid day: must be before the day the fact ends now"),
    ("en", "2025-12-31", "Last valid day: must not be before the fact becomes valid"),
    ("ja", "2027-06-01", "有効最終日: 現在の終了日より前の日付にしてください"),
    ("ja", "2025-12-31", "有効最終日: 事実が有効になる日より前にはできません"),
])
def test_ending_a_fact_never_extends_it_and_says_why_in_the_owners_language(
    client: Any, publish: Any, owner: Any, language: str, last_day: str, says: str
) -> None:
    publish("pricing", facts=[fact("trial_days", 14, valid_until="2026-12-31")])
    trial = current().facts.get()
    client.force_login(owner)
    response = client.post(
        "/owner/documents/pricing/end-validity",
        {"fact_id": str(trial.pk), "last_day": last_day, "note": "Promo is over"},
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert says in page
    assert "last_day:" not in page
    assert 'value="Promo is over"' in page
    assert current().revision == "r1"
    assert str(current().facts.get().valid_until) == "2026-12-31"
    # The row says when the fact ends now.
    assert "2026-01-01 → 2026-12-31</span>" in page


def test_an_impossible_last_day_is_a_field_error_keeping_the_day_and_the_note(
    client: Any, publish: Any, owner: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    trial = current().facts.get()
    client.force_login(owner)
    response = client.post(
        "/owner/documents/pricing/end-validity",
        {"fact_id": str(trial.pk), "last_day": "2026-02-30", "note": "Promo is over"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    # A date input empties itself on a value that is no date: the error quotes it.
    assert ("Enter a valid date, such as 2026-12-31: “2026-02-30” is not one."
            in field_errors(page, f"id_end_{trial.pk}_last_day"))
    assert 'value="2026-02-30"' in page
    assert 'value="Promo is over"' in page
    assert current().revision == "r1"


@pytest.mark.parametrize("typed", ["3/4/26", "03/04/2026", "2026-3-4"])
def test_a_last_day_written_another_way_is_refused_not_read_as_month_first(
    client: Any, publish: Any, owner: Any, typed: str
) -> None:
    """3/4/26 is 4 March to one reader and 3 April to another: only 2026-03-04 is read."""
    publish("pricing", facts=[fact("trial_days", 14)])
    trial = current().facts.get()
    client.force_login(owner)
    response = client.post(
        "/owner/documents/pricing/end-validity",
        {"fact_id": str(trial.pk), "last_day": typed, "note": "Promo is over"},
    )
    assert response.status_code == 400
    assert (f"Enter a valid date, such as 2026-12-31: “{typed}” is not one."
            in field_errors(response.content.decode(), f"id_end_{trial.pk}_last_day"))
    assert current().revision == "r1"


# --- The API's path and values ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("document_id", "revision", "field"),
    [("d" * 300, "r1", "document_id"), ("pricing", "r" * 300, "revision")],
)
def test_an_id_longer_than_200_characters_is_a_400_naming_it(
    service_api: Any, owner: Any, document_id: str, revision: str, field: str
) -> None:
    from tests.conftest import revision_body

    response = service_api.put(
        f"/api/v1/documents/{document_id}/revisions/{revision}", revision_body(), format="json"
    )
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == [field]
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    "value_json",
    ["9223372036854775808", "-9223372036854775809", "1e400", '"a\\u0000b"', '"\\ud800"'],
)
def test_a_fact_value_that_cannot_be_stored_is_a_400_naming_it(
    service_api: Any, owner: Any, value_json: str
) -> None:
    from tests.conftest import revision_body

    # Written by hand: the test client's encoder cannot write a lone surrogate.
    body = json.dumps(revision_body(facts=[fact("trial_days", 0)])).replace(
        '"value": 0', f'"value": {value_json}'
    )
    response = service_api.put(
        "/api/v1/documents/pricing/revisions/r1", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["facts[0].value"]
    assert not Document.objects.exists()


# --- The progress page -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["since", "until"])
@pytest.mark.parametrize("moment", ["0001-01-01", "9999-12-31T23:59:59", "yesterday"])
def test_a_since_or_until_the_progress_page_cannot_use_is_a_clear_400(
    client: Any, owner: Any, name: str, moment: str
) -> None:
    client.force_login(owner)
    response = client.get("/owner/progress", {"documents": "pricing", name: moment})
    assert response.status_code == 400
    page = response.content.decode()
    # On a page of the product, with its navigation, and a way back to the progress.
    assert "<h1>This link&#x27;s times cannot be used</h1>" in page and "<nav" in page
    assert (f"<li><code>{name}</code>: give a date and time between 1970-01-01 and 2999-12-31"
            in page)
    assert 'href="/owner/progress?documents=pricing" data-without>' in page
