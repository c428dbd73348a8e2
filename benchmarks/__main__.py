"""The benchmark suite: every section, one table.

    .venv/bin/python -m benchmarks [--quick] [--only ingest,queue,...] [--markdown FILE]

Each section runs in its own process against its own scratch databases (it builds its data
itself, at two sizes where a figure compares sizes), beside its floor measured in the same run.
The exit status is 1 when a figure misses its target.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._table import Figure, machine, parse, table

SECTIONS = {
    "ingest": "benchmarks.ingest_bench",
    "queue": "benchmarks.queue_bench",
    "reevaluation": "benchmarks.reevaluation_bench",
    "audit": "benchmarks.audit_bench",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help=f"comma-separated sections out of {', '.join(SECTIONS)}")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s): {', '.join(unknown)}")

    figures: list[Figure] = []
    started = time.perf_counter()
    for name in names:
        print(f"-- {name} ...", file=sys.stderr, flush=True)
        section_started = time.perf_counter()
        command = [sys.executable, "-m", SECTIONS[name], "--json"]
        if args.quick:
            command.append("--quick")
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
            raise SystemExit(f"section {name} failed (exit status {done.returncode})")
        figures += parse(done.stdout)
        print(f"   {name} took {time.perf_counter() - section_started:.0f} s", file=sys.stderr)

    text = (f"{table(figures)}\n\nMachine: {machine()}. "
            f"{'Quick sizes. ' if args.quick else ''}"
            f"The suite took {(time.perf_counter() - started) / 60:.1f} minutes.")
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    missed = [f.name for f in figures if not f.ok]
    if missed:
        print(f"\n{len(missed)} figure(s) missed the target: {'; '.join(missed)}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
