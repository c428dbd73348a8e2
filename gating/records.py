"""Validation of gate input, as JSON records or as dataclasses, into the engine's tuples.

Validation is separate from verdicts: anything malformed raises ``InputError`` naming the field
(``claims[3].value``), while anything well-formed but doubtful about the data (a date string that
does not parse, a duplicate id) goes through to the gate and becomes a finding.

Values compare strictly by JSON type: ``14``, ``14.0``, ``"14"`` and ``true`` are four different
values (``1`` and ``true`` too). Integers must fit in 64 bits and floats must be finite and not
negative zero, so that every accepted value has exactly one JSON spelling (``-0.0`` equals
``0.0`` but is written differently). An empty subject is no subject: ``""`` becomes ``None``
for claims, facts and kb facts alike.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import TypeAlias

from gating.engine import (
    ISO_DATE_MEMO,
    ByIdentity,
    ClaimT,
    FactT,
    ItemT,
    KbT,
    UnresolvedPrincipalsT,
    is_iso_date,
)
from gating.model import (
    MAX_CLAIMS,
    MAX_EVIDENCE,
    MAX_FACTS,
    MAX_INT,
    MAX_PRINCIPALS,
    MAX_TEXT_BYTES,
    MIN_INT,
    UNRESOLVED_CHOICES,
    UNRESOLVED_REASONS,
    Claim,
    Evidence,
    Fact,
    InputError,
    JSONScalar,
    KbFact,
    Options,
)

CaseId: TypeAlias = str | int | None
# id, claims, items, as_of (ISO), answer, principals, kb facts, unresolved pairs, allowed
# principals of unresolved ids
RawCase: TypeAlias = tuple[
    CaseId,
    list[ClaimT],
    list[ItemT],
    str,
    str | None,
    tuple[str, ...] | None,
    list[KbT],
    list[tuple[str, str]],
    list[UnresolvedPrincipalsT],
]

TOP_LEVEL_FIELDS = frozenset(
    {
        "id",
        "as_of",
        "claims",
        "evidence",
        "answer",
        "asked_by",
        "kb_facts",
        "unresolved",
        # Labels for the compare and eval commands; the gate ignores them.
        "expected",
        "label",
    }
)
CLAIM_FIELDS = frozenset({"key", "value", "cite", "subject"})
FLAT_FACT_FIELDS = ("key", "value", "valid_from", "valid_until")
EVIDENCE_FIELDS = frozenset(
    {
        "id",
        "key",
        "value",
        "valid_from",
        "valid_until",
        "subject",
        "facts",
        "document",
        "revision",
        "span",
        "text",
        "allowed_principals",
        "superseded",
        "current_revision",
    }
)
FACT_FIELDS = frozenset({"key", "value", "valid_from", "valid_until", "subject", "span"})
KB_FIELDS = frozenset(
    {"document", "revision", "key", "value", "valid_from", "valid_until", "subject", "span"}
)
UNRESOLVED_FIELDS = frozenset({"reason", "allowed_principals"})

_MISSING = object()
_SCALAR_MESSAGE = "must be a string, number, boolean or null"


# -- small checks shared by both input shapes -------------------------------------------------


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def child_path(path: str, key: object) -> str:
    """The path of ``key`` inside the object at ``path``: ``claims[0].value`` for plain names,
    ``unresolved["odd id"]`` for anything else, so that a path is never ambiguous or empty."""
    if isinstance(key, str) and _NAME.fullmatch(key):
        return key if path == "$" else f"{path}.{key}"
    return f"{path}[{json.dumps(str(key))}]"


def _unknown_field(obj: Mapping[object, object], allowed: frozenset[str], path: str) -> None:
    extra = sorted(str(k) for k in obj if k not in allowed)
    if extra:
        raise InputError(child_path(path, extra[0]), "unknown field")


def check_scalar(value: object, path: str) -> JSONScalar:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value  # type: ignore[return-value]
    if kind is int:
        if MIN_INT <= value <= MAX_INT:  # type: ignore[operator]
            return value  # type: ignore[return-value]
        raise InputError(path, "integer outside the 64-bit range")
    if kind is float:
        if not math.isfinite(value):  # type: ignore[arg-type]
            raise InputError(path, "must be a finite number")
        if value == 0 and math.copysign(1.0, value) < 0:
            # -0.0 equals 0.0 but is written differently: one value, two spellings.
            raise InputError(path, "negative zero is not accepted: write 0.0")
        return value  # type: ignore[return-value]
    raise InputError(path, _SCALAR_MESSAGE)


def _plain_float(value: float) -> bool:
    """Whether a float passes ``check_scalar`` as it is: finite and not negative zero (the
    inline fast paths call this, anything else goes through ``check_scalar`` for its error)."""
    return -math.inf < value < math.inf and (value != 0 or math.copysign(1.0, value) > 0)


def _need_str(value: object, path: str, *, empty_ok: bool = False) -> str:
    if type(value) is str and (value or empty_ok):
        return value
    if value is _MISSING:
        raise InputError(path, "required")
    if isinstance(value, str):
        if not value and not empty_ok:
            raise InputError(path, "must not be empty")
        return str(value)
    raise InputError(path, "must be a string")


def _opt_str(value: object, path: str) -> str | None:
    if value is None or value is _MISSING:
        return None
    if isinstance(value, str):
        return str(value)
    raise InputError(path, "must be a string or null")


def _subject(value: object, path: str) -> str | None:
    """A subject of a claim, fact or kb fact: a string, or None for no subject. An empty string
    names no subject either, so it becomes None (a claim with subject "" would otherwise be
    about facts of subject "" in one place and about every subject in another)."""
    if value is None or value is _MISSING or value == "":
        return None
    if isinstance(value, str):
        return str(value)
    raise InputError(path, "must be a string or null")


def _date_str(value: object, path: str) -> str:
    # A date that does not parse is a finding (invalid_metadata), not an input error; only a
    # value that is not a string at all is malformed input.
    if type(value) is str:
        return value
    if value is _MISSING:
        raise InputError(path, "required")
    if isinstance(value, str):
        return str(value)
    raise InputError(path, "must be a string (YYYY-MM-DD)")


def _str_tuple(value: object, path: str, limit: int) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        raise InputError(path, "must be a list of strings")
    if len(value) > limit:
        raise InputError(path, f"too many entries ({len(value)}, limit {limit})")
    for index, entry in enumerate(value):
        if not isinstance(entry, str):
            raise InputError(f"{path}[{index}]", "must be a string")
    return tuple(value)


class _RecordBudget:
    """Per-record limits that span fields: 200 KB of answer and passage text, and the number
    of facts over all evidence items."""

    __slots__ = ("facts", "left")

    def __init__(self) -> None:
        self.left = MAX_TEXT_BYTES
        self.facts = 0

    def count_facts(self, count: int, path: str) -> None:
        self.facts += count
        if self.facts > MAX_FACTS:
            raise InputError(path, f"too many facts over all evidence items (limit {MAX_FACTS})")

    def spend(self, text: str, path: str) -> None:
        # Four bytes per character is the UTF-8 worst case: skip the encoding when that fits.
        if len(text) * 4 <= self.left:
            self.left -= len(text.encode("utf-8", "surrogatepass"))
            return
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.left:
            raise InputError(path, f"text over the limit of {MAX_TEXT_BYTES} bytes per record")
        self.left -= size


def iso_as_of(value: object, path: str) -> str:
    """The day `value` names, written YYYY-MM-DD: a date, a datetime (a date too, read as its
    day) or a string written so; else InputError on `path`."""
    if type(value) is datetime.date:
        return value.isoformat()
    if type(value) is str and is_iso_date(value):
        return value
    if isinstance(value, datetime.datetime):
        return value.date().isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    if not isinstance(value, str):
        raise InputError(path, "must be a string (YYYY-MM-DD)")
    if not is_iso_date(value):
        raise InputError(path, "must be a date written YYYY-MM-DD")
    return str(value)


# -- JSON records -----------------------------------------------------------------------------


_PLAIN_CLAIM_KEYS = frozenset({"key", "value", "cite"})


def _object(raw: object, path: str, fields: frozenset[str]) -> dict[str, object]:
    if not isinstance(raw, dict):
        raise InputError(path, "must be an object")
    if not raw.keys() <= fields:
        _unknown_field(raw, fields, path)
    return raw


def _key_value(raw: dict[str, object], path: str) -> tuple[str, JSONScalar]:
    """The `key` and the required `value` of a claim or a fact."""
    key = _need_str(raw.get("key", _MISSING), f"{path}.key")
    value = raw.get("value", _MISSING)
    if value is _MISSING:
        raise InputError(f"{path}.value", "required")
    return key, check_scalar(value, f"{path}.value")


def _validity(raw: dict[str, object], path: str) -> tuple[str, str]:
    return (
        _date_str(raw.get("valid_from", _MISSING), f"{path}.valid_from"),
        _date_str(raw.get("valid_until", _MISSING), f"{path}.valid_until"),
    )


def _claim(raw: object, path: str) -> ClaimT:
    raw = _object(raw, path, CLAIM_FIELDS)
    key, value = _key_value(raw, path)
    return (
        key,
        value,
        _need_str(raw.get("cite", _MISSING), f"{path}.cite"),
        _subject(raw.get("subject"), f"{path}.subject"),
    )


def _fact(raw: object, path: str) -> FactT:
    raw = _object(raw, path, FACT_FIELDS)
    key, value = _key_value(raw, path)
    return (
        key,
        value,
        *_validity(raw, path),
        _subject(raw.get("subject"), f"{path}.subject"),
        _opt_str(raw.get("span"), f"{path}.span"),
    )


_FLAT_KEYS = frozenset({"id", *FLAT_FACT_FIELDS})


def _plain_item(raw: object) -> ItemT | None:
    """The common shape, flat and without optional fields, checked inline (the CLI sees
    hundreds of thousands of these); ``None`` for anything else, even if it is valid."""
    if type(raw) is dict and raw.keys() == _FLAT_KEYS:
        evidence_id = raw["id"]
        key = raw["key"]
        value = raw["value"]
        valid_from = raw["valid_from"]
        valid_until = raw["valid_until"]
        kind = type(value)
        if (
            type(evidence_id) is str
            and evidence_id
            and type(key) is str
            and key
            and type(valid_from) is str
            and type(valid_until) is str
            and (
                kind is str
                or kind is bool
                or value is None
                or (kind is int and MIN_INT <= value <= MAX_INT)
                or (kind is float and _plain_float(value))
            )
        ):
            return (
                evidence_id,
                ((key, value, valid_from, valid_until, None, None),),
                None,
                None,
                None,
                None,
                None,
                False,
                None,
            )
    return None


def _evidence_item(raw: object, path: str, budget: _RecordBudget) -> ItemT:
    raw = _object(raw, path, EVIDENCE_FIELDS)
    evidence_id = _need_str(raw.get("id", _MISSING), f"{path}.id")
    facts_raw = raw.get("facts", _MISSING)
    facts: tuple[FactT, ...]
    if facts_raw is _MISSING or facts_raw is None:
        # The flat shape: the item is one fact.
        key, value = _key_value(raw, path)
        facts = (
            (
                key,
                value,
                *_validity(raw, path),
                _subject(raw.get("subject"), f"{path}.subject"),
                None,
            ),
        )
    else:
        for name in (*FLAT_FACT_FIELDS, "subject"):
            if raw.get(name) is not None:  # null: an optional field left out
                raise InputError(
                    f"{path}.{name}", "not allowed next to facts (put it inside each fact)"
                )
        if not isinstance(facts_raw, list):
            raise InputError(f"{path}.facts", "must be a list")
        budget.count_facts(len(facts_raw), f"{path}.facts")
        facts = tuple(_fact(f, f"{path}.facts[{j}]") for j, f in enumerate(facts_raw))
    text = _opt_str(raw.get("text"), f"{path}.text")
    if text:
        budget.spend(text, f"{path}.text")
    allowed = raw.get("allowed_principals")
    superseded = raw.get("superseded", False)
    if superseded is None:
        superseded = False
    elif type(superseded) is not bool:
        raise InputError(f"{path}.superseded", "must be true or false")
    return (
        evidence_id,
        facts,
        _opt_str(raw.get("document"), f"{path}.document"),
        _opt_str(raw.get("revision"), f"{path}.revision"),
        _opt_str(raw.get("span"), f"{path}.span"),
        text,
        None if allowed is None else _principal_set(allowed, f"{path}.allowed_principals"),
        superseded,
        _opt_str(raw.get("current_revision"), f"{path}.current_revision"),
    )


def _kb_fact(raw: object, path: str) -> KbT:
    raw = _object(raw, path, KB_FIELDS)
    document = _need_str(raw.get("document", _MISSING), f"{path}.document")
    revision = _need_str(raw.get("revision", _MISSING), f"{path}.revision")
    key, value = _key_value(raw, path)
    return (
        document,
        revision,
        key,
        value,
        *_validity(raw, path),
        _subject(raw.get("subject"), f"{path}.subject"),
        _opt_str(raw.get("span"), f"{path}.span"),
    )


def _unresolved_entries(
    mapping: dict[object, object],
) -> tuple[list[tuple[str, str]], list[UnresolvedPrincipalsT]]:
    """The JSON ``unresolved`` object: each id maps to its reason, or to an object with the
    reason and the allowed principals of the document's current revision (for step 0)."""
    pairs: list[tuple[object, object]] = []
    allowed: list[UnresolvedPrincipalsT] = []
    for cite_id, entry in mapping.items():
        if isinstance(entry, dict):
            path = child_path("unresolved", cite_id)
            if not entry.keys() <= UNRESOLVED_FIELDS:
                _unknown_field(entry, UNRESOLVED_FIELDS, path)
            why = entry.get("reason", _MISSING)
            if why is _MISSING:
                raise InputError(f"{path}.reason", "required")
            if not isinstance(why, str) or why not in UNRESOLVED_REASONS:
                raise InputError(f"{path}.reason", UNRESOLVED_CHOICES)
            principals = entry.get("allowed_principals")
            if principals is not None and isinstance(cite_id, str) and cite_id:
                allowed.append(
                    (cite_id, _principal_set(principals, f"{path}.allowed_principals"))
                )
            pairs.append((cite_id, why))
        else:
            pairs.append((cite_id, entry))
    checked = _check_unresolved(pairs)
    allowed.sort()
    return checked, allowed


def _check_unresolved_principals(
    pairs: Sequence[object], unresolved: list[tuple[str, str]]
) -> list[UnresolvedPrincipalsT]:
    """``Options.unresolved_principals``: each id must be listed as unresolved."""
    listed = {cite_id for cite_id, _ in unresolved}
    checked: list[UnresolvedPrincipalsT] = []
    seen: set[str] = set()
    for index, pair in enumerate(pairs):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise InputError(
                f"unresolved_principals[{index}]", "must be an (id, allowed principals) pair"
            )
        cite_id, principals = pair
        if not isinstance(cite_id, str) or not cite_id:
            raise InputError(
                child_path("unresolved_principals", cite_id), "must be a non-empty string id"
            )
        path = child_path("unresolved", cite_id)
        if cite_id not in listed:
            raise InputError(
                child_path("unresolved_principals", cite_id), "is not listed as unresolved"
            )
        if cite_id in seen:
            raise InputError(child_path("unresolved_principals", cite_id), "listed twice")
        seen.add(cite_id)
        if principals is not None:
            checked.append(
                (str(cite_id), _principal_set(principals, f"{path}.allowed_principals"))
            )
    checked.sort()
    return checked


def _check_unresolved(pairs: Sequence[object]) -> list[tuple[str, str]]:
    checked: list[tuple[str, str]] = []
    seen: set[str] = set()
    for index, pair in enumerate(pairs):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise InputError(f"unresolved[{index}]", "must be an (id, reason) pair")
        cite_id, why = pair
        path = child_path("unresolved", cite_id)
        if not isinstance(cite_id, str) or not cite_id:
            raise InputError(path, "must be a non-empty string id")
        if not isinstance(why, str) or why not in UNRESOLVED_REASONS:
            raise InputError(path, UNRESOLVED_CHOICES)
        if cite_id in seen:
            # As a JSON object cannot: one id with two reasons would be read both ways at once.
            raise InputError(path, "listed twice")
        seen.add(cite_id)
        checked.append((str(cite_id), str(why)))
    checked.sort()
    return checked


def _principal_set(value: object, path: str) -> tuple[str, ...]:
    """Allowed principals are a set: stored sorted and without repeats. A tuple is remembered
    by identity: the items citing one document share its tuple."""
    known = _checked_principals.get(value)
    if known is not None:
        return known  # type: ignore[no-any-return]
    return _checked_principals.keep(value,
                                    tuple(sorted(set(_str_tuple(value, path, MAX_PRINCIPALS)))))


def parse_raw(record: object, default_as_of: datetime.date | None = None) -> RawCase:
    """Validate a JSON record into the engine's tuples, or raise ``InputError``.
    `default_as_of` is a plain date (not a datetime): callers make it one once per call."""
    if not isinstance(record, dict):
        raise InputError("$", "must be a JSON object")
    if not record.keys() <= TOP_LEVEL_FIELDS:
        _unknown_field(record, TOP_LEVEL_FIELDS, "$")

    case_id = record.get("id")
    if case_id is not None and not (
        type(case_id) is str or (type(case_id) is int and MIN_INT <= case_id <= MAX_INT)
    ):
        raise InputError("id", "must be a string or an integer")

    as_of_raw = record.get("as_of")
    if type(as_of_raw) is str and ISO_DATE_MEMO.get(as_of_raw):
        as_of = as_of_raw  # a date seen before: the usual case, checked without a call
    elif as_of_raw is not None:
        as_of = iso_as_of(as_of_raw, "as_of")
    elif default_as_of is not None:
        as_of = default_as_of.isoformat()
    else:
        as_of = datetime.date.today().isoformat()

    claims_raw = record.get("claims", _MISSING)
    if type(claims_raw) is not list:
        raise InputError("claims", "required" if claims_raw is _MISSING else "must be a list")
    if len(claims_raw) > MAX_CLAIMS:
        raise InputError("claims", f"too many claims ({len(claims_raw)}, limit {MAX_CLAIMS})")
    claims: list[ClaimT] = []
    for index, raw in enumerate(claims_raw):
        if type(raw) is dict and raw.keys() == _PLAIN_CLAIM_KEYS:
            # The common shape, checked inline.
            key = raw["key"]
            value = raw["value"]
            cite = raw["cite"]
            kind = type(value)
            if (
                type(key) is str
                and key
                and type(cite) is str
                and cite
                and (
                    kind is str
                    or kind is bool
                    or value is None
                    or (kind is int and MIN_INT <= value <= MAX_INT)
                    or (kind is float and _plain_float(value))
                )
            ):
                claims.append((key, value, cite, None))
                continue
        claims.append(_claim(raw, f"claims[{index}]"))

    evidence_raw = record.get("evidence", _MISSING)
    if type(evidence_raw) is not list:
        raise InputError("evidence", "required" if evidence_raw is _MISSING else "must be a list")
    if len(evidence_raw) > MAX_EVIDENCE:
        raise InputError(
            "evidence", f"too many evidence items ({len(evidence_raw)}, limit {MAX_EVIDENCE})"
        )
    budget: _RecordBudget | None = None  # created by the first item that has text or facts
    items: list[ItemT] = []
    for index, raw in enumerate(evidence_raw):
        item = _plain_item(raw)
        if item is None:
            if budget is None:
                budget = _RecordBudget()
            item = _evidence_item(raw, f"evidence[{index}]", budget)
        items.append(item)
    if budget is not None and sum(len(item[1]) for item in items) > MAX_FACTS:
        # Only items with a facts list were counted on the way; plain items hold one fact each.
        raise InputError("evidence", f"too many facts over all evidence items (limit {MAX_FACTS})")

    answer = _opt_str(record.get("answer"), "answer")
    if answer:
        (budget or _RecordBudget()).spend(answer, "answer")

    asked_by = record.get("asked_by")
    principals = None if asked_by is None else _str_tuple(asked_by, "asked_by", MAX_PRINCIPALS)

    kb: list[KbT] = []
    kb_raw = record.get("kb_facts")
    if kb_raw is not None:
        if not isinstance(kb_raw, list):
            raise InputError("kb_facts", "must be a list")
        if len(kb_raw) > MAX_FACTS:
            raise InputError("kb_facts", f"too many kb facts ({len(kb_raw)}, limit {MAX_FACTS})")
        kb = [_kb_fact(raw, f"kb_facts[{index}]") for index, raw in enumerate(kb_raw)]

    unresolved: list[tuple[str, str]] = []
    unresolved_allowed: list[UnresolvedPrincipalsT] = []
    unresolved_raw = record.get("unresolved")
    if unresolved_raw is not None:
        if not isinstance(unresolved_raw, dict):
            raise InputError("unresolved", "must be an object mapping ids to a reason")
        if len(unresolved_raw) > MAX_EVIDENCE:
            raise InputError("unresolved", f"too many entries (limit {MAX_EVIDENCE})")
        unresolved, unresolved_allowed = _unresolved_entries(unresolved_raw)

    return (
        case_id, claims, items, as_of, answer, principals, kb, unresolved, unresolved_allowed
    )


# -- dataclasses --------------------------------------------------------------------------------


def _typed_fact_core(
    fact: Fact | KbFact, path: str
) -> tuple[str, JSONScalar, str, str, str | None]:
    """Key, value, validity and subject of a typed fact, each checked like the JSON shape."""
    return (
        _need_str(fact.key, f"{path}.key"),
        check_scalar(fact.value, f"{path}.value"),
        _date_str(fact.valid_from, f"{path}.valid_from"),
        _date_str(fact.valid_until, f"{path}.valid_until"),
        _subject(fact.subject, f"{path}.subject"),
    )


_PLAIN = (str, bool, type(None))


def _plain_fact(fact: Fact | KbFact) -> tuple[object, ...] | None:
    """The common case of `_typed_fact_core` plus span, without building error paths: every
    field already has its plain type. None sends the fact through the full check."""
    key, value, subject, span = fact.key, fact.value, fact.subject, fact.span
    if not (
        type(key) is str and key
        and type(fact.valid_from) is str and type(fact.valid_until) is str
        and (subject is None or type(subject) is str)
        and (span is None or type(span) is str)
    ):
        return None
    kind = type(value)
    if not (kind in _PLAIN or (kind is int and MIN_INT <= value <= MAX_INT)  # type: ignore[operator]
            or (kind is float and _plain_float(value))):  # type: ignore[arg-type]
        return None
    return (key, value, fact.valid_from, fact.valid_until, subject or None, span)


def _item_facts(facts: tuple[Fact, ...], path: str) -> tuple[FactT, ...]:
    """An evidence item's facts, checked and flattened."""
    out: list[FactT] = []
    for position, fact in enumerate(facts):
        plain = _plain_fact(fact) if type(fact) is Fact else None
        if plain is not None:
            out.append(plain)  # type: ignore[arg-type]
            continue
        fact_path = f"{path}.facts[{position}]"
        if not isinstance(fact, Fact):
            raise InputError(fact_path, "must be a Fact")
        out.append((*_typed_fact_core(fact, fact_path), _opt_str(fact.span, f"{fact_path}.span")))
    return tuple(out)


# Input checked already, by identity (see engine.ByIdentity): an evidence item's facts, a
# knowledge-base fact, and a whole tuple of knowledge-base facts.
_checked_item_facts = ByIdentity()
_checked_kb_fact = ByIdentity(KbFact)
_checked_kb = ByIdentity()
_checked_principals = ByIdentity()


def _kb_facts(kb_facts: tuple[KbFact, ...]) -> tuple[KbT, ...]:
    """Knowledge-base facts, checked and flattened (each remembered on its own as well: the
    same fact comes back in other answers' lists)."""
    kb: list[KbT] = []
    for index, kb_fact in enumerate(kb_facts):
        checked = _checked_kb_fact.get(kb_fact)
        if checked is not None:
            kb.append(checked)
            continue
        plain = _plain_fact(kb_fact) if type(kb_fact) is KbFact else None
        if (plain is not None and type(kb_fact.document) is str and kb_fact.document
                and type(kb_fact.revision) is str and kb_fact.revision):
            flat: KbT = (kb_fact.document, kb_fact.revision, *plain)  # type: ignore[assignment]
            kb.append(_checked_kb_fact.keep(kb_fact, flat))
            continue
        path = f"kb_facts[{index}]"
        if not isinstance(kb_fact, KbFact):
            raise InputError(path, "must be a KbFact")
        kb.append(
            (
                _need_str(kb_fact.document, f"{path}.document"),
                _need_str(kb_fact.revision, f"{path}.revision"),
                *_typed_fact_core(kb_fact, path),
                _opt_str(kb_fact.span, f"{path}.span"),
            )
        )
    return tuple(kb)


def objects_to_raw(
    claims: Sequence[Claim], evidence: Sequence[Evidence], options: Options
) -> tuple[
    list[ClaimT],
    list[ItemT],
    str,
    str | None,
    tuple[str, ...] | None,
    Sequence[KbT],
    list[tuple[str, str]],
    list[UnresolvedPrincipalsT],
]:
    """Check dataclass input against the same rules as JSON records and flatten it to tuples.

    Static typing already rules out most mistakes; this catches what it cannot (limits, floats
    that are not finite, empty ids) and callers that do not type-check, with the JSON paths.
    """
    if len(claims) > MAX_CLAIMS:
        raise InputError("claims", f"too many claims ({len(claims)}, limit {MAX_CLAIMS})")
    if len(evidence) > MAX_EVIDENCE:
        raise InputError(
            "evidence", f"too many evidence items ({len(evidence)}, limit {MAX_EVIDENCE})"
        )
    raw_claims: list[ClaimT] = []
    for index, claim in enumerate(claims):
        path = f"claims[{index}]"
        if not isinstance(claim, Claim):
            raise InputError(path, "must be a Claim")
        raw_claims.append(
            (
                _need_str(claim.key, f"{path}.key"),
                check_scalar(claim.value, f"{path}.value"),
                _need_str(claim.cite, f"{path}.cite"),
                _subject(claim.subject, f"{path}.subject"),
            )
        )
    budget = _RecordBudget()
    items: list[ItemT] = []
    for index, item in enumerate(evidence):
        path = f"evidence[{index}]"
        if not isinstance(item, Evidence):
            raise InputError(path, "must be an Evidence")
        if not isinstance(item.facts, tuple):
            raise InputError(f"{path}.facts", "must be a tuple of Fact")
        budget.count_facts(len(item.facts), f"{path}.facts")
        facts = _checked_item_facts.get(item.facts)
        if facts is None:
            facts = _checked_item_facts.keep(item.facts, _item_facts(item.facts, path))
        text = _opt_str(item.text, f"{path}.text")
        if text:
            budget.spend(text, f"{path}.text")
        if type(item.superseded) is not bool:
            raise InputError(f"{path}.superseded", "must be true or false")
        allowed = item.allowed_principals
        items.append(
            (
                _need_str(item.id, f"{path}.id"),
                facts,
                _opt_str(item.document, f"{path}.document"),
                _opt_str(item.revision, f"{path}.revision"),
                _opt_str(item.span, f"{path}.span"),
                text,
                None if allowed is None else _principal_set(allowed, f"{path}.allowed_principals"),
                item.superseded,
                _opt_str(item.current_revision, f"{path}.current_revision"),
            )
        )

    if not isinstance(options, Options):
        raise InputError("options", "must be an Options")
    as_of = iso_as_of(options.as_of, "as_of")
    answer = _opt_str(options.answer_text, "answer")
    if answer:
        budget.spend(answer, "answer")
    principals = (
        None
        if options.principals is None
        else _str_tuple(options.principals, "asked_by", MAX_PRINCIPALS)
    )
    if len(options.kb_facts) > MAX_FACTS:
        raise InputError(
            "kb_facts", f"too many kb facts ({len(options.kb_facts)}, limit {MAX_FACTS})"
        )
    kb = _checked_kb.get(options.kb_facts)
    if kb is None:
        kb = _checked_kb.keep(options.kb_facts, _kb_facts(options.kb_facts))
    pairs = options.unresolved_pairs
    if len(pairs) > MAX_EVIDENCE:
        raise InputError("unresolved", f"too many entries (limit {MAX_EVIDENCE})")
    unresolved = _check_unresolved(pairs)
    allowed_pairs = options.unresolved_principal_pairs
    if len(allowed_pairs) > MAX_EVIDENCE:
        raise InputError("unresolved_principals", f"too many entries (limit {MAX_EVIDENCE})")
    unresolved_allowed = (
        _check_unresolved_principals(allowed_pairs, unresolved) if allowed_pairs else []
    )
    return raw_claims, items, as_of, answer, principals, kb, unresolved, unresolved_allowed


def raw_to_objects(
    case: RawCase,
) -> tuple[tuple[Claim, ...], tuple[Evidence, ...], Options]:
    """Build the dataclasses from validated tuples."""
    _, claims, items, as_of, answer, principals, kb, unresolved, unresolved_allowed = case
    return (
        tuple(Claim(key=k, value=v, cite=c, subject=s) for k, v, c, s in claims),
        tuple(
            Evidence(
                id=item[0],
                facts=tuple(
                    Fact(key=k, value=v, valid_from=f, valid_until=u, subject=s, span=sp)
                    for k, v, f, u, s, sp in item[1]
                ),
                document=item[2],
                revision=item[3],
                span=item[4],
                text=item[5],
                allowed_principals=item[6],
                superseded=item[7],
                current_revision=item[8],
            )
            for item in items
        ),
        Options(
            as_of=datetime.date.fromisoformat(as_of),
            answer_text=answer,
            principals=principals,
            kb_facts=tuple(
                KbFact(
                    document=d,
                    revision=r,
                    key=k,
                    value=v,
                    valid_from=f,
                    valid_until=u,
                    subject=s,
                    span=sp,
                )
                for d, r, k, v, f, u, s, sp in kb
            ),
            unresolved=tuple(unresolved),
            unresolved_principals=tuple(unresolved_allowed),
        ),
    )
