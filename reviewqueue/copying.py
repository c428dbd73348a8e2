"""Write model instances without the ORM's statement building: COPY for many, one INSERT
statement for the few rows of several tables.

For a batch of 500 answers Django's bulk_create spends more time building and PostgreSQL more
time parsing the INSERT than either spends on the rows; COPY streams the rows instead. For one
answer the ORM spends longer building an INSERT than PostgreSQL spends running it. Rows written
with COPY are not read back: ids come from the caller (taken from the table's sequence first)
or, when left unset, from the column default and stay unknown to Python.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple, TypeVar

from django.db import connection, models
from django.db.models.base import ModelState
from django.utils import timezone
from psycopg.types.json import Jsonb

from reviewqueue.jsontext import encoder
from reviewqueue.prepared import prepared_cursor

M = TypeVar("M", bound=models.Model)

# Below this many rows a plain INSERT is as quick: COPY takes an extra round trip.
FEW = 8


class JsonText(str):
    """A JSON column's value already written as JSON text (the audit log writes its events'
    canonical text anyway): COPY sends it as it is instead of encoding the value again."""


# What json.dumps writes, without the spaces and without building an encoder per value.
_json_text = encoder()


def _copied_json(value: Any) -> Any:
    """A JSON column's value as COPY takes it: its JSON text (jsonb reads the text)."""
    return None if value is None else value if type(value) is JsonText else _json_text(value)


def _inserted_json(value: Any) -> Any:
    return None if value is None else Jsonb(value, dumps=_json_text)


# The type a column's values are written as in COPY's text format, by the column's type
# (PostgreSQL reads each text as the column's own type; JSON columns are sent as JSON text).
# Told the types, psycopg picks each column's writer once for the COPY instead of once a value
# by the value's Python type, looking inside every list to do so.
_COPIED_AS = {
    "bigint": "int8", "integer": "int4", "smallint": "int2", "boolean": "bool", "date": "date",
    "timestamp with time zone": "timestamptz", "text": "text", "varchar": "text",
    "jsonb": "text",
}


def _copied_types(fields: list[models.Field[Any, Any]]) -> list[str] | None:
    """The types to write the fields' values as, or None if one is not in _COPIED_AS (psycopg
    then picks a writer for each value)."""
    types = []
    for f in fields:
        db_type = re.sub(r"\(\d+\)", "", f.db_type(connection) or "")
        written = _COPIED_AS.get(db_type.removesuffix("[]"))
        if written is None:
            return None
        types.append(written + "[]" if db_type.endswith("[]") else written)
    return types


class _Plan(NamedTuple):
    copy_sql: str
    copy_types: list[str] | None  # see _copied_types
    insert_sql: str
    # A row's values in one call (an instance's attributes, or a dict's items), and the
    # positions of its JSON columns, whose values are adapted (_adapted).
    attributes: Callable[[Any], tuple[Any, ...]]
    items: Callable[[Any], tuple[Any, ...]]
    json_at: list[int]
    stamped: list[str]  # the auto_now columns


@cache
def _plan(model: type[models.Model], with_pk: bool) -> _Plan:
    """COPY (with its columns' types) and INSERT statements for the model's columns, how to
    read a row's values, and the auto_now columns. Generated columns are left out: PostgreSQL
    computes them."""
    fields = [f for f in model._meta.concrete_fields
              if (with_pk or not f.primary_key) and not f.generated]
    table = connection.ops.quote_name(model._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    pk = connection.ops.quote_name(model._meta.pk.column)  # type: ignore[union-attr]
    attnames = [f.attname for f in fields]
    assert len(attnames) > 1  # a getter of one name gives the value, not a 1-tuple
    return _Plan(
        copy_sql=f"COPY {table} ({columns}) FROM STDIN",
        copy_types=_copied_types(fields),
        insert_sql=f"INSERT INTO {table} ({columns}) VALUES {{rows}} RETURNING {pk} AS pk",
        attributes=operator.attrgetter(*attnames),
        items=operator.itemgetter(*attnames),
        json_at=[i for i, f in enumerate(fields) if isinstance(f, models.JSONField)],
        stamped=[f.attname for f in fields
                 if isinstance(f, models.DateTimeField) and (f.auto_now or f.auto_now_add)],
    )


def _adapted(values: tuple[Any, ...], json_at: list[int],
             adapt: Callable[[Any], Any]) -> Sequence[Any]:
    """A row's values, those of its JSON columns adapted by `adapt` (_copied_json for COPY,
    _inserted_json for INSERT)."""
    if not json_at:
        return values
    row = list(values)
    for at in json_at:
        row[at] = adapt(row[at])
    return row


@cache
def _defaults(model: type[models.Model]) -> list[tuple[str, Callable[[], Any]]]:
    # Not a generated column: the instance leaves it unset, to be read from the row.
    return [(f.attname, f._get_default)  # type: ignore[attr-defined]
            for f in model._meta.concrete_fields if not f.generated]


def built(model: type[M], **values: Any) -> M:
    """An unsaved instance of `model` with `values` by attname (`answer_id`, not `answer`) and
    every other field's default: what `model(**values)` gives, for a quarter of its cost (no
    init signals, no related-object bookkeeping), which the 2,500 instances of a 500-answer
    batch add up to. No model here has init signal receivers or a custom __init__."""
    instance = model.__new__(model)
    instance._state = ModelState()
    fields = instance.__dict__
    for attname, default in _defaults(model):
        fields[attname] = values.pop(attname) if attname in values else default()
    if values:
        raise TypeError(f"{model.__name__} has no field {', '.join(values)}")
    return instance


def copy_instances(*groups: Sequence[models.Model]) -> None:
    """Write each group of instances (a group is all of one model) inside the current
    transaction. A group whose instances carry ids (all of them or none) is written with them;
    the others take the column default and are given the id they got. auto_now /
    auto_now_add columns get the current time, as save() would give them.

    A group of many goes in with COPY; the groups of a few go in together, in one INSERT
    statement (chained with WITH), so one answer's rows take one round trip, not four."""
    now = timezone.now()
    few: list[tuple[Sequence[models.Model], str, list[Any]]] = []
    for instances in groups:
        if not instances:
            continue
        plan = _plan(type(instances[0]), instances[0].pk is not None)
        for instance in instances:
            for attname in plan.stamped:
                if getattr(instance, attname) is None:
                    setattr(instance, attname, now)
        if len(instances) >= FEW:
            _copy(plan, [plan.attributes(instance) for instance in instances])
            continue
        rows = [_adapted(plan.attributes(instance), plan.json_at, _inserted_json)
                for instance in instances]
        row_sql = "(" + ", ".join(["%s"] * len(rows[0])) + ")"
        few.append((instances, plan.insert_sql.format(rows=", ".join([row_sql] * len(rows))),
                    [value for row in rows for value in row]))
    if not few:
        return
    # Not bulk_create: for one answer the ORM spends longer building the statements than
    # PostgreSQL spends running them. The text varies only with the row counts, each under
    # FEW, so few variants get prepared. The ids come back group after group, in row order.
    sql = (few[0][1] if len(few) == 1 else
           "WITH " + ", ".join(f"w{i} AS ({insert})" for i, (_, insert, _) in enumerate(few))
           + " " + " UNION ALL ".join(f"SELECT pk FROM w{i}" for i in range(len(few))))
    with prepared_cursor() as cursor:
        cursor.execute(sql, [value for _, _, params in few for value in params])
        ids = iter(cursor.fetchall())
    for instances, _, _ in few:
        for instance, (pk,) in zip(instances, ids, strict=False):
            instance.pk = pk


def copy_rows(model: type[models.Model], rows: Sequence[dict[str, Any]]) -> None:
    """COPY rows given as {attname: value} with every column but the id, without building
    model instances (for the audit events of a batch)."""
    plan = _plan(model, False)
    _copy(plan, [plan.items(row) for row in rows])


def _copy(plan: _Plan, rows: list[tuple[Any, ...]]) -> None:
    # COPY is psycopg's own: its errors are made Django's here, as `execute` makes them, so
    # that a duplicate key is an IntegrityError to the caller like any other.
    with connection.wrap_database_errors, connection.cursor() as cursor, \
            cursor.copy(plan.copy_sql) as copy:
        if plan.copy_types is not None:
            copy.set_types(plan.copy_types)
        for values in rows:
            copy.write_row(_adapted(values, plan.json_at, _copied_json))
