"""``Options.unresolved`` as pairs may name one id twice. The JSON object cannot, and
``unresolved_principals`` refuses a repeat ("listed twice"); ``unresolved`` takes it silently:
with two reasons the verdict depends on both at once (a withdrawal warning and an
invalid-metadata finding for the same id), and a plain repeat adds a second, identical warning
and changes the fingerprint of an input that means the same thing."""

from __future__ import annotations

import datetime

import pytest

import gating
from gating import Claim, Evidence, Fact, InputError, Options

TODAY = datetime.date(2026, 10, 20)
CLAIMS = [Claim("trial_days", 14, "d1")]
EVIDENCE = [Evidence("d1", (Fact("trial_days", 14, "2026-10-01", "2026-10-31"),))]


@pytest.mark.parametrize(
    "pairs",
    [
        (("d7", "withdrawn"), ("d7", "revision_not_received")),
        (("d7", "withdrawn"), ("d7", "withdrawn")),
    ],
    ids=["two-reasons", "same-reason-twice"],
)
def test_an_unresolved_id_listed_twice_is_an_input_error(pairs):
    with pytest.raises(InputError) as caught:
        gating.evaluate(CLAIMS, EVIDENCE, Options(TODAY, unresolved=pairs))

    assert caught.value.path == "unresolved.d7"
