"""Schemathesis against /api/schema/ with a token of each role: no 5xx, and every response
with a documented schema matches it. Bounded: a few generated requests per operation and role,
sent to the Django WSGI application in process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.security.conftest import FIGURES, World

# role -> whose token (None: no credentials; dora's token was revoked when she was deactivated)
TOKENS = {"anonymous": None, "service": "rag-service", "reviewer": "alice",
          "hr_reviewer": "hana", "owner": "olivia", "other_owner": "oscar", "admin": "ada",
          "deactivated": "dora"}
MAX_EXAMPLES = 10
CHECKS = [not_a_server_error, response_schema_conformance]


@pytest.fixture
def keep_test_connection() -> Iterator[None]:
    """The WSGI handler closes the database connection at the end of each request, which
    would end the test's transaction; Django's own test client switches that off the same
    way."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.mark.parametrize("role", list(TOKENS))
def test_api_holds_to_its_schema(world: World, db: Any, keep_test_connection: None,
                                 role: str) -> None:
    from reviewqueue.wsgi import application

    schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
    owner = TOKENS[role]
    headers = {"Authorization": f"Token {world.tokens[owner]}"} if owner else {}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 13
    failures: list[str] = []

    for operation in operations:
        @given(case=operation.as_strategy())
        @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def run(case: Any) -> None:
            FIGURES["schemathesis cases run"] += 1
            response = case.call(headers=headers)
            case.validate_response(response, headers=headers, checks=CHECKS)

        try:
            run()
        except BaseException as exc:  # hypothesis raises groups; report every operation
            failures.append(f"{operation.label} as {role}: {str(exc)[:1500]}")
    assert failures == [], "\n\n".join(failures)
