"""Shared builders for the gate tests. No Django here: the gate is plain Python.

The builders are handed out through the ``cases`` fixture rather than imported, so the tests work
under any pytest import mode.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "gating" / "examples" / "published_cases.jsonl"
AS_OF = "2026-10-20"


class Cases:
    """Small record builders around one well-supported claim.

    ``record()`` is the baseline: claim 0 says trial_days = 14 citing d1, and d1 says exactly
    that for the whole of October 2026, judged on 2026-10-20. Tests change one thing at a time.
    """

    repo = REPO
    as_of = AS_OF

    @staticmethod
    def item(
        evidence_id: str = "d1",
        key: str = "trial_days",
        value: Any = 14,
        valid_from: str = "2026-10-01",
        valid_until: str = "2026-10-31",
        **extra: Any,
    ) -> dict[str, Any]:
        return {
            "id": evidence_id,
            "key": key,
            "value": value,
            "valid_from": valid_from,
            "valid_until": valid_until,
            **extra,
        }

    @staticmethod
    def claim(
        key: str = "trial_days", value: Any = 14, cite: str = "d1", **extra: Any
    ) -> dict[str, Any]:
        return {"key": key, "value": value, "cite": cite, **extra}

    @classmethod
    def record(
        cls,
        claims: list[dict[str, Any]] | None = None,
        evidence: list[dict[str, Any]] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        return {
            "id": "case",
            "as_of": AS_OF,
            "claims": [cls.claim()] if claims is None else claims,
            "evidence": [cls.item()] if evidence is None else evidence,
            **extra,
        }

    @staticmethod
    def published() -> list[dict[str, Any]]:
        return [json.loads(line) for line in PUBLISHED.read_text().splitlines() if line.strip()]

    @staticmethod
    def clone(record: dict[str, Any]) -> dict[str, Any]:
        return copy.deepcopy(record)


@pytest.fixture
def cases() -> type[Cases]:
    return Cases
