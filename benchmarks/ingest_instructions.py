"""Instructions one 500-answer batch costs the app, counted by callgrind: a figure this host's
noise does not move (the same code gives the same count to within a few tenths of a percent),
for telling a small change to ingest from the noise.

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.%p \\
        .venv/bin/python -m benchmarks.ingest_instructions

callgrind prints the count as "Collected"; counting is on only while the timed batch runs
(the setup, a warm-up batch and the reply check are left out). About a minute and a half.
"""

from __future__ import annotations

import json
import os
import subprocess

from benchmarks.ingest_bench import answer
from benchmarks.ingest_cpu import BATCH, app_on_documents


def main() -> None:
    app = app_on_documents("rq_bench_ingest_instructions")
    for prefix in ("warm", "timed"):
        body = json.dumps({"answers": [answer(i, prefix) for i in range(BATCH)]})
        if prefix == "timed":
            counting(True)
        status, reply = app.call("POST", "/api/v1/answers/batch", body)
        counting(False)
        assert status.startswith("200"), reply[:500]


def counting(on: bool) -> None:
    """Turn callgrind's counting on or off in this process (nothing happens outside valgrind)."""
    subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(os.getpid())],
                   capture_output=True, check=False)


if __name__ == "__main__":
    main()
