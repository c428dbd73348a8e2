"""The decision order of DESIGN.md, run on plain tuples.

Both public entry points feed this module: ``gating.evaluate`` (typed dataclasses) and
``gating.evaluate_record`` / the CLI (JSON records). Keeping one implementation on tuples means
the two can never disagree, and the CLI does not pay for building dataclasses it would only
throw away again.

Every step runs on every input; the first step that failed gives the primary reason.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import operator
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, TypeAlias, TypeVar

from gating.markers import extract_markers

# GATE_VERSION is re-exported: tests elsewhere patch gating.engine.GATE_VERSION.
from gating.model import GATE_VERSION as GATE_VERSION
from gating.model import UNCITED_MIN_CHARS, JSONScalar, claim_asks_about

# key, value, valid_from, valid_until, subject, span
FactT: TypeAlias = tuple[str, JSONScalar, str, str, str | None, str | None]
# id, facts, document, revision, span, text, allowed_principals, superseded, current_revision
ItemT: TypeAlias = tuple[
    str,
    tuple[FactT, ...],
    str | None,
    str | None,
    str | None,
    str | None,
    tuple[str, ...] | None,
    bool,
    str | None,
]
# document, revision, key, value, valid_from, valid_until, subject, span
KbT: TypeAlias = tuple[str, str, str, JSONScalar, str, str, str | None, str | None]
# key, value, cite, subject
ClaimT: TypeAlias = tuple[str, JSONScalar, str, str | None]
# unresolved id, allowed principals of its document's current revision
UnresolvedPrincipalsT: TypeAlias = tuple[str, tuple[str, ...]]
# code, step, claim, evidence ids, message, kb documents
FindingT: TypeAlias = tuple[str, str, int | None, tuple[str, ...], str, tuple[str, ...]]
# code, claim, evidence ids, message, kb documents
WarningT: TypeAlias = tuple[str, int | None, tuple[str, ...], str, tuple[str, ...]]
# decision, reason, findings, warnings, fingerprint, next boundary (ISO date or None)
ResultT: TypeAlias = tuple[str, str, list[FindingT], list[WarningT], str, str | None]

STEP_OF_CODE: dict[str, str] = {
    "unauthorized_evidence": "0",
    "no_claims": "1",
    "no_evidence": "2",
    "invalid_metadata": "3",
    "unknown_citation": "4",
    "noncurrent_citation": "5",
    "superseded_revision": "5b",
    "conflicting_sources": "6",
    "unsupported_claim": "7",
    "uncited_answer": "7b",
}
DECISION_OF_CODE: dict[str, str] = {
    "unauthorized_evidence": "abstain",
    "no_claims": "abstain",
    "no_evidence": "abstain",
    "invalid_metadata": "review",
    "unknown_citation": "abstain",
    "noncurrent_citation": "review",
    "superseded_revision": "review",
    "conflicting_sources": "review",
    "unsupported_claim": "abstain",
    "uncited_answer": "abstain",
}
STEPS = ("0", "1", "2", "3", "4", "5", "5b", "6", "7", "7b")
_STEP_RANK = {step: rank for rank, step in enumerate(STEPS)}
_WARNING_RANK = {"single_source": 0, "uncited_evidence": 1}

# Validity status of a fact on as_of; also what the fingerprint records instead of the date.
BEFORE = "before"
CURRENT = "current"
AFTER = "after"
INVALID = "invalid"

_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
ISO_DATE_MEMO: dict[str, bool] = {}
"""Results of ``is_iso_date`` so far; hot loops read it directly and call only on a miss."""


def is_iso_date(text: str) -> bool:
    """Whether ``text`` is a real calendar date written exactly as ``YYYY-MM-DD``.

    ``date.fromisoformat`` alone is too lenient since Python 3.11 (it takes ``20261020``), hence
    the pattern first. Results are memoised: real inputs reuse a handful of dates.
    """
    if len(text) != 10:
        return False
    ok = ISO_DATE_MEMO.get(text)
    if ok is None:
        ok = _DATE_RE.fullmatch(text) is not None
        if ok:
            try:
                datetime.date.fromisoformat(text)
            except ValueError:
                ok = False
        if len(ISO_DATE_MEMO) >= 4096:
            ISO_DATE_MEMO.clear()
        ISO_DATE_MEMO[text] = ok
    return ok


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


_quote = json.encoder.encode_basestring  # JSON string literal, non-ASCII kept readable
_escape = json.encoder.encode_basestring_ascii
# Characters a reader cannot see or cannot tell from others: spaces other than U+0020 (a no-break
# space from a PDF looks like a space), format characters (U+200B looks like nothing), line and
# paragraph separators.
_UNSEEN = frozenset({"Zs", "Cf", "Zl", "Zp"})


def _json_text(value: str) -> str:
    """A string as a JSON literal that reads differently from any other: non-ASCII is kept
    readable, except characters a reader cannot see or tell apart, written as escapes as
    control characters are; in a string not in NFC, combining marks too ("e" + U+0301 looks
    like "\u00e9")."""
    text = _quote(value)
    if text.isascii():
        return text
    composed = unicodedata.is_normalized("NFC", value)
    category = unicodedata.category
    return "".join([
        _escape(char)[1:-1]
        if (char != " " and category(char) in _UNSEEN) or (not composed and category(char) == "Mn")
        else char
        for char in text
    ])


def show(value: JSONScalar) -> str:
    """A value as JSON, so that 14, 14.0, "14" and true read differently in a message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _clip(_json_text(value))
    if isinstance(value, float):
        return _clip(float.__repr__(value))
    return _clip(str(value))


def _shown_apart(values: Sequence[JSONScalar]) -> list[str]:
    """``show`` of each value, except that strings it clips alike (they differ only past its
    limit, as two wordings of a long policy sentence do) are shown from a little before where
    they start to differ: a message never names two different values alike."""
    shown = [show(value) for value in values]
    for _ in range(8):  # each round reads further into the strings; one is nearly always enough
        alike: dict[str, list[int]] = {}
        for index, text in enumerate(shown):
            alike.setdefault(text, []).append(index)
        groups = [
            indexes for indexes in alike.values()
            if len({(type(values[i]), values[i]) for i in indexes}) > 1
        ]
        if not groups:
            break
        for indexes in groups:
            # Only strings are ever clipped, so only strings can read alike.
            first, *others = texts = [_json_text(str(values[i])) for i in indexes]
            common = min(
                next((at for at, (a, b) in enumerate(zip(first, other, strict=False)) if a != b),
                     min(len(first), len(other)))
                for other in others
            )
            for index, text in zip(indexes, texts, strict=True):
                shown[index] = _clip('"...' + text[common - 20:])
    return shown


def _what(key: str, subject: str | None) -> str:
    return _clip(key) if subject is None else f"{_clip(key)} of {_clip(subject)}"


def _date_problem(valid_from: str, valid_until: str) -> str:
    bad = [
        f"{name} {json.dumps(_clip(value, 40))} is not a YYYY-MM-DD date"
        for name, value in (("valid_from", valid_from), ("valid_until", valid_until))
        if not is_iso_date(value)
    ]
    if bad:
        return " and ".join(bad)
    return f"valid_from {valid_from} is after valid_until {valid_until}"


def _day_after(iso: str) -> str | None:
    try:
        return (datetime.date.fromisoformat(iso) + datetime.timedelta(days=1)).isoformat()
    except OverflowError:  # 9999-12-31: validity never ends
        return None


def _not_json(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _compact_encoder() -> Callable[[object], str]:
    """Compact, ASCII-only JSON encoding, as used for fingerprints and CLI output.

    ``JSONEncoder.encode`` builds a fresh C encoder on every call, which costs about as much as
    encoding a small record; building it once saves that. Falls back to the pure-Python encoder
    where the C accelerator is missing.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has it
        return json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
    encoder = make(
        None,  # no circular-reference check: only trees the gate built itself get here
        _not_json,
        json.encoder.encode_basestring_ascii,
        None,  # no indent
        ":",
        ",",
        False,  # sort_keys
        False,  # skipkeys
        False,  # allow_nan
    )

    def encode(value: object) -> str:
        return "".join(encoder(value, 0))

    return encode


encode_json = _compact_encoder()
_day_after_cache: dict[str, str | None] = {}


def _next_day(iso: str) -> str | None:
    day = _day_after_cache.get(iso, "")
    if day == "":
        day = _day_after(iso)
        if len(_day_after_cache) >= 4096:
            _day_after_cache.clear()
        _day_after_cache[iso] = day
    return day


_encoded: dict[tuple[object, type], str] = {}


def _encoded_once(value: tuple[object, ...], scalar: object) -> str:
    """encode_json(value), remembered: in a batch the same facts come back for every answer
    that cites them or shares their key. The key carries the type of the fact's value,
    because 1 and True are equal as dict keys but are written differently (floats are not
    remembered at all: 0.0 and -0.0 are equal too)."""
    if type(scalar) is float:
        return encode_json(value)
    key = (value, type(scalar))
    text = _encoded.get(key)
    if text is None:
        if len(_encoded) >= 8192:
            _encoded.clear()
        text = _encoded[key] = encode_json(value)
    return text


class ByIdentity:
    """What was made of an input object (its checked form, its JSON text), remembered by the
    object's identity: a caller gating many answers at once hands the gate the same objects
    for each (a document's facts, the knowledge base's), and looking one up by identity skips
    checking or hashing it again. Each entry keeps its object alive, so an id is never reused
    while it is remembered. Only immutable objects are remembered: tuples, and the frozen
    type given (a list could change after it was checked)."""

    def __init__(self, frozen: type | None = None) -> None:
        self.entries: dict[int, tuple[object, Any]] = {}
        self.kinds = (tuple, frozen)

    def get(self, value: object) -> Any:
        known = self.entries.get(id(value))
        return known[1] if known is not None and known[0] is value else None

    def keep(self, value: object, made: _W) -> _W:
        if type(value) in self.kinds:
            if len(self.entries) >= 8192:
                self.entries.clear()
            self.entries[id(value)] = (value, made)
        return made


_W = TypeVar("_W")
_fact_texts = ByIdentity()  # a fact: its JSON text
_item_facts = ByIdentity()  # an item's facts: their order by text, and their JSON array
_kb_written = ByIdentity()  # kb facts: the statuses written for, the facts' and statuses' JSON


class _Dated(NamedTuple):
    """What a run reads of some facts (an item's, or the knowledge base's) on one as_of date."""

    statuses: list[str]  # each fact's validity status, in order
    first_start: str | None  # earliest valid_from after as_of
    first_end: str | None  # earliest valid_until on or after as_of
    any_invalid: bool
    # Only for an item's facts: key: (subject, value) in force.
    current: dict[str, list[tuple[str | None, JSONScalar]]]
    # Only for kb facts: the same as in_force entries, their source named (a kb fact's is its
    # own document; an item's is its id, which differs between answers citing it).
    kb_current: dict[str, list[tuple[str | None, JSONScalar, _Source]]]


_dated = ByIdentity()  # facts: the as_of they were dated on (and their shape), their _Dated
_NOT_KB: dict[str, list[tuple[str | None, JSONScalar, _Source]]] = {}  # an item's kb_current
_NO_FACTS = _Dated([], None, None, False, {}, _NOT_KB)


def _dated_facts(facts: Sequence[Any], as_of: str, at: int, shared: bool) -> _Dated:
    """The facts' statuses on as_of and what follows from them; a fact's key is at index
    ``at`` and its value, valid_from, valid_until and subject follow (0 for FactT, 2 for KbT).
    When ``shared``, remembered by the facts' identity, with the date: the answers of a batch
    cite the same documents and read the same knowledge base. Well-formed ISO dates order as
    strings the way the dates do, so nothing is parsed here. The lists returned may be
    shared: read, never changed."""
    if not facts:
        return _NO_FACTS
    if shared:
        known = _dated.get(facts)
        if known is not None and known[0] == (as_of, at):
            return known[1]  # type: ignore[no-any-return]
    date_ok = ISO_DATE_MEMO.get
    statuses: list[str] = []
    first_start = first_end = None
    any_invalid = False
    current: dict[str, list[tuple[str | None, JSONScalar]]] = {}
    kb_current = {} if at else _NOT_KB
    for fact in facts:
        start = fact[at + 2]
        end = fact[at + 3]
        if not ((date_ok(start) or is_iso_date(start)) and (date_ok(end) or is_iso_date(end))
                and start <= end):
            statuses.append(INVALID)
            any_invalid = True
        elif as_of > end:
            statuses.append(AFTER)
        else:
            if as_of < start:
                statuses.append(BEFORE)
                if first_start is None or start < first_start:
                    first_start = start
            else:
                statuses.append(CURRENT)
                if at:
                    kb_current.setdefault(fact[at], []).append(
                        (fact[at + 4], fact[at + 1], (None, fact[0], fact[0])))
                else:
                    current.setdefault(fact[0], []).append((fact[4], fact[1]))
            if first_end is None or end < first_end:
                first_end = end
    dated = _Dated(statuses, first_start, first_end, any_invalid, current, kb_current)
    return _dated.keep(facts, ((as_of, at), dated))[1] if shared else dated


def _fact_text(fact: tuple[object, ...], scalar: object) -> str:
    text = _fact_texts.get(fact)
    return text if text is not None else _fact_texts.keep(fact, _encoded_once(fact, scalar))


def _sorted_facts(facts: tuple[FactT, ...]) -> tuple[list[int], str]:
    """The order that sorts an item's facts by their JSON text, and that JSON array."""
    known = _item_facts.get(facts)
    if known is not None:
        return known  # type: ignore[no-any-return]
    texts = [_fact_text(fact, fact[1]) for fact in facts]
    order = sorted(range(len(facts)), key=texts.__getitem__)
    return _item_facts.keep(facts, (order, "[" + ",".join([texts[i] for i in order]) + "]"))


_ascii_string = json.encoder.encode_basestring_ascii  # a str as encode_json writes it
_item_tails: dict[tuple[object, ...], str] = {}


def _item_tail_text(tail: tuple[object, ...]) -> str:
    """encode_json(tail) without its opening bracket: the fields of an item after its facts
    (document, revision, span, text, allowed principals, superseded, current revision),
    remembered by value. The answers citing one passage repeat them, and equal values here are
    written alike: each is a string, None, a tuple of strings or a bool (checked as such)."""
    text = _item_tails.get(tail)
    if text is None:
        if len(_item_tails) >= 8192:
            _item_tails.clear()
        text = _item_tails[tail] = encode_json(tail)[1:]
    return text


def _canonical_items(
    items: Sequence[ItemT], item_statuses: list[list[str]], distinct_ids: bool
) -> tuple[list[str], list[list[str]]]:
    """The JSON texts of the items (and their statuses) in a canonical order: facts sorted
    inside each item, items sorted by id, or by their whole canonical text when ids repeat.
    Each text is what encode_json gives for the item with its facts sorted."""
    texts: list[str] = []
    statuses: list[list[str]] = []
    for item, item_status in zip(items, item_statuses, strict=True):
        order, facts_text = _sorted_facts(item[1])
        texts.append(f"[{_ascii_string(item[0])},{facts_text},{_item_tail_text(item[2:])}")
        statuses.append([item_status[i] for i in order])
    if len(items) > 1:
        if distinct_ids:
            order = sorted(range(len(items)), key=lambda i: items[i][0])
        else:
            order = sorted(range(len(items)), key=texts.__getitem__)
        texts = [texts[i] for i in order]
        statuses = [statuses[i] for i in order]
    return texts, statuses


def _kb_texts(kb: Sequence[KbT], kb_statuses: list[str]) -> tuple[str, str]:
    """The JSON arrays of the kb facts and of their statuses, in the order of the text
    encode_json gives each (fact, status) pair (a status is a plain word; two pairs with the
    same text are the same, so ties need no order). The answers of a batch that read the same
    facts hand over the same tuple: its texts are remembered with the statuses they were
    written for."""
    known = _kb_written.get(kb)
    if known is not None and known[0] == kb_statuses:
        return known[1], known[2]
    pairs = sorted([(f'[{text},"{status}"]', text, status) for text, status in zip(
        [_fact_text(fact, fact[3]) for fact in kb], kb_statuses, strict=True)])
    texts = (f"[{','.join([text for _, text, _ in pairs])}]",
             encode_json([status for _, _, status in pairs]))
    _kb_written.keep(kb, (list(kb_statuses), *texts))
    return texts


def fingerprint(
    claims: Sequence[ClaimT],
    items: Sequence[ItemT],
    item_statuses: list[list[str]],
    answer: str | None,
    principals: tuple[str, ...] | None,
    kb: Sequence[KbT],
    kb_statuses: list[str],
    unresolved: Sequence[tuple[str, str]],
    distinct_ids: bool,
    unresolved_principals: Sequence[UnresolvedPrincipalsT] = (),
    shared: bool = False,
) -> str:
    """SHA-256 (hex) of the compact JSON of the canonical inputs and the gate version.

    Instead of the as_of date, each fact contributes its validity status on that date, so the
    fingerprint changes exactly when a validity boundary is crossed. Evidence items, the facts
    inside an item, kb facts, principals and unresolved ids are put in a canonical order first,
    so their input order does not matter; claims keep theirs (findings refer to them by index).
    ``allowed_principals`` (of evidence and of unresolved ids) arrive sorted and deduplicated
    from validation.

    The JSON is the text ``encode_json`` gives for the tuple of those parts. Input read once
    (a record of the command line) is written in one encoder call; with ``shared``, the text
    is put together from the texts of its facts, each written once for a batch that hands the
    same fact tuples to many answers. A test holds both to the same digest.
    """
    principals_sorted = sorted(set(principals)) if principals is not None else None
    if shared:
        item_texts, item_status_lists = _canonical_items(items, item_statuses, distinct_ids)
        kb_text, kb_status_text = _kb_texts(kb, kb_statuses)
        # The leading parts in one call: each call to the encoder costs about as much as a
        # short value does.
        head = encode_json((GATE_VERSION, claims, answer, principals_sorted,
                            sorted(unresolved)))[1:-1]
        payload = "[" + ",".join((
            head, f"[{','.join(item_texts)}]", encode_json(item_status_lists), kb_text,
            kb_status_text, encode_json(sorted(unresolved_principals)),
        )) + "]"
        return hashlib.sha256(payload.encode()).hexdigest()
    if len(items) > 1 or (items and len(items[0][1]) > 1):
        canonical: list[tuple[ItemT, list[str]]] = []
        for item, statuses in zip(items, item_statuses, strict=True):
            facts = item[1]
            if len(facts) > 1:
                texts = [encode_json(fact) for fact in facts]
                order = sorted(range(len(facts)), key=texts.__getitem__)
                item = (item[0], tuple([facts[i] for i in order]), *item[2:])
                statuses = [statuses[i] for i in order]
            canonical.append((item, statuses))
        canonical.sort(key=(lambda pair: pair[0][0]) if distinct_ids
                       else (lambda pair: encode_json(pair[0])))
        items = [item for item, _ in canonical]
        item_statuses = [statuses for _, statuses in canonical]
    if len(kb) > 1:
        kb_pairs = sorted(zip(kb, kb_statuses, strict=True), key=encode_json)
        kb = [fact for fact, _ in kb_pairs]
        kb_statuses = [status for _, status in kb_pairs]
    payload = encode_json((
        GATE_VERSION, claims, answer, principals_sorted,
        sorted(unresolved) if len(unresolved) > 1 else unresolved,
        items, item_statuses, kb, kb_statuses,
        sorted(unresolved_principals) if len(unresolved_principals) > 1
        else unresolved_principals,
    ))
    return hashlib.sha256(payload.encode()).hexdigest()


# Where a value in force comes from: (evidence id, kb document, document).
_Source: TypeAlias = tuple[str | None, str | None, str | None]
_first = operator.itemgetter(0)
_third = operator.itemgetter(2)


def run(
    claims: Sequence[ClaimT],
    items: Sequence[ItemT],
    as_of: str,
    answer: str | None = None,
    principals: tuple[str, ...] | None = None,
    kb: Sequence[KbT] = (),
    unresolved: Sequence[tuple[str, str]] = (),
    unresolved_principals: Sequence[UnresolvedPrincipalsT] = (),
    shared: bool = False,
) -> ResultT:
    """Run every step on validated input; ``as_of`` is an ISO date string.

    ``unresolved_principals`` are the allowed principals of unresolved ids whose document is
    known: step 0 reads them as it reads those of evidence items. ``shared`` says the caller
    hands the same fact tuples to many runs (a batch): what is made of them is then remembered
    by their identity. The result is the same either way.

    This is the hot path of ``python -m gating evaluate``: it prefers local names and plain
    loops to helpers, and builds message text only for problems it has found.
    """
    findings: list[FindingT] = []
    add = findings.append
    no_kb: tuple[str, ...] = ()

    # The facts on as_of (see _dated_facts), and the index of what holds on as_of (for step 6
    # and the single-source warning: every retrieved item counts, cited or not, and so does the
    # rest of the knowledge base). Only keys that some claim asks about are indexed; an entry
    # is (subject, value, source) and a source is (evidence id, kb document, document).
    claim_keys = set(map(_first, claims))
    in_force: dict[str, list[tuple[str | None, JSONScalar, _Source]]]
    in_force = {}
    by_id: dict[str, list[int]] = {}
    on_dates = [_dated_facts(item[1], as_of, 0, shared) for item in items]
    for index, (item, on_date) in enumerate(zip(items, on_dates, strict=True)):
        if on_date.current:
            cited_as = (item[0], None, item[2])
            for key in claim_keys:
                pairs = on_date.current.get(key)
                if pairs is not None:
                    group = in_force.setdefault(key, [])
                    for subject, value in pairs:
                        group.append((subject, value, cited_as))
        indexes = by_id.get(item[0])
        if indexes is None:
            by_id[item[0]] = [index]
        else:
            indexes.append(index)
    item_statuses = [on_date.statuses for on_date in on_dates]
    kb_dated = _dated_facts(kb, as_of, 2, shared)
    kb_statuses = kb_dated.statuses
    for key in claim_keys:
        entries = kb_dated.kb_current.get(key)
        if entries is not None:
            in_force.setdefault(key, []).extend(entries)
    on_dates.append(kb_dated)
    first_start = first_end = None
    any_invalid = False
    for on_date in on_dates:
        start, end = on_date.first_start, on_date.first_end
        if start is not None and (first_start is None or start < first_start):
            first_start = start
        if end is not None and (first_end is None or end < first_end):
            first_end = end
        any_invalid = any_invalid or on_date.any_invalid

    markers = extract_markers(answer) if answer else []
    unresolved_why = dict(unresolved) if unresolved else {}

    # Step 0: the asker may not read a retrieved item (resolved or not).
    if principals is not None:
        _unauthorized(items, principals, add, unresolved_principals)

    # Steps 1 and 2.
    if not claims:
        add(("no_claims", "1", None, (), "the answer has no claims to check", no_kb))
    # An unresolved item was retrieved all the same (its revision has not reached the store, or
    # its document was withdrawn): it is explained by steps 3 and 4, not as missing evidence.
    if not items and not unresolved:
        add(("no_evidence", "2", None, (), "no evidence was retrieved", no_kb))

    # Step 3: duplicate ids, unusable dates; unresolved ids are handled with step 4 below.
    if len(by_id) < len(items):
        for evidence_id, indexes in by_id.items():
            if len(indexes) > 1:
                add(
                    (
                        "invalid_metadata",
                        "3",
                        None,
                        (evidence_id,),
                        f"evidence id {evidence_id} appears {len(indexes)} times",
                        no_kb,
                    )
                )
    if any_invalid:
        _invalid_dates(items, item_statuses, kb, kb_statuses, add)
    warnings: list[WarningT] = []
    if unresolved:
        _unresolved(claims, markers, unresolved, by_id, add, warnings.append)

    cited_by_claims = set(map(_third, claims))
    if markers:
        _marker_citations(
            items, item_statuses, by_id, markers, cited_by_claims, unresolved_why, add
        )

    for claim_index, (key, value, cite, subject) in enumerate(claims):
        value_type = type(value)
        indexes = by_id.get(cite)
        if indexes is None:
            # Step 4 (unresolved ids have their own finding).
            if cite not in unresolved_why:
                add(
                    (
                        "unknown_citation",
                        "4",
                        claim_index,
                        (cite,),
                        f"claim {claim_index} cites {cite}, which is not among the "
                        "retrieved evidence",
                        no_kb,
                    )
                )
        else:
            # The cited facts about the claim's key (and subject, when the claim names one).
            dated = 0
            in_force_here = supported_now = supported_ever = matched = False
            superseded = False
            for index in indexes:
                item = items[index]
                superseded = superseded or _is_superseded(item)
                for fact, status in zip(item[1], item_statuses[index], strict=True):
                    # claim_asks_about, written out: this loop runs for every fact.
                    if fact[0] == key and (subject is None or fact[4] == subject):
                        matched = True
                        same = fact[1] == value and type(fact[1]) is value_type
                        if status is CURRENT:
                            in_force_here = True
                            supported_now = supported_now or same
                        else:
                            dated += status is not INVALID
                            supported_ever = supported_ever or same
            # Step 5: only dated facts, none in force (undated ones were step 3's business).
            if dated and not in_force_here:
                add(_noncurrent(claim_index, claims[claim_index], items, indexes, item_statuses))
            elif not matched and _not_in_force(indexes, item_statuses):
                # No cited fact is about the claim's key (step 7 says so too): judge the item
                # as a whole, as for a [marker], so that a claim and a marker citing the same
                # expired item get the same step 5 finding.
                add(
                    (
                        "noncurrent_citation",
                        "5",
                        claim_index,
                        (cite,),
                        f"claim {claim_index} cites {cite}, which is not in force on the as_of "
                        f"date ({_item_periods(items, indexes, item_statuses)})",
                        no_kb,
                    )
                )
            # Step 5b (one finding per superseded item: repeated ids may differ in revision).
            if superseded:
                for index in indexes:
                    if _is_superseded(items[index]):
                        add(
                            (
                                "superseded_revision",
                                "5b",
                                claim_index,
                                (cite,),
                                f"claim {claim_index} cites {cite}"
                                + _superseded_detail(items[index]),
                                no_kb,
                            )
                        )
            # Step 7 compares with the cited facts in force; with none in force (step 5 has
            # said so already) it falls back to whatever the cited item states.
            if not (supported_now or (supported_ever and not in_force_here)):
                add(_unsupported(claim_index, claims[claim_index], items, indexes, item_statuses))

        # Step 6 and the single-source warning. A claim citing nothing retrieved rests on no
        # source at all (step 4 says so): it gets no single-source warning.
        group_in_force = in_force.get(key)
        if group_in_force and len(group_in_force) == 1:
            # One fact in force on this key (the usual case): no conflict possible.
            fact_subject, fact_value, source = group_in_force[0]
            if (
                indexes is not None
                and (subject is None or fact_subject == subject)
                and fact_value == value
                and type(fact_value) is value_type
            ):
                warnings.append(_single_source(claim_index, key, value, subject, [source]))
        elif group_in_force:
            values: dict[tuple[type, JSONScalar], list[tuple[str | None, str | None, str | None]]]
            values = {}
            for fact_subject, fact_value, source in group_in_force:
                if subject is None or fact_subject == subject:
                    typed = (type(fact_value), fact_value)
                    sources = values.get(typed)
                    if sources is None:
                        values[typed] = [source]
                    else:
                        sources.append(source)
            if len(values) > 1:
                add(_conflict(claim_index, key, subject, values))
            backing = values.get((value_type, value))
            if indexes is not None and backing is not None and (
                len(backing) == 1 or len({d or "\x00" + str(e) for e, _, d in backing}) == 1
            ):
                warnings.append(_single_source(claim_index, key, value, subject, backing))

    # Step 7b: a long answer without a single marker.
    if answer is not None and not markers:
        length = len(answer.strip())
        if length > UNCITED_MIN_CHARS:
            add(
                (
                    "uncited_answer",
                    "7b",
                    None,
                    (),
                    f"the answer text has {length} characters and no citation marker",
                    no_kb,
                )
            )

    uncited = by_id.keys() - cited_by_claims
    if uncited:
        for evidence_id in sorted(uncited):
            warnings.append(
                (
                    "uncited_evidence",
                    None,
                    (evidence_id,),
                    f"evidence {evidence_id} was retrieved but no claim cites it",
                    no_kb,
                )
            )

    if findings:
        if len(findings) > 1:
            findings = sorted(set(findings), key=_finding_order)
        reason = findings[0][0]
        decision = DECISION_OF_CODE[reason]
    else:
        reason = "supported"
        decision = "candidate"
    if len(warnings) > 1:
        warnings.sort(key=_warning_order)

    boundary = first_start
    if first_end is not None:
        after_end = _next_day(first_end)
        if after_end is not None and (boundary is None or after_end < boundary):
            boundary = after_end

    digest = fingerprint(
        claims,
        items,
        item_statuses,
        answer,
        principals,
        kb,
        kb_statuses,
        unresolved,
        len(by_id) == len(items),
        unresolved_principals,
        shared,
    )
    return decision, reason, findings, warnings, digest, boundary


# -- the rarer findings, built out of line to keep ``run`` short ------------------------------

_Add = Callable[[FindingT], None]


def _unauthorized(
    items: Sequence[ItemT],
    principals: tuple[str, ...],
    add: _Add,
    unresolved_principals: Sequence[UnresolvedPrincipalsT] = (),
) -> None:
    held = set(principals)
    refused = {
        item[0]
        for item in items
        if item[6] is not None and "*" not in item[6] and held.isdisjoint(item[6])
    }
    # An unresolved item whose document is known: its current revision's principals decide.
    refused.update(
        cite_id
        for cite_id, allowed in unresolved_principals
        if "*" not in allowed and held.isdisjoint(allowed)
    )
    for evidence_id in sorted(refused):
        # Name the id only: the passage (and who may read it) is exactly what must not leak.
        add(
            (
                "unauthorized_evidence",
                "0",
                None,
                (evidence_id,),
                f"evidence {evidence_id} is restricted and the asker may not read it",
                (),
            )
        )


def _invalid_dates(
    items: Sequence[ItemT],
    item_statuses: list[list[str]],
    kb: Sequence[KbT],
    kb_statuses: list[str],
    add: _Add,
) -> None:
    for item, statuses in zip(items, item_statuses, strict=True):
        for fact, status in zip(item[1], statuses, strict=True):
            if status is INVALID:
                add(
                    (
                        "invalid_metadata",
                        "3",
                        None,
                        (item[0],),
                        f"evidence {item[0]}, fact {_what(fact[0], fact[4])}: "
                        + _date_problem(fact[2], fact[3]),
                        (),
                    )
                )
    for kb_fact, status in zip(kb, kb_statuses, strict=True):
        if status is INVALID:
            add(
                (
                    "invalid_metadata",
                    "3",
                    None,
                    (),
                    f"knowledge-base document {kb_fact[0]}, fact "
                    f"{_what(kb_fact[2], kb_fact[6])}: " + _date_problem(kb_fact[4], kb_fact[5]),
                    (kb_fact[0],),
                )
            )


# Unresolved reasons that leave a citation pointing at nothing (step 4), with what the finding
# says; the other reason, a revision the store has not received yet, is step 3.
_CITES_NOTHING = {
    "withdrawn": "its document was withdrawn",
    "passage_not_found": "the revision it was taken from has no passage with the cited span",
}


def _unresolved(
    claims: Sequence[ClaimT],
    markers: list[str],
    unresolved: Sequence[tuple[str, str]],
    by_id: dict[str, list[int]],
    add: _Add,
    warn: Callable[[WarningT], None],
) -> None:
    """Cited ids the caller could not resolve: withdrawn documents and passages missing from
    their revision are step 4 (unknown citation), revisions the store never received are step
    3 (invalid metadata). A withdrawn document that nothing cites is only a warning: it has no
    facts left to conflict with the claims, and the answer does not rest on it. (A passage or a
    revision the store lacks stays a finding even uncited: its facts could conflict.)"""
    for cite_id, why in unresolved:
        if cite_id in by_id:
            # Both resolved and not: the caller's metadata contradicts itself. A finding rather
            # than an input error, so that a re-evaluation worker records it instead of failing.
            add(
                (
                    "invalid_metadata",
                    "3",
                    None,
                    (cite_id,),
                    f"evidence id {cite_id} is also listed as unresolved ({why})",
                    (),
                )
            )
            continue
        citing: list[int | None] = [i for i, claim in enumerate(claims) if claim[2] == cite_id]
        if why == "withdrawn" and not citing and cite_id not in markers:
            warn(("uncited_evidence", None, (cite_id,),
                  f"evidence {cite_id} was retrieved but no claim cites it; its document was "
                  "withdrawn", ()))
            continue
        if cite_id in markers or not citing:
            citing.append(None)
        for claim_index in citing:
            if claim_index is not None:
                who = f"claim {claim_index} cites {cite_id}"
            elif cite_id in markers:
                who = f"the answer text cites [{cite_id}]"
            else:
                who = f"retrieved item {cite_id} is unresolved"
            if why in _CITES_NOTHING:
                add(
                    (
                        "unknown_citation",
                        "4",
                        claim_index,
                        (cite_id,),
                        f"{who}: {_CITES_NOTHING[why]}",
                        (),
                    )
                )
            else:
                add(
                    (
                        "invalid_metadata",
                        "3",
                        claim_index,
                        (cite_id,),
                        f"{who}: the store never received the revision it was taken from",
                        (),
                    )
                )


def _marker_citations(
    items: Sequence[ItemT],
    item_statuses: list[list[str]],
    by_id: dict[str, list[int]],
    markers: list[str],
    cited_by_claims: set[str],
    unresolved_why: dict[str, str],
    add: _Add,
) -> None:
    """Steps 4, 5 and 5b for ids cited in the answer text (claims are handled in ``run``).

    An id that some claim cites is checked there, against the claim's key, and not again here.
    A marker names no key, so its item counts as not valid on as_of (step 5) when none of its
    facts is in force and at least one has usable dates (bad dates are step 3's business); a
    claim whose key the item does not state is judged the same way.
    """
    for marker in markers:
        indexes = by_id.get(marker)
        if indexes is None:
            if marker not in unresolved_why:
                add(
                    (
                        "unknown_citation",
                        "4",
                        None,
                        (marker,),
                        f"the answer text cites [{marker}], which is not among the "
                        "retrieved evidence",
                        (),
                    )
                )
        elif marker not in cited_by_claims:
            if _not_in_force(indexes, item_statuses):
                periods = _item_periods(items, indexes, item_statuses)
                add(
                    (
                        "noncurrent_citation",
                        "5",
                        None,
                        (marker,),
                        f"the answer text cites [{marker}], which is not in force on the as_of "
                        f"date ({periods})",
                        (),
                    )
                )
            for index in indexes:
                if _is_superseded(items[index]):
                    add(
                        (
                            "superseded_revision",
                            "5b",
                            None,
                            (marker,),
                            f"the answer text cites [{marker}]" + _superseded_detail(items[index]),
                            (),
                        )
                    )


def _not_in_force(indexes: list[int], item_statuses: list[list[str]]) -> bool:
    """Step 5 for a cited item as a whole (all items with its id): at least one fact has usable
    dates and none is in force on as_of. Facts with bad dates are step 3's business."""
    dated = False
    for index in indexes:
        for status in item_statuses[index]:
            if status is CURRENT:
                return False
            if status is not INVALID:
                dated = True
    return dated


def _item_periods(
    items: Sequence[ItemT], indexes: list[int], item_statuses: list[list[str]]
) -> str:
    return _periods(
        (fact, status)
        for index in indexes
        for fact, status in zip(items[index][1], item_statuses[index], strict=True)
    )


def _matched_facts(
    key: str,
    subject: str | None,
    items: Sequence[ItemT],
    indexes: list[int],
    item_statuses: list[list[str]],
) -> list[tuple[FactT, str]]:
    return [
        (fact, status)
        for index in indexes
        for fact, status in zip(items[index][1], item_statuses[index], strict=True)
        if claim_asks_about(key, subject, fact[0], fact[4])
    ]


# The valid_until of a fact whose validity never ends.
NO_END = datetime.date.max.isoformat()


def _periods(facts: Iterable[tuple[FactT, str]]) -> str:
    """The validity periods of the dated facts that are not in force, for a step 5 message."""
    return "; ".join(
        sorted(
            (f"valid from {fact[2]}, with no end, " if fact[3] == NO_END
             else f"valid {fact[2]} to {fact[3]}, ")
            + ("expired" if status is AFTER else "not yet in force")
            for fact, status in facts
            if status is AFTER or status is BEFORE
        )
    )


def _noncurrent(
    claim_index: int,
    claim: ClaimT,
    items: Sequence[ItemT],
    indexes: list[int],
    item_statuses: list[list[str]],
) -> FindingT:
    key, _, cite, subject = claim
    periods = _periods(_matched_facts(key, subject, items, indexes, item_statuses))
    # No as_of in the text: the message must stay the same for as long as the fingerprint does.
    return (
        "noncurrent_citation",
        "5",
        claim_index,
        (cite,),
        f"claim {claim_index} cites {cite}, whose {_what(key, subject)} fact is not in force "
        f"on the as_of date ({periods})",
        (),
    )


def _unsupported(
    claim_index: int,
    claim: ClaimT,
    items: Sequence[ItemT],
    indexes: list[int],
    item_statuses: list[list[str]],
) -> FindingT:
    key, value, cite, subject = claim
    facts = _matched_facts(key, subject, items, indexes, item_statuses)
    if not facts:
        message = (
            f"claim {claim_index} cites {cite}, which states nothing about {_what(key, subject)}"
        )
    else:
        pool = [fact for fact, status in facts if status is CURRENT] or [f for f, _ in facts]
        said, *given = _shown_apart([value, *[fact[1] for fact in pool]])
        message = (
            f"claim {claim_index} says {_what(key, subject)} = {said}, "
            f"but {cite} gives {', '.join(sorted(set(given)))}"
        )
    return ("unsupported_claim", "7", claim_index, (cite,), message, ())


def _conflict(
    claim_index: int,
    key: str,
    subject: str | None,
    values: dict[tuple[type, JSONScalar], list[tuple[str | None, str | None, str | None]]],
) -> FindingT:
    evidence_ids = sorted({e for group in values.values() for e, _, _ in group if e})
    kb_documents = sorted({d for group in values.values() for _, d, _ in group if d})
    shown = _shown_apart([fact_value for _, fact_value in values])
    described = "; ".join(
        sorted(
            f"{text} from "
            + ", ".join(sorted({e or f"knowledge-base document {d}" for e, d, _ in group}))
            for text, group in zip(shown, values.values(), strict=True)
        )
    )
    return (
        "conflicting_sources",
        "6",
        claim_index,
        tuple(evidence_ids),
        f"claim {claim_index} ({_what(key, subject)}): sources in force disagree: {described}",
        tuple(kb_documents),
    )


def _single_source(
    claim_index: int,
    key: str,
    value: JSONScalar,
    subject: str | None,
    backing: list[tuple[str | None, str | None, str | None]],
) -> WarningT:
    if len(backing) == 1:
        evidence_id, kb_document, _ = backing[0]
        names = [evidence_id or f"knowledge-base document {kb_document}"]
        evidence_ids: tuple[str, ...] = (evidence_id,) if evidence_id else ()
        kb_documents: tuple[str, ...] = (kb_document,) if kb_document else ()
    else:
        names = sorted({e or f"knowledge-base document {d}" for e, d, _ in backing})
        evidence_ids = tuple(sorted({e for e, _, _ in backing if e}))
        kb_documents = tuple(sorted({d for _, d, _ in backing if d}))
    return (
        "single_source",
        claim_index,
        evidence_ids,
        f"claim {claim_index} ({_what(key, subject)} = {show(value)}) rests on a single "
        f"source: {', '.join(names)}",
        kb_documents,
    )


def _is_superseded(item: ItemT) -> bool:
    """Step 5b: the item is flagged ``superseded``, or it names both the revision the answer was
    generated from and the current revision, and they differ."""
    if item[7]:
        return True
    generated_from, current_revision = item[3], item[8]
    return bool(generated_from and current_revision and generated_from != current_revision)


def _superseded_detail(item: ItemT) -> str:
    generated_from, current_revision = item[3], item[8]
    if generated_from and current_revision:
        return (
            f": the answer was generated from revision {generated_from}, "
            f"the current revision is {current_revision}"
        )
    return ": it comes from a revision that is no longer current"


def _finding_order(
    finding: FindingT,
) -> tuple[int, int, tuple[str, ...], str, str, tuple[str, ...]]:
    code, step, claim, evidence, message, kb_documents = finding
    return (
        _STEP_RANK[step],
        -1 if claim is None else claim,
        evidence,
        code,
        message,
        kb_documents,
    )


def _warning_order(warning: WarningT) -> tuple[int, int, tuple[str, ...], str]:
    code, claim, evidence, message, _ = warning
    return (_WARNING_RANK[code], -1 if claim is None else claim, evidence, message)
