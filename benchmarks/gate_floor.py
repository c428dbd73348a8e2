"""The speed floor for ``python -m gating evaluate``.

The least work that still deserves the name: parse each JSON line, copy claims and evidence into
tuples, run the seven checks of the decision order (steps 1 to 7) and print the decision and
reason. No validation, no findings, no warnings, no fingerprint. ``benchmarks/gate_bench.py``
times the real command against this loop.

    python benchmarks/gate_floor.py FILE > out.jsonl
"""

from __future__ import annotations

import datetime
import json
import re
import sys

ISO = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def good_date(text: str) -> bool:
    if not ISO.fullmatch(text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def decide(
    claims: list[tuple[str, object, str]],
    evidence: list[tuple[str, str, object, str, str]],
    as_of: str,
) -> tuple[str, str]:
    if not claims:
        return "abstain", "no_claims"
    if not evidence:
        return "abstain", "no_evidence"
    ids = [e[0] for e in evidence]
    by_id = dict(zip(ids, evidence, strict=True))
    if len(by_id) != len(ids) or not all(
        good_date(e[3]) and good_date(e[4]) and e[3] <= e[4] for e in evidence
    ):
        return "review", "invalid_metadata"
    if any(c[2] not in by_id for c in claims):
        return "abstain", "unknown_citation"
    if any(not by_id[c[2]][3] <= as_of <= by_id[c[2]][4] for c in claims):
        return "review", "noncurrent_citation"
    for key, _, _ in claims:
        values = {(type(e[2]), e[2]) for e in evidence if e[1] == key and e[3] <= as_of <= e[4]}
        if len(values) > 1:
            return "review", "conflicting_sources"
    for key, value, cite in claims:
        item = by_id[cite]
        if item[1] != key or type(item[2]) is not type(value) or item[2] != value:
            return "abstain", "unsupported_claim"
    return "candidate", "supported"


def main(path: str) -> None:
    today = datetime.date.today().isoformat()
    write = sys.stdout.write
    with open(path, "rb") as stream:
        for line in stream:
            record = json.loads(line)
            claims = [(c["key"], c["value"], c["cite"]) for c in record["claims"]]
            evidence = [
                (e["id"], e["key"], e["value"], e["valid_from"], e["valid_until"])
                for e in record["evidence"]
            ]
            decision, reason = decide(claims, evidence, record.get("as_of", today))
            write(
                json.dumps(
                    {"id": record.get("id"), "decision": decision, "reason": reason},
                    separators=(",", ":"),
                )
                + "\n"
            )


if __name__ == "__main__":
    main(sys.argv[1])
