"""The figures every benchmark section reports, and the one table `python -m benchmarks` prints.

A section is a module with `main()`; it measures, builds a list of `Figure`, and hands it to
`report`. Run alone it prints its own rows; run by the suite (`--json`) it prints them as one
JSON line that the suite gathers into a single table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass

MARKER = "BENCH-FIGURES "


@dataclass(frozen=True)
class Figure:
    """One row: what was measured, what it is compared with, and the target on the ratio."""

    name: str
    measured: str  # the figure itself, with its unit, e.g. "1,234 answers/s"
    baseline: str  # the floor, or the small-size figure it is compared with
    ratio: float
    target: str  # ">= 0.3" or "<= 1.5"
    note: str = ""

    @property
    def ok(self) -> bool:
        op, bound = self.target.split()
        return self.ratio >= float(bound) if op == ">=" else self.ratio <= float(bound)


def at_least(name: str, measured: str, baseline: str, ratio: float, bound: float,
             note: str = "") -> Figure:
    return Figure(name, measured, baseline, ratio, f">= {bound:g}", note)


def at_most(name: str, measured: str, baseline: str, ratio: float, bound: float,
            note: str = "") -> Figure:
    return Figure(name, measured, baseline, ratio, f"<= {bound:g}", note)


def p95(samples: list[float]) -> float:
    """The 95th percentile of `samples` (nearest rank)."""
    ordered = sorted(samples)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def rate(per_second: float, unit: str) -> str:
    return f"{per_second:,.0f} {unit}/s" if per_second >= 100 else f"{per_second:,.1f} {unit}/s"


def section_args(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, for a smoke run; the figures mean little")
    parser.add_argument("--json", action="store_true", help="print the figures for the suite")
    return parser


def report(figures: list[Figure], as_json: bool) -> None:
    if as_json:
        print(MARKER + json.dumps([asdict(f) for f in figures]), flush=True)
    else:
        print(table(figures))


def table(figures: list[Figure]) -> str:
    lines = [
        "| figure | measured | baseline in the same run | ratio | target | met |",
        "|---|---|---|---:|---|---|",
    ]
    for f in figures:
        name = f"{f.name} ({f.note})" if f.note else f.name
        lines.append(f"| {name} | {f.measured} | {f.baseline} | {f.ratio:.3f} | {f.target} "
                     f"| {'yes' if f.ok else '**no**'} |")
    return "\n".join(lines)


def parse(stdout: str) -> list[Figure]:
    for line in stdout.splitlines():
        if line.startswith(MARKER):
            return [Figure(**row) for row in json.loads(line[len(MARKER):])]
    raise ValueError("the section printed no figures")


def machine() -> str:
    """One line naming the machine the figures came from."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = ""
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
            memory = f", {kib / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    try:
        # "psql (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)"
        pg = subprocess.run(["psql", "--version"], capture_output=True, text=True,
                            check=False).stdout.split()[2]
    except OSError:
        pg = "?"
    return (f"{os.cpu_count()} cores ({cpu}){memory}, {platform.system()} "
            f"{platform.release()}, Python {sys.version.split()[0]}, PostgreSQL {pg}")
