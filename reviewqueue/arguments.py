"""Types for the numbers management commands take on their command line.

argparse prints an ArgumentTypeError under the usage line, after the option's name
("argument --timeout: must be 0 or more, not -5"), with no traceback; from call_command it is a
CommandError saying the same.
"""

from __future__ import annotations

import argparse
import math


def count(text: str) -> int:
    """A whole number of things, 0 or more: a negative one would silently mean none."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    _refuse_negative(value, text)
    return value


def seconds(text: str) -> float:
    """A duration in seconds, 0 or more: a negative one (or nan) would end at once."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    _refuse_negative(value, text)
    return value


def _refuse_negative(value: float, text: str) -> None:
    if math.isnan(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
