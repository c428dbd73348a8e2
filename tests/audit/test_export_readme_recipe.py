"""An outside auditor re-verifies an export with nothing but the README's words.

`readme_verifier` below is written from the README's paragraph "Re-verifying an export outside
the app" alone: it imports nothing from the app, so when the README and the app part ways, the
export of a genuine history stops verifying here (or a tampered one passes).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from tests.reviews.conftest import fact, hold, sources  # noqa: F401
from tests.reviews.test_decisions import decide

pytestmark = pytest.mark.django_db

ZEROS = "0" * 64
FIELDS = ("seq", "created_at", "actor_type", "actor", "action", "object_type", "object_id",
          "trace_id", "document_id", "request_id", "before", "after")


class KeyTwice(ValueError):
    pass


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) < len(pairs):
        raise KeyTwice
    return dict(pairs)


def readme_lines(data: bytes) -> list[dict[str, Any]]:
    """Split on "\\n" only, each line parsed as JSON; a key given twice in one object is
    refused."""
    return [json.loads(line, object_pairs_hook=_once)
            for line in data.decode("utf-8").split("\n") if line]


def readme_hash(line: dict[str, Any], prev_hash: str) -> str:
    fields = {name: line[name] for name in FIELDS}
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((prev_hash + "|" + text).encode("utf-8")).hexdigest()


def readme_verifier(data: bytes, anchor: str | None = None) -> list[str]:
    """The problems the README's recipe finds in a full JSON Lines export; [] when it holds."""
    problems = []
    previous, expected = ZEROS, 1
    by_seq = {}
    try:
        lines = readme_lines(data)
    except KeyTwice:
        return ["a line gives a key twice"]
    for line in lines:
        if set(line) != {*FIELDS, "prev_hash", "hash"}:
            problems.append(f"#{line['seq']} has a key no hash covers")
        if line["seq"] != expected:
            problems.append(f"seq {line['seq']} where {expected} was due")
        if line["prev_hash"] != previous:
            problems.append(f"#{line['seq']} does not link to the line before")
        if readme_hash(line, line["prev_hash"]) != line["hash"]:
            problems.append(f"#{line['seq']} does not match its hash")
        by_seq[line["seq"]] = line["hash"]
        previous, expected = line["hash"], line["seq"] + 1
    if anchor is not None:
        seq, _, digest = anchor.partition(":")
        if by_seq.get(int(seq)) != digest:
            problems.append(f"anchor {anchor} is not in the export")
    return problems


@pytest.fixture
def history(hold: Callable[..., str],  # noqa: F811
            reviewer: Any, owner: Any, token_client: Any,
            service_api: Any, publish: Callable[..., Any], service: Any,
            django_capture_on_commit_callbacks: Any) -> None:
    """A realistic few days of the log: ingest, decisions of each kind, a publication that
    re-evaluates, a dismissed conflict, a rotated token, Japanese and awkward text."""
    from reviewqueue.accounts.services import token_rotate
    from reviewqueue.audit.services import SYSTEM, WORKER, Actor, audit_record
    from reviewqueue.reviews.models import Answer
    from reviewqueue.sources.conflicts import conflict_dismiss
    from reviewqueue.sources.models import Conflict

    api = token_client(reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        for trace in ("t-1", "t-2", "-t-3", "t.4"):
            hold(trace, question='「無料体験」は何日 "quoted", comma,\nnew line')
    with django_capture_on_commit_callbacks(execute=True):
        assert decide(api, "t-1", action="approve",
                      comment='両方の文書を確認 "ok", yes\nnext').status_code == 201
        assert decide(api, "t-2", action="reject", reason="incorrect").status_code == 201
        version = Answer.objects.get(trace_id="-t-3").current_version
        response = decide(api, "-t-3", action="edit", answer=version.text + " 追記。",
                          claims=version.claims)
        assert response.status_code == 201, response.content
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", "r2", title="料金, \"プラン\"\n2026",
                facts=[fact("trial_days", 14), fact("price", 12.5, span="p2"),
                       fact("seats", 9007199254740993, span="p2")],
                passages=[{"span": "p1", "text": "無料体験は14日間です。"},
                          {"span": "p2", "text": "=SUM(1,2) \"x\", y"}])
    conflict = Conflict.objects.filter(status="open").first()
    assert conflict is not None
    with django_capture_on_commit_callbacks(execute=True):
        conflict_dismiss(conflict_id=conflict.pk, reason="EUは別プラン, \"30日\"", user=owner,
                         actor=Actor.of_user(owner))
    token_rotate(user=service, actor=SYSTEM)
    with transaction.atomic():
        audit_record(actor=WORKER, action="metrics.sampled", object_type="answer",
                     object_id="+1", trace_id="@t", document_id="=doc",
                     after={"rate": 0.1, "tiny": 1.5e-7, "huge": 1e20, "neg": -0.0,
                            "big": 2**70, "none": None, "ja": "日本語\u2028行",
                            "note": 'a "b", c\nd'})


def _full_export(client: Any) -> bytes:
    response = client.get("/audit/export.jsonl")
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def test_the_readme_recipe_verifies_a_full_export_of_a_real_history(
    history: None, admin_client: Any
) -> None:
    out = io.StringIO()
    call_command("verify_audit", "--no-record", stdout=out)
    anchor = out.getvalue().split("(verify_audit --anchor): ")[1].strip()
    data = _full_export(admin_client)
    assert len(readme_lines(data)) > 30
    assert readme_verifier(data, anchor) == []
    assert readme_verifier(data, anchor.replace(":", ":0")[:-1]) != []



def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8").split("\n")[:-1]


def _joined(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


def _tampered(data: bytes, how: str) -> bytes:
    lines = _lines(data)
    if how == "edited":
        line = json.loads(lines[13])
        line["after"]["status"] = "rejected"
        lines[13] = json.dumps(line, ensure_ascii=False)
    elif how == "removed":
        del lines[15]
    elif how == "reordered":
        lines[15], lines[16] = lines[16], lines[15]
    elif how == "actor twice":
        # The genuine actor stays last, which Python's json keeps; a reader that keeps the
        # first key shows the forged one.
        lines[13] = lines[13].replace('"actor":', '"actor":"user:mallory","actor":', 1)
    return _joined(lines)


@pytest.mark.parametrize(("how", "said"), [
    ("edited", "Event #14 is the first bad event: its content no longer matches its hash: the "
               "event was edited. 1 problem in all."),
    ("removed", "Event #17 is the first bad event: event #16 is missing before it (deleted "
                "from the log). 1 problem in all."),
    ("reordered", "Event #17 is the first bad event: its line was moved up, above event "
                  "#16's: the lines were reordered, not deleted. 1 problem in all."),
    ("actor twice", "audit.jsonl:14: the key 'actor' is given twice in one object"),
])
def test_the_readme_recipe_and_verify_audit_reject_a_tampered_export(
    history: None, admin_client: Any, tmp_path: Path, how: str, said: str
) -> None:
    data = _full_export(admin_client)
    assert readme_verifier(data) == []
    tampered = _tampered(data, how)
    assert readme_verifier(tampered) != []
    export = tmp_path / "audit.jsonl"
    export.write_bytes(tampered)
    with pytest.raises(CommandError) as failure:
        call_command("verify_audit", "--jsonl", str(export))
    assert said in str(failure.value)


def test_a_line_that_says_more_than_its_hash_covers_is_refused(
    history: None, admin_client: Any, tmp_path: Path
) -> None:
    lines = _lines(_full_export(admin_client))
    # A field no hash covers, which a reader of the file takes as part of the event.
    lines[13] = lines[13][:-1] + ',"approved_by":"legal"}'
    tampered = _joined(lines)
    assert readme_verifier(tampered) != []
    export = tmp_path / "audit.jsonl"
    export.write_bytes(tampered)
    with pytest.raises(CommandError) as failure:
        call_command("verify_audit", "--jsonl", str(export))
    assert str(failure.value) == (
        f"{export}:14: the key 'approved_by' is not a field of an audit event, and no hash "
        "covers it: not an export of the audit log")
