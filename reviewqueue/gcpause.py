"""Python's cyclic garbage collector: kept off the objects that live as long as the process,
and held off for the length of one bounded bulk request.

A 500-answer batch allocates a few hundred thousand short-lived containers (parsed JSON, gate
input, model rows, audit payloads). Each 700 allocations the collector walks the youngest of
them, and every so often the whole heap: in a gunicorn worker that was a fifth of a batch's
CPU, and it finds no cycles there, since reference counting frees all of it. Requests of a
bounded size (the batch endpoint takes 500 answers at most) may run with it off; it is back on
when they end, and its next pass takes whatever cycles they left.

Its full passes walk every object it tracks. Most of those are the modules, classes and
settings loaded at start, which live as long as the process: `startup_objects_kept` moves them
out of its sight once the app is loaded (and reference counting still frees them).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off, then turn it back on, unless it was off
    already (someone else's choice, kept). In a threaded server a request that ends turns it
    back on under one still running: that one then runs at the usual cost, never with it off
    for good."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def startup_objects_kept() -> None:
    """Collect what loading the app left, then keep the collector's full passes off every object
    alive now (gc.freeze): they are the process's own (modules, classes, settings, middleware)
    and stay until it exits."""
    gc.collect()
    gc.freeze()
