"""``python -m gating`` as a user runs it: a subprocess from the repository root."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gating

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "gating" / "examples" / "published_cases.jsonl"
LABELLED = REPO / "gating" / "examples" / "labelled_cases.jsonl"


def _gate(*args: str, stdin: str | bytes | None = None) -> subprocess.CompletedProcess[str]:
    # -S: no site-packages, so the CLI is shown to need nothing but Python and this checkout.
    return subprocess.run(
        [sys.executable, "-S", "-m", "gating", *args],
        cwd=REPO,
        input=stdin.decode("utf-8", "surrogateescape") if isinstance(stdin, bytes) else stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def _write(tmp_path: Path, lines: list[str | dict[str, Any]]) -> str:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return str(path)


# -- evaluate ---------------------------------------------------------------------------------


def test_evaluate_writes_one_verdict_per_case_in_input_order():
    run = _gate("evaluate", str(PUBLISHED))

    assert (run.returncode, run.stderr) == (0, "")
    out = _lines(run.stdout)
    cases = [json.loads(line) for line in PUBLISHED.read_text().splitlines()]
    assert [r["id"] for r in out] == [c["id"] for c in cases]
    assert [(r["decision"], r["reason"]) for r in out] == [
        (c["expected"]["decision"], c["expected"]["reason"]) for c in cases
    ]
    assert set(out[0]) >= {"id", "decision", "reason", "findings", "warnings", "fingerprint"}


def test_evaluate_reads_standard_input_with_a_dash_or_no_file(cases):
    line = json.dumps(cases.record()) + "\n"

    with_dash = _gate("evaluate", "-", stdin=line)
    without = _gate("evaluate", stdin=line)

    assert with_dash.stdout == without.stdout
    assert _lines(with_dash.stdout)[0]["reason"] == "supported"


def test_a_lines_own_as_of_wins_over_the_option(cases):
    own = cases.record(as_of="2026-10-20")
    none = {k: v for k, v in cases.record().items() if k != "as_of"}
    stdin = json.dumps(own) + "\n" + json.dumps(none) + "\n"

    run = _gate("evaluate", "--as-of", "2026-12-01", stdin=stdin)

    assert [r["reason"] for r in _lines(run.stdout)] == ["supported", "noncurrent_citation"]


def test_without_any_as_of_the_gate_judges_on_today(cases):
    record = {k: v for k, v in cases.record().items() if k != "as_of"}

    run = _gate("evaluate", stdin=json.dumps(record))

    expected = gating.evaluate_record(record, default_as_of=datetime.date.today())
    assert _lines(run.stdout)[0]["fingerprint"] == expected["fingerprint"]


def test_bad_lines_are_reported_in_place_and_the_run_carries_on(cases, tmp_path):
    missing_key = cases.record(id="k1")
    del missing_key["claims"][0]["key"]
    path = _write(
        tmp_path,
        [
            cases.record(id="first"),
            "{not json",
            missing_key,
            "",
            "[1, 2]",
            '{"id": "nan", "claims": [{"key": "a", "value": NaN, "cite": "d1"}], "evidence": []}',
            cases.record(id="last"),
        ],
    )

    run = _gate("evaluate", path)

    assert run.returncode == 1
    out = _lines(run.stdout)
    assert [r.get("id") for r in out] == ["first", None, "k1", None, None, "last"]
    assert out[0]["decision"] == "candidate"
    assert out[1]["error"].startswith("line 2: not valid JSON")
    assert out[2]["error"] == "line 3: claims[0].key: required"
    assert out[3]["error"] == "line 5: $: must be a JSON object"
    assert out[4]["error"].startswith("line 6: not valid JSON (NaN is not allowed")
    assert out[5]["decision"] == "candidate"
    assert run.stderr.splitlines() == [r["error"] for r in out if "error" in r]


def test_a_line_that_is_not_utf8_is_a_bad_line(cases, tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"id": "\xff"}\n' + json.dumps(cases.record()).encode() + b"\n")

    run = _gate("evaluate", str(path))

    assert run.returncode == 1
    assert [r.get("error") for r in _lines(run.stdout)] == ["line 1: not valid UTF-8", None]


def test_an_input_error_keeps_the_id_when_it_is_readable(cases):
    record = cases.record(id="case-42")
    record["evidence"][0]["valid_until"] = 20261031

    run = _gate("evaluate", stdin=json.dumps(record))

    assert _lines(run.stdout) == [
        {"id": "case-42", "error": "line 1: evidence[0].valid_until: must be a string (YYYY-MM-DD)"}
    ]


def _with_integer(record: dict[str, Any], field: str, digits: str) -> str:
    """The record as a JSON line whose `field` (a top-level one, or the first claim's value)
    is an integer written with `digits`, however long."""
    if field == "id":
        record["id"] = 0
        return json.dumps(record).replace('"id": 0', f'"id": {digits}', 1)
    record["claims"][0]["value"] = 0
    return json.dumps(record).replace('"value": 0', f'"value": {digits}', 1)


@pytest.mark.parametrize("sign", ["", "-"])
def test_an_integer_too_long_for_python_is_named_by_its_field(cases, sign):
    """JSON sets no limit on digits; Python reads no more than 4,300 of them."""
    line = _with_integer(cases.record(id="big"), "value", sign + "1" * 5000)

    run = _gate("evaluate", stdin=line + "\n")

    assert run.returncode == 1
    assert _lines(run.stdout) == [
        {"id": "big", "error": "line 1: claims[0].value: integer outside the 64-bit range"}]


def test_an_id_too_long_for_python_is_not_echoed(cases):
    run = _gate("evaluate", stdin=_with_integer(cases.record(), "id", "7" * 5000) + "\n")

    assert _lines(run.stdout) == [{"error": "line 1: id: must be a string or an integer"}]


def test_a_byte_order_mark_starting_a_later_line_is_named(cases, tmp_path):
    """As when two files saved "UTF-8 with BOM" are joined: the first mark is read past."""
    path = tmp_path / "joined.jsonl"
    line = json.dumps(cases.record()).encode()
    path.write_bytes(b"\xef\xbb\xbf" + line + b"\n\xef\xbb\xbf" + line + b"\n")

    run = _gate("evaluate", str(path))

    assert run.returncode == 1
    assert [r.get("error") for r in _lines(run.stdout)] == [
        None, "line 2: not valid JSON (the line starts with a byte-order mark, U+FEFF: only the "
              "first line may)"]


def test_a_missing_file_is_a_usage_error():
    run = _gate("evaluate", "no/such/file.jsonl")

    assert run.returncode == 2
    assert "cannot open" in run.stderr


@pytest.mark.parametrize("command", ["evaluate", "compare", "eval"])
def test_a_directory_given_as_the_file_is_a_usage_error(tmp_path, command):
    run = _gate(command, str(tmp_path))

    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert f"cannot open {tmp_path}: Is a directory" in run.stderr


def test_the_as_of_option_takes_only_what_a_records_as_of_takes():
    run = _gate("evaluate", "--as-of", "2026-W43-2", str(PUBLISHED))  # an ISO week date

    assert run.returncode == 2 and run.stdout == ""
    assert "not a YYYY-MM-DD date: '2026-W43-2'" in run.stderr


def test_a_file_saved_as_utf8_with_a_bom_reads_like_one_without(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + PUBLISHED.read_bytes())

    assert _gate("evaluate", str(path)).stdout == _gate("evaluate", str(PUBLISHED)).stdout
    run = _gate("compare", str(path))
    assert run.returncode == 0 and "matches expected: 13 of 13" in run.stdout


@pytest.mark.parametrize("command", ["evaluate", "compare", "eval"])
def test_a_file_saved_with_a_bom_that_starts_with_a_blank_line_skips_that_line(
    tmp_path, command
):
    """An editor saving "UTF-8 with BOM" puts the mark before a leading blank line too (or in
    an otherwise empty file): read past, the line is blank, and blank lines are skipped."""
    path = tmp_path / "bom-blank.jsonl"
    path.write_bytes(b"\xef\xbb\xbf\r\n" + LABELLED.read_bytes())

    run = _gate(command, str(path))

    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout == _gate(command, str(LABELLED)).stdout


def test_an_empty_file_saved_with_a_bom_has_no_cases(tmp_path):
    path = tmp_path / "bom-only.jsonl"
    path.write_bytes(b"\xef\xbb\xbf")

    run = _gate("evaluate", str(path))

    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


def test_compare_prints_an_id_the_terminal_cannot_show_escaped(tmp_path):
    path = tmp_path / "surrogate.jsonl"
    path.write_text('{"id":"\\ud800","claims":[],"evidence":[]}\n')  # valid JSON text

    run = _gate("compare", str(path))

    assert "Traceback" not in run.stderr, run.stderr
    assert run.stdout.startswith("case") and "\\ud800" in run.stdout
    assert "citation-only passes 0 of 1" in run.stdout


def test_eval_says_a_line_that_is_not_an_object_is_not_one(tmp_path):
    path = tmp_path / "list.jsonl"
    path.write_text('["hold"]\n')

    run = _gate("eval", str(path))

    assert run.returncode == 1
    assert "line 1: $: must be a JSON object" in run.stderr and "label" not in run.stderr


def test_a_bad_as_of_option_is_a_usage_error():
    run = _gate("evaluate", "--as-of", "20/10/2026", str(PUBLISHED))

    assert run.returncode == 2
    assert "YYYY-MM-DD" in run.stderr


# -- compare ----------------------------------------------------------------------------------


def test_compare_reproduces_the_published_figures():
    run = _gate("compare", str(PUBLISHED))

    assert run.returncode == 0, run.stdout
    lines = run.stdout.splitlines()
    assert "citation-only passes 10 of 13" in lines
    assert "gate: 1 candidate, 6 abstain, 6 review" in lines
    assert "matches expected: 13 of 13" in lines
    assert all(row.rstrip().endswith(" ok") for row in lines[1:14])


def test_compare_marks_a_mismatch_and_exits_non_zero(cases, tmp_path):
    wrong = cases.record(id="wrong", expected={"decision": "review", "reason": "invalid_metadata"})
    right = cases.record(id="right", expected={"decision": "candidate", "reason": "supported"})

    run = _gate("compare", _write(tmp_path, [right, wrong]))

    assert run.returncode == 1
    rows = {line.split()[0]: line for line in run.stdout.splitlines()[1:3]}
    assert rows["right"].endswith("ok")
    assert rows["wrong"].endswith("MISMATCH")
    assert "matches expected: 1 of 2" in run.stdout


def test_compare_checks_the_expected_citation_only_outcome_too(cases, tmp_path):
    record = cases.record(
        expected={"decision": "candidate", "reason": "supported", "citation_only_pass": False}
    )

    run = _gate("compare", _write(tmp_path, [record]))

    assert run.returncode == 1
    assert "MISMATCH" in run.stdout


@pytest.mark.parametrize("expected", ["candidate / supported", ["candidate", "supported"]])
def test_compare_refuses_an_expected_that_is_not_an_object(cases, tmp_path, expected):
    """Read as no expectation, the case would count as checked by nobody and exit 0."""
    run = _gate("compare", _write(tmp_path, [cases.record(id="a", expected=expected)]))

    assert run.returncode == 1
    assert run.stderr == "line 1: expected: must be an object\n"
    assert run.stdout.splitlines()[1].split() == [
        "a", "-", "error:", "expected:", "must", "be", "an", "object", "-", "ERROR"]
    assert "bad lines: 1" in run.stdout


def test_compare_names_a_misspelt_expected_field(cases, tmp_path):
    record = cases.record(id="a", expected={"decison": "candidate", "reason": "supported"})

    run = _gate("compare", _write(tmp_path, [record]))

    assert run.returncode == 1
    assert run.stderr == "line 1: expected.decison: unknown field\n"
    assert "None" not in run.stdout and "MISMATCH" not in run.stdout


def test_compare_needs_both_the_expected_decision_and_reason(cases, tmp_path):
    record = cases.record(id="a", expected={"reason": "supported"})

    run = _gate("compare", _write(tmp_path, [record]))

    assert run.returncode == 1
    assert run.stderr == "line 1: expected.decision: required\n"


def test_compare_and_eval_on_an_empty_file_report_zero_cases(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")

    compared = _gate("compare", str(empty))
    evaluated = _gate("eval", str(empty))

    assert (compared.returncode, evaluated.returncode) == (0, 0)
    assert "citation-only passes 0 of 0" in compared.stdout
    assert "false-pass rate: 0/0 = n/a" in evaluated.stdout


# -- eval -------------------------------------------------------------------------------------


def test_eval_prints_false_pass_and_over_hold_rates_for_the_example_file():
    run = _gate("eval", str(LABELLED))

    assert run.returncode == 0, run.stderr
    assert "cases: 17 (hold 10, answerable 7)" in run.stdout
    assert "false-pass rate: 1/10 = 10.0%" in run.stdout
    assert "over-hold rate:  3/7 = 42.9%" in run.stdout
    rows = run.stdout.splitlines()
    conflicts = next(row for row in rows if row.startswith("conflicting_sources"))
    assert conflicts.split() == ["conflicting_sources", "review", "2", "1", "1", "-", "14.3%"]


def test_eval_refuses_a_case_without_a_label(cases, tmp_path):
    run = _gate("eval", _write(tmp_path, [cases.record(label="answerable"), cases.record()]))

    assert run.returncode == 1
    assert "line 2: label: must be 'hold' or 'answerable'" in run.stderr
    assert "cases: 1 (hold 0, answerable 1)" in run.stdout


# -- bench ------------------------------------------------------------------------------------


def test_bench_prints_cases_per_second():
    run = _gate("bench", "--cases", "260")

    assert run.returncode == 0, run.stderr
    assert "260 cases" in run.stdout
    assert run.stdout.count("cases/s") == 2


@pytest.mark.parametrize("command", [[], ["bench", "--cases", "0"]])
def test_usage_mistakes_exit_with_status_2(command):
    assert _gate(*command).returncode == 2
