"""The item page writes the claims table's inputs itself (Django's widget templates cost about
a millisecond per <option>): what it writes must be what Django would have rendered."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.http import QueryDict

from reviewqueue.reviews.forms import CLAIM_FIELDS, claim_formset, claim_rows

CITES = ["d1", "d2", 'd<3>"']
CLAIMS: list[dict[str, Any]] = [
    {"key": 'k<&"', "value": 14, "cite": "d1"},
    {"subject": "plan 'pro'", "key": "b", "value": True, "cite": "d2"},
    {"key": "x", "value": "a'b", "cite": "not-retrieved"},
    {"key": "f", "value": 2.5, "cite": 'd<3>"'},
]


def _same(html: str) -> str:
    return re.sub(r"\s+", " ", str(html)).strip()


def test_an_unbound_table_is_written_as_django_renders_it() -> None:
    written = claim_rows(claim_formset(claims=CLAIMS, cites=CITES))
    rendered = [{name: str(form[name]) for name in CLAIM_FIELDS}
                for form in claim_formset(claims=CLAIMS, cites=CITES)]
    assert len(written) == len(rendered) == len(CLAIMS) + 1  # and the empty row to add one
    for (_form, inputs), expected in zip(written, rendered, strict=True):
        assert {k: _same(v) for k, v in inputs.items()} == \
            {k: _same(v) for k, v in expected.items()}


def test_a_refused_edit_keeps_what_was_typed_and_its_errors() -> None:
    data = QueryDict(mutable=True)
    data.update({"claims-TOTAL_FORMS": "2", "claims-INITIAL_FORMS": "2",
                 "claims-MIN_NUM_FORMS": "0", "claims-MAX_NUM_FORMS": "200",
                 "claims-0-key": "k", "claims-0-value": "<b>zz</b>",
                 "claims-0-value_type": "number", "claims-0-cite": "",
                 "claims-1-key": "", "claims-1-DELETE": "on", "claims-1-value_type": "text"})
    formset = claim_formset(data=data, cites=CITES)
    assert not formset.is_valid()
    written = claim_rows(formset)
    assert [form for form, _inputs in written] == list(formset)
    for form, inputs in written:
        assert {k: _same(v) for k, v in inputs.items()} == \
            {k: _same(str(form[k])) for k in CLAIM_FIELDS}
    first = written[0][1]
    assert 'value="&lt;b&gt;zz&lt;/b&gt;"' in first["value"]
    assert 'aria-invalid="true"' in first["value"] and 'aria-invalid="true"' in first["cite"]
    assert "checked" in written[1][1]["DELETE"]


# The claim editor's rows as the item page's template wrote them, one cell at a time, before
# claim_edit_rows wrote them in Python.
TEMPLATE_ROWS = (Path(__file__).parent / "written_as" / "claim_edit_rows.html").read_text()


def _between_tags(html: str) -> str:
    return re.sub(r">\s+<", "><", _same(html))


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_editor_rows_are_what_the_template_wrote(language: str) -> None:
    """claim_edit_rows writes the rows the item page's template loop wrote: for an unbound
    table and for a refused edit with its errors, in both languages."""
    from django.template import Context, Template
    from django.utils import translation

    from reviewqueue.reviews.forms import blank_row
    from reviewqueue.reviews.templatetags.review_tags import claim_edit_rows

    data = QueryDict(mutable=True)
    data.update({"claims-TOTAL_FORMS": "2", "claims-INITIAL_FORMS": "1",
                 "claims-MIN_NUM_FORMS": "0", "claims-MAX_NUM_FORMS": "200",
                 "claims-0-key": "k", "claims-0-value": "<b>zz</b>",
                 "claims-0-value_type": "number", "claims-0-cite": "",
                 "claims-1-value_type": "text"})
    refused = claim_formset(data=data, cites=CITES)
    assert not refused.is_valid()
    with translation.override(language):
        for formset in (claim_formset(claims=CLAIMS, cites=CITES), refused):
            rows = claim_rows(formset)
            blank = blank_row(formset)
            expected = Template(TEMPLATE_ROWS).render(Context({"claim_rows": rows,
                                                               "blank_row": blank}))
            written = claim_edit_rows(rows, blank)
            assert _between_tags(written) == _between_tags(expected)
    assert 'class="errorlist' in written and "data-blank-row" in written
