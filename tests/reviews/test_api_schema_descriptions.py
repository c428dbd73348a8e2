"""The schema describes what each reviewer and ingest operation does, not the base class
every API view shares (whose text speaks of bodies, even on operations that read none)."""

from __future__ import annotations

from typing import Any

import pytest

BASE_TEXT = "Refuses oversized bodies"
OPERATIONS = [
    ("/api/v1/answers", "post"),
    ("/api/v1/answers/batch", "post"),
    ("/api/v1/answers/{trace_id}", "get"),
    ("/api/v1/answers/{trace_id}/claim", "post"),
    ("/api/v1/answers/{trace_id}/release", "post"),
    ("/api/v1/answers/{trace_id}/decisions", "post"),
    ("/api/v1/queue", "get"),
    ("/api/v1/jobs", "post"),
]


@pytest.fixture(scope="module")
def paths() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)["paths"]  # type: ignore


@pytest.mark.parametrize(("path", "method"), OPERATIONS)
def test_each_operation_has_its_own_description(paths: dict[str, Any], path: str,
                                                method: str) -> None:
    description = paths[path][method].get("description") or ""
    assert description and BASE_TEXT not in description


def test_the_decision_operation_says_what_a_stale_verdict_gets(paths: dict[str, Any]) -> None:
    operation = paths["/api/v1/answers/{trace_id}/decisions"]["post"]
    assert "409 carries the current verdict" in operation["description"]
    assert "stale_verdict" in operation["responses"]["409"]["description"]


def test_no_operation_is_described_by_the_shared_base_view(paths: dict[str, Any]) -> None:
    borrowed = [(path, method) for path, item in paths.items() for method, op in item.items()
                if "oversized bodies" in (op.get("description") or "")]
    assert borrowed == []


def test_every_operation_documents_the_400_an_address_can_get(paths: dict[str, Any]) -> None:
    """A path or query parameter that is not UTF-8, or holds a NUL, is a 400 whatever the
    operation: reads included, which documented none."""
    for path, operations in paths.items():
        for method, operation in operations.items():
            said = operation["responses"]["400"]["description"]
            assert "not valid UTF-8 or holds a NUL character" in said, (path, method, said)
    # An operation's own 400 keeps its words.
    assert paths["/api/v1/answers"]["post"]["responses"]["400"]["description"].startswith(
        "A bad field, named by its path; or the path")


@pytest.mark.django_db
def test_an_address_refused_names_path_and_a_parameter_by_its_name(
    service_api: Any, reviewer: Any, token_client: Any
) -> None:
    [error] = service_api.get("/api/v1/answers/a%00b").json()["errors"]
    assert error == {"field": "path", "message": "contains a NUL character"}
    [error] = token_client(reviewer).get("/api/v1/queue?document=a%00b").json()["errors"]
    assert error == {"field": "document", "message": "contains a NUL character"}


def test_no_component_describes_itself_in_the_words_of_the_code() -> None:
    """A serializer's docstring is its component's description in the schema: the base class
    of every request body once gave its own (DRF's CharField, `cross_field_errors`) to ten of
    them."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    described = {name: component.get("description", "")
                 for name, component in schema["components"]["schemas"].items()}
    assert "AnswerInRequest" in described
    assert [name for name, text in described.items()
            if "cross_field_errors" in text or "DRF" in text] == []
