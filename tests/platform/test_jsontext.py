"""The encoders built once write exactly what json writes with the same options."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewqueue.jsontext import encoder

SCALARS = (st.none() | st.booleans() | st.integers() | st.text() | st.floats()
           | st.sampled_from([-0.0, 1e16, 1.5e300]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_each_encoder_writes_what_json_writes(value):
    for options in ({}, {"sort_keys": True, "ensure_ascii": False},
                    {"sort_keys": True, "ensure_ascii": False, "default": str}):
        expected = json.JSONEncoder(separators=(",", ":"), **options).encode(value)
        assert encoder(**options)(value) == expected


def test_a_value_json_cannot_write_is_refused_with_its_type_and_a_default_can_write_it():
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        encoder()({"a": {1}})
    assert encoder(default=str)({"a": {1}}) == '{"a":"{1}"}'
    # Not a number is written as json writes it (PostgreSQL then refuses it as jsonb).
    assert encoder()([math.nan, math.inf]) == "[NaN,Infinity]"
