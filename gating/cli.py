"""``python -m gating``: evaluate, compare, eval and bench on JSON Lines files.

Runs from the repository root with nothing but Python installed.
"""

from __future__ import annotations

import argparse
import codecs
import datetime
import io
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import IO, NamedTuple, Protocol

from gating.api import _run_raw, citation_only_pass, result_line
from gating.engine import DECISION_OF_CODE, encode_json, is_iso_date, run
from gating.mix import published_mix_lines
from gating.model import GATE_VERSION, MAX_INT, MIN_INT, InputError
from gating.records import _MISSING, _need_str, _object, parse_raw


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not allowed in JSON")


def _int_of_any_length(text: str) -> int:
    """A JSON integer; one longer than Python reads (4,300 digits) is far outside the 64-bit
    range, so a number just outside it stands for it: validation then names its field."""
    try:
        return int(text)
    except ValueError:
        return MIN_INT - 1 if text.startswith("-") else MAX_INT + 1


_decoder = json.JSONDecoder(parse_constant=_reject_constant)
_decode = _decoder.decode
# For the error path only: a hook on every integer would slow the usual line down.
_decode_long_integers = json.JSONDecoder(parse_constant=_reject_constant,
                                         parse_int=_int_of_any_length).decode
# The C scanner behind ``decode``; called directly for lines that are a bare JSON object.
_scan_once: Callable[[str, int], tuple[object, int]] = _decoder.scan_once  # type: ignore[attr-defined]
_encode = encode_json


class Line(NamedTuple):
    """One input line: the parsed record, or why it could not be read."""

    number: int
    record: object
    error: str | None


def _parse_line(
    number: int, raw: bytes, decode: Callable[[str], object] = _decode
) -> Line | None:
    """Parse one line with the full decoder; ``None`` for a blank line."""
    if number == 1:  # a file saved "UTF-8 with BOM" starts with one; it is not JSON
        raw = raw.removeprefix(codecs.BOM_UTF8)
    if not raw.strip():
        return None  # also a first line that held only the mark
    try:
        text = raw.decode("utf-8").rstrip("\r\n")
        return Line(number, decode(text), None)
    except UnicodeDecodeError:
        return Line(number, None, "not valid UTF-8")
    except RecursionError:
        return Line(number, None, "not valid JSON (nested too deeply)")
    except json.JSONDecodeError as exc:
        if number > 1 and raw.startswith(codecs.BOM_UTF8):
            # Files joined end to end: the second one's mark is now inside the stream.
            return Line(number, None, "not valid JSON (the line starts with a byte-order "
                                      "mark, U+FEFF: only the first line may)")
        return Line(number, None, f"not valid JSON ({exc.msg} at column {exc.colno})")
    except ValueError as exc:
        if decode is _decode:
            # JSON sets no limit on digits, Python does: read the line again so that such a
            # number is refused by the field it is in (a NaN comes again, and is said below).
            return _parse_line(number, raw, _decode_long_integers)
        return Line(number, None, f"not valid JSON ({exc})")


def _read_lines(stream: IO[bytes]) -> Iterator[Line]:
    """Parse a JSON Lines stream; blank lines are skipped but still counted."""
    for number, raw in enumerate(stream, 1):
        line = _parse_line(number, raw)
        if line is not None:
            yield line


def _case_id(record: object) -> str | int | None:
    """The record's id when it is one a record may have (an integer in the 64-bit range: one
    of more digits than Python reads is read as just outside it)."""
    if isinstance(record, dict):
        case_id = record.get("id")
        if type(case_id) is str or (type(case_id) is int and MIN_INT <= case_id <= MAX_INT):
            return case_id
    return None


def _error_line(number: int, record: object, message: str) -> str:
    """Report a bad line on stderr and return its stdout line: the error, and the id when the
    record got far enough to have a readable one."""
    text = f"line {number}: {message}"
    print(text, file=sys.stderr)
    case_id = _case_id(record)
    payload: dict[str, object] = (
        {"error": text} if case_id is None else {"id": case_id, "error": text}
    )
    return _encode(payload)


def _open_input(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    return open(path, "rb")


def _date_arg(text: str) -> datetime.date:
    """A date written as a record's as_of must be: YYYY-MM-DD, nothing else (no week dates)."""
    if is_iso_date(text):
        return datetime.date.fromisoformat(text)
    raise argparse.ArgumentTypeError(f"not a YYYY-MM-DD date: {text!r}")


# -- evaluate ---------------------------------------------------------------------------------


class Writer(Protocol):
    def write(self, text: str, /) -> int: ...
    def flush(self) -> None: ...


def evaluate_stream(stream: IO[bytes], out: Writer, as_of: datetime.date) -> int:
    """The ``evaluate`` loop; returns how many lines were bad.

    This is the hot path the benchmark measures, so it is written out flat: the usual case (a
    line that is one JSON object, nothing after it) goes straight to the C scanner, and
    anything unusual goes through the full decoder, which also words the error.
    """
    bad = 0
    pending: list[str] = []
    scan = _scan_once
    for number, raw in enumerate(stream, 1):
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            bad += 1
            pending.append(_error_line(number, None, "not valid UTF-8"))
            continue
        try:
            record, end = scan(text, 0)
            # JSON's own whitespace only: a no-break space after the value is extra data.
            if end != len(text) and text[end:].strip(" \t\r\n"):
                raise ValueError("extra data after the JSON value")
        except (ValueError, StopIteration, RecursionError):
            line = _parse_line(number, raw)
            if line is None:
                continue  # blank line
            if line.error is not None:
                bad += 1
                pending.append(_error_line(number, None, line.error))
                continue
            record = line.record
        try:
            case = parse_raw(record, as_of)
        except InputError as exc:
            bad += 1
            pending.append(_error_line(number, record, str(exc)))
            continue
        pending.append(result_line(case[0], run(*case[1:])))
        if len(pending) >= 512:
            pending.append("")
            out.write("\n".join(pending))
            pending.clear()
    if pending:
        pending.append("")
        out.write("\n".join(pending))
    out.flush()
    return bad


def _cmd_evaluate(args: argparse.Namespace) -> int:
    as_of = args.as_of or datetime.date.today()
    with _open_input(args.file) as stream:
        bad = evaluate_stream(stream, sys.stdout, as_of)
    return 1 if bad else 0


# -- compare ----------------------------------------------------------------------------------

_EXPECTED_FIELDS = frozenset({"decision", "reason", "citation_only_pass"})


def _expected(record: object) -> tuple[str, bool | None] | None:
    """What a case's `expected` says, as compare shows it ("decision / reason") and the
    citation-only outcome it expects (None when not given); None for a case without one.
    Anything else is an InputError naming the field: read as no expectation, or as a decision
    of None, it would let a case pass unchecked or fail for a typo."""
    raw = record.get("expected") if isinstance(record, dict) else None
    if raw is None:
        return None
    expected = _object(raw, "expected", _EXPECTED_FIELDS)
    decision = _need_str(expected.get("decision", _MISSING), "expected.decision")
    reason = _need_str(expected.get("reason", _MISSING), "expected.reason")
    naive = expected.get("citation_only_pass")
    if naive is not None and type(naive) is not bool:
        raise InputError("expected.citation_only_pass", "must be true, false or null")
    return f"{decision} / {reason}", naive


def _cmd_compare(args: argparse.Namespace) -> int:
    as_of = args.as_of or datetime.date.today()
    rows: list[tuple[str, str, str, str, str]] = []
    decisions: Counter[str] = Counter()
    citation_passes = cases = mismatches = bad = 0
    with _open_input(args.file) as stream:
        for line in _read_lines(stream):
            case_id = _case_id(line.record)
            # An id may hold what the terminal cannot print (a lone surrogate): escaped.
            label = (f"line {line.number}" if case_id is None
                     else str(case_id).encode("utf-8", "backslashreplace").decode())
            if line.error is not None:
                bad += 1
                rows.append((label, "-", f"error: {line.error}", "-", "ERROR"))
                continue
            try:
                naive = citation_only_pass(line.record)
                result = _run_raw(parse_raw(line.record, as_of))
                expected = _expected(line.record)
            except InputError as exc:
                bad += 1
                print(f"line {line.number}: {exc}", file=sys.stderr)
                rows.append((label, "-", f"error: {exc}", "-", "ERROR"))
                continue
            cases += 1
            citation_passes += naive
            decisions[str(result["decision"])] += 1
            got = f"{result['decision']} / {result['reason']}"
            if expected is not None:
                want, naive_expected = expected
                agrees = got == want
                if naive_expected is not None and naive_expected != naive:
                    agrees = False
                    want += f" (citation-only {'pass' if naive_expected else 'fail'})"
                mark = "ok" if agrees else "MISMATCH"
                mismatches += not agrees
            else:
                want, mark = "-", "-"
            rows.append((label, "pass" if naive else "fail", got, want, mark))

    headers = ("case", "citation-only", "gate", "expected", "match")
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    for row in (headers, *rows):
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    print()
    print(f"citation-only passes {citation_passes} of {cases}")
    print(
        f"gate: {decisions['candidate']} candidate, {decisions['abstain']} abstain, "
        f"{decisions['review']} review"
    )
    checked = sum(1 for row in rows if row[4] in ("ok", "MISMATCH"))
    print(f"matches expected: {checked - mismatches} of {checked}")
    if bad:
        print(f"bad lines: {bad}")
    return 1 if mismatches or bad else 0


# -- eval -------------------------------------------------------------------------------------

LABELS = ("hold", "answerable")


def _rate(part: int, whole: int) -> str:
    return f"{part}/{whole} = {100 * part / whole:.1f}%" if whole else f"{part}/0 = n/a"


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def _cmd_eval(args: argparse.Namespace) -> int:
    as_of = args.as_of or datetime.date.today()
    labels: Counter[str] = Counter()
    by_reason: dict[str, Counter[str]] = {}
    bad = 0
    with _open_input(args.file) as stream:
        for line in _read_lines(stream):
            if line.error is not None:
                bad += 1
                print(f"line {line.number}: {line.error}", file=sys.stderr)
                continue
            if not isinstance(line.record, dict):
                bad += 1
                print(f"line {line.number}: $: must be a JSON object", file=sys.stderr)
                continue
            label = line.record.get("label")
            if label not in LABELS:
                bad += 1
                print(f"line {line.number}: label: must be 'hold' or 'answerable'", file=sys.stderr)
                continue
            try:
                result = _run_raw(parse_raw(line.record, as_of))
            except InputError as exc:
                bad += 1
                print(f"line {line.number}: {exc}", file=sys.stderr)
                continue
            labels[str(label)] += 1
            by_reason.setdefault(str(result["reason"]), Counter())[str(label)] += 1

    held_worthy, answerable = labels["hold"], labels["answerable"]
    passed = by_reason.get("supported", Counter())["hold"]
    over_held = sum(c["answerable"] for reason, c in by_reason.items() if reason != "supported")
    print(f"cases: {held_worthy + answerable} (hold {held_worthy}, answerable {answerable})")
    print(f"false-pass rate: {_rate(passed, held_worthy)}  (hold-labelled, gate said candidate)")
    print(f"over-hold rate:  {_rate(over_held, answerable)}  (answerable, gate held or abstained)")
    print()
    print("per reason (false-pass: share of hold-labelled cases; over-hold: share of answerable)")
    header = ("reason", "decision", "cases", "hold", "answerable", "false-pass", "over-hold")
    table = [header]
    order = ["supported", *DECISION_OF_CODE]
    for reason in sorted(by_reason, key=order.index):
        counts = by_reason[reason]
        candidate = reason == "supported"
        table.append(
            (
                reason,
                "candidate" if candidate else DECISION_OF_CODE[reason],
                str(counts["hold"] + counts["answerable"]),
                str(counts["hold"]),
                str(counts["answerable"]),
                _share(counts["hold"], held_worthy) if candidate else "-",
                "-" if candidate else _share(counts["answerable"], answerable),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        cells = [
            cell.ljust(width) if i < 2 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells))
    if bad:
        print(f"\nbad lines: {bad}")
    return 1 if bad else 0


# -- bench ------------------------------------------------------------------------------------


class _Sink:
    """Where bench writes verdict lines: it only counts characters."""

    def __init__(self) -> None:
        self.written = 0

    def write(self, text: str, /) -> int:
        self.written += len(text)
        return len(text)

    def flush(self) -> None:
        pass


def _cmd_bench(args: argparse.Namespace) -> int:
    count = args.cases
    lines = list(published_mix_lines(count))
    payload = ("\n".join(lines) + "\n").encode()
    records = [json.loads(line) for line in lines]
    as_of = datetime.date.today()

    sink = _Sink()
    started = time.perf_counter()
    bad = evaluate_stream(io.BytesIO(payload), sink, as_of)
    end_to_end = time.perf_counter() - started

    started = time.perf_counter()
    for record in records:
        _run_raw(parse_raw(record, as_of))
    gate_only = time.perf_counter() - started

    print(f"gate {GATE_VERSION}, published mix of 13 shapes, {count} cases, one process")
    print(
        f"end to end (JSON line in, JSON line out): {end_to_end:.3f} s, "
        f"{count / end_to_end:,.0f} cases/s"
    )
    print(
        f"gate only (validated record to result):   {gate_only:.3f} s, "
        f"{count / gate_only:,.0f} cases/s"
    )
    return 1 if bad else 0


# -- entry point ------------------------------------------------------------------------------


_cmd_evaluate_doc = (
    "Read JSON Lines (one case per line) and write one JSON line per case, in order: "
    '{"id", "decision", "reason", "findings", "warnings", "fingerprint", "next_boundary"}. '
    'A bad line becomes {"id", "error"} on stdout and a message on stderr; the exit status is '
    "1 if any line was bad."
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gating",
        description="Run ReviewQueue's gate on JSON Lines cases.",
    )
    parser.add_argument("--version", action="version", version=f"gating {GATE_VERSION}")
    commands = parser.add_subparsers(dest="command", required=True)

    as_of_help = "date to judge validity on (YYYY-MM-DD); a line's own as_of wins; default today"
    evaluate = commands.add_parser(
        "evaluate", help="write one verdict line per input line", description=_cmd_evaluate_doc
    )
    evaluate.add_argument("--as-of", type=_date_arg, help=as_of_help)
    evaluate.add_argument("file", nargs="?", default="-", help="JSON Lines file, or - for stdin")
    evaluate.set_defaults(run=_cmd_evaluate)

    compare = commands.add_parser(
        "compare", help="citation-only check against the gate, and against 'expected'"
    )
    compare.add_argument("--as-of", type=_date_arg, help=as_of_help)
    compare.add_argument("file", help="JSON Lines file, or - for stdin")
    compare.set_defaults(run=_cmd_compare)

    evaluation = commands.add_parser(
        "eval", help="false-pass and over-hold rates on cases labelled 'hold' or 'answerable'"
    )
    evaluation.add_argument("--as-of", type=_date_arg, help=as_of_help)
    evaluation.add_argument("file", help="JSON Lines file, or - for stdin")
    evaluation.set_defaults(run=_cmd_eval)

    bench = commands.add_parser("bench", help="cases per second on the published mix")
    bench.add_argument("--cases", type=int, default=20_000, help="number of cases (default 20000)")
    bench.set_defaults(run=_cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "bench" and args.cases < 1:
        parser.error("--cases must be at least 1")
    try:
        status: int = args.run(args)
    except BrokenPipeError:
        # The reader went away (``| head``); stop quietly like other command-line tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as exc:  # no such file, a directory, no permission
        if exc.filename is None:
            raise
        print(f"{parser.prog}: cannot open {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    return status
