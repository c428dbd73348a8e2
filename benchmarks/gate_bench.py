"""Time ``python -m gating evaluate`` against the floor loop in ``gate_floor.py``.

Generates the published mix (13 case shapes in turn, every copy renamed and shifted) as a JSON
Lines file, runs both programs on it as subprocesses, alternately and several times, and prints
wall-clock and CPU times and the ratio gate / floor. The budget is a ratio of 2.0, judged on CPU
time (user + system of each child), which other load on the machine disturbs far less than wall
time; the exit status is 1 above it.

    python benchmarks/gate_bench.py [--cases 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gating.mix import published_mix_lines  # noqa: E402 - needs the path above

BUDGET = 2.0


def _timed(command: list[str], out: Path) -> tuple[float, float]:
    """Wall-clock seconds and CPU seconds (user + system) of one child process."""
    with out.open("wb") as sink:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, cwd=REPO, stdout=sink, check=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _decisions(path: Path) -> list[tuple[object, object, object]]:
    rows = (json.loads(line) for line in path.read_text().splitlines())
    return [(row.get("id"), row.get("decision"), row.get("reason")) for row in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="gate-bench-") as folder:
        cases = Path(folder) / "cases.jsonl"
        started = time.perf_counter()
        with cases.open("w") as handle:
            for line in published_mix_lines(args.cases):
                handle.write(line + "\n")
        made = time.perf_counter() - started
        size_mb = cases.stat().st_size / 1e6
        print(f"python {sys.version.split()[0]} ({sys.executable})")
        print(
            f"generated {args.cases} cases of the published mix: {size_mb:.1f} MB in {made:.1f} s"
        )

        floor_out = Path(folder) / "floor.jsonl"
        gate_out = Path(folder) / "gate.jsonl"
        floor_cmd = [sys.executable, str(REPO / "benchmarks" / "gate_floor.py"), str(cases)]
        gate_cmd = [sys.executable, "-m", "gating", "evaluate", str(cases)]
        floor_runs: list[tuple[float, float]] = []
        gate_runs: list[tuple[float, float]] = []
        for _ in range(args.runs):
            floor_runs.append(_timed(floor_cmd, floor_out))
            gate_runs.append(_timed(gate_cmd, gate_out))

        agree = _decisions(floor_out) == _decisions(gate_out)

    def report(name: str, runs: list[tuple[float, float]]) -> tuple[float, float]:
        wall = min(w for w, _ in runs)
        cpu = min(c for _, c in runs)
        median = statistics.median(w for w, _ in runs)
        print(
            f"{name}: wall best {wall:.2f} s (median {median:.2f} s), CPU best {cpu:.2f} s, "
            f"{args.cases / wall:,.0f} cases/s"
        )
        return wall, cpu

    print(f"best of {args.runs} runs each, run alternately:")
    floor_wall, floor_cpu = report("floor (parse, 7 checks on tuples, print)", floor_runs)
    gate_wall, gate_cpu = report("python -m gating evaluate               ", gate_runs)
    wall_ratio, cpu_ratio = gate_wall / floor_wall, gate_cpu / floor_cpu
    print(f"ratio gate / floor: wall {wall_ratio:.2f}, CPU {cpu_ratio:.2f} (budget {BUDGET:.1f})")
    print(f"floor and gate agree on every decision and reason: {'yes' if agree else 'NO'}")
    # The verdict uses CPU time: on a shared machine wall time also measures the neighbours.
    within = cpu_ratio <= BUDGET and agree
    print("within budget" if within else "OVER BUDGET or disagreement")
    return 0 if within else 1


if __name__ == "__main__":
    raise SystemExit(main())
