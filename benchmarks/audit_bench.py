"""How the admin audit pages hold up when the log grows from 10,000 to 1,000,000 events.

For each size the section builds a scratch database (`rq_bench_audit_<size>`), loads a valid
hash chain with COPY (seq, prev_hash and hash computed here exactly as `audit_record` does; a
realistic mix of actions, actors, trace ids and documents over six months), signs in an admin
through a session created with `manage.py shell`, and measures the real app under gunicorn:

  a. p95 of the audit list page (newest page, a deep keyset page, and each search filter an
     admin uses) at the large size against the small one, on pages that show as many rows at
     both sizes (drawing a row costs more than finding it, so a page of 5 rows against one of
     50 would say nothing about the log's size). Both logs hold the same "probe" events, a
     reviewer and two documents busy during three weeks, so that searches by one document, by
     a reviewer and a week, or by a reviewer and an action fill a page in the small log too;
     the other searches pick values that fill a page at both sizes. Each figure's note says
     how many rows the pages showed, counted in the HTML;
  b. rows/s of the full streamed export (CSV and JSON Lines) at the large size against
     PostgreSQL's own `COPY (SELECT the same columns ...) TO STDOUT` of the same rows;
  c. peak RSS (VmHWM) of a fresh single-worker gunicorn that served one full export, large
     size against small.

    .venv/bin/python -m benchmarks.audit_bench            # 10,000 vs 1,000,000 (a few minutes)
    .venv/bin/python -m benchmarks.audit_bench --quick    # 10,000 vs 100,000 (a smoke run)
"""

from __future__ import annotations

import datetime as dt
import heapq
import http.client
import json
import os
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlencode

import psycopg

from benchmarks._app import app_env, gunicorn, manage, scratch_database
from benchmarks._table import Figure, at_least, at_most, ms, p95, rate, report, section_args
from reviewqueue.audit.hashing import GENESIS_HASH, event_hash, hashed_fields_of

COLUMNS = ("seq", "created_at", "actor_type", "actor", "action", "object_type", "object_id",
           "trace_id", "document_id", "request_id", "before", "after", "prev_hash", "hash")
START = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
SPAN = dt.timedelta(days=180)
DOCUMENTS = 2_000
REVIEWERS = [f"user:reviewer{i:02d}" for i in range(40)]
OWNERS = [f"user:owner{i:02d}" for i in range(15)]
SERVICES = [f"user:rag-service token:rq_{k}" for k in ("a1b2", "c3d4", "e5f6")]
REQUESTS = 200
WARM_UP = 20
PAGE_SIZE = 50  # reviewqueue.audit.selectors.PAGE_SIZE: the rows of a full page

# The probe: the same events in both logs, whatever their size. A reviewer and two documents
# outside the pools above, busy during three weeks: PROBE_STORIES held answers a week, each
# claimed and decided by the reviewer (every other decision a rejection) and re-evaluated
# once, citing the two documents in turn, which are also published once a week.
PROBE_REVIEWER = "user:reviewer40"
PROBE_DOCUMENTS = ("doc-02000", "doc-02001")
PROBE_WEEKS = (30, 90, 150)  # days after START each busy week begins
PROBE_STORIES = 40
ACTIONS_EXACT = ("decision.reject", "lease.claimed", "document.withdrawn", "answer.ingested")


@dataclass
class Samples:
    """Values to search for, found while generating and then counted in the loaded log: what
    fills a page at this size (see `full_pages`)."""

    traces: list[str] = field(default_factory=list)
    last_seq: int = 0
    reviewers: set[str] = field(default_factory=set)  # with more than a page of events
    actions: set[str] = field(default_factory=set)  # of ACTIONS_EXACT, likewise
    days: set[int] = field(default_factory=set)  # days after START with more than a page
    decision_weeks: set[int] = field(default_factory=set)  # first days of such weeks


def _events(count: int, rng: random.Random) -> Iterator[dict[str, object]]:
    """Answer stories (ingested, verdict, maybe a claim and a decision, re-evaluations) mixed
    with document publications, in time order over six months."""
    step = SPAN / count
    moment = START
    emitted = 0
    answer = 0
    while emitted < count:
        if rng.random() < 0.12:
            doc = f"doc-{rng.randrange(DOCUMENTS):05d}"
            story = [(rng.choice(OWNERS + SERVICES[:1]), "user", "revision.published",
                      "document", doc, "", doc, {}, {"revision": f"r{rng.randrange(1, 40)}"})]
            if rng.random() < 0.05:
                story.append((rng.choice(OWNERS), "user", "document.withdrawn", "document", doc,
                              "", doc, {"status": "published"}, {"status": "withdrawn"}))
        else:
            answer += 1
            trace = f"tr-{answer:08d}-{rng.randrange(16**6):06x}"
            doc = f"doc-{rng.randrange(DOCUMENTS):05d}"
            service = rng.choice(SERVICES)
            status = rng.choice(("candidate", "held", "abstained"))
            story = [
                (service, "service", "answer.ingested", "answer", trace, trace, doc, {},
                 {"status": status, "version": 1}),
                ("worker", "worker", "verdict.created", "answer", trace, trace, doc, {},
                 {"verdict": rng.randrange(10**7), "decision": status}),
            ]
            if status == "held":
                who = rng.choice(REVIEWERS)
                story.append((who, "user", "lease.claimed", "review_item", trace, trace, "",
                              {}, {"until": "15 min"}))
                action = rng.choice(("approve", "approve", "edit", "reject"))
                story.append((who, "user", f"decision.{action}", "answer", trace, trace, doc,
                              {"status": "held"}, {"status": "approved" if action != "reject"
                                                   else "rejected"}))
            for _ in range(rng.choice((0, 0, 1, 2))):
                story.append(("worker", "worker", "verdict.created", "answer", trace, trace,
                              doc, {"verdict": 1}, {"verdict": 2, "cause": "revision"}))
        for actor, actor_type, action, object_type, object_id, trace, doc, before, after in story:
            if emitted >= count:
                return
            emitted += 1
            moment += step * rng.uniform(0.2, 1.8)
            yield {"created_at": moment.replace(microsecond=rng.randrange(1_000_000)),
                   "actor_type": actor_type if actor != "worker" else "worker",
                   "actor": actor, "action": action, "object_type": object_type,
                   "object_id": object_id, "trace_id": trace, "document_id": doc,
                   "request_id": f"{rng.getrandbits(64):016x}" if actor_type != "worker" else "",
                   "before": before, "after": after}


def _probe_events() -> list[dict[str, object]]:
    """The probe's events (the same at every size), in time order."""
    rng = random.Random(20261130)
    events: list[dict[str, object]] = []
    decisions = ("approve", "reject", "edit", "reject")
    for week in PROBE_WEEKS:
        begin = START + dt.timedelta(days=week, hours=12)
        for i, doc in enumerate(PROBE_DOCUMENTS):
            events.append({"created_at": begin + dt.timedelta(minutes=10 * i),
                           "actor_type": "user", "actor": OWNERS[i], "action": "revision.published",
                           "object_type": "document", "object_id": doc, "trace_id": "",
                           "document_id": doc, "request_id": f"{rng.getrandbits(64):016x}",
                           "before": {}, "after": {"revision": f"r{week}"}})
        for j in range(PROBE_STORIES):
            trace = f"tr-probe-{week:03d}-{j:02d}"
            doc = PROBE_DOCUMENTS[j % 2]
            action = decisions[j % len(decisions)]
            story = [
                (SERVICES[0], "service", "answer.ingested", "answer", doc, {},
                 {"status": "held", "version": 1}),
                ("worker", "worker", "verdict.created", "answer", doc, {},
                 {"verdict": rng.randrange(10**7), "decision": "held"}),
                (PROBE_REVIEWER, "user", "lease.claimed", "review_item", "", {},
                 {"until": "15 min"}),
                (PROBE_REVIEWER, "user", f"decision.{action}", "answer", doc,
                 {"status": "held"}, {"status": "rejected" if action == "reject" else "approved"}),
                ("worker", "worker", "verdict.created", "answer", doc, {"verdict": 1},
                 {"verdict": 2, "cause": "revision"}),
            ]
            moment = begin + dt.timedelta(hours=1) + dt.timedelta(days=6) * j / PROBE_STORIES
            for k, (actor, actor_type, act, object_type, document, before, after) in enumerate(
                    story):
                events.append({
                    "created_at": moment + dt.timedelta(seconds=20 * k,
                                                        microseconds=rng.randrange(1_000_000)),
                    "actor_type": actor_type, "actor": actor, "action": act,
                    "object_type": object_type, "object_id": trace, "trace_id": trace,
                    "document_id": document,
                    "request_id": f"{rng.getrandbits(64):016x}" if actor_type != "worker" else "",
                    "before": before, "after": after})
    events.sort(key=lambda e: e["created_at"])  # type: ignore[arg-type, return-value]
    return events


def _day(moment: dt.datetime) -> int:
    return (moment - START).days


def full_pages(url: str, samples: Samples) -> None:
    """Which search values fill a page (more than PAGE_SIZE matches) in this log: counted with
    SQL over the loaded events, in the app's time zone as the search's dates are."""
    zone = os.environ.get("TIME_ZONE") or "UTC"
    start_day = START.astimezone(dt.UTC).date()
    with psycopg.connect(url) as conn:
        samples.reviewers = {actor for actor, n in conn.execute(
            "SELECT actor, count(*) FROM audit_auditevent WHERE actor = ANY(%s) GROUP BY actor",
            ([*REVIEWERS, PROBE_REVIEWER],)) if n > PAGE_SIZE}
        samples.actions = {action for action, n in conn.execute(
            "SELECT action, count(*) FROM audit_auditevent WHERE action = ANY(%s) "
            "GROUP BY action", (list(ACTIONS_EXACT),)) if n > PAGE_SIZE}
        per_day: dict[int, int] = {}
        decisions: dict[int, int] = {}
        for day, n, d in conn.execute(
                "SELECT (created_at AT TIME ZONE %s)::date, count(*), "
                "count(*) FILTER (WHERE action LIKE 'decision.%%') "
                "FROM audit_auditevent GROUP BY 1", (zone,)):
            per_day[(day - start_day).days] = n
            decisions[(day - start_day).days] = d
        samples.days = {day for day in range(180) if per_day.get(day, 0) > PAGE_SIZE}
        samples.decision_weeks = {
            day for day in range(170)
            if sum(decisions.get(day + k, 0) for k in range(7)) > PAGE_SIZE}
        # Traces of exactly four events (a held answer claimed and decided, say): 4 rows.
        samples.traces = [trace for (trace,) in conn.execute(
            "SELECT trace_id FROM audit_auditevent WHERE trace_id = ANY(%s) "
            "GROUP BY trace_id HAVING count(*) = 4 ORDER BY trace_id", (samples.traces,))]


def load_chain(url: str, count: int) -> Samples:
    """Append `count` events to the (empty) log with COPY, hashed as audit_record does: the
    probe's events, and the generated mix for the rest, merged in time order."""
    rng = random.Random(20261129 + count)
    samples = Samples()
    prev_hash = GENESIS_HASH
    columns = ", ".join(COLUMNS)
    probe = _probe_events()
    merged = heapq.merge(_events(count - len(probe), rng), probe,
                         key=lambda e: e["created_at"])
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        with cur.copy(f"COPY audit_auditevent ({columns}) FROM STDIN") as copy:
            for seq, event in enumerate(merged, start=1):
                event["seq"] = seq
                digest = event_hash(hashed_fields_of(event), prev_hash)
                copy.write_row((seq, event["created_at"], event["actor_type"], event["actor"],
                                event["action"], event["object_type"], event["object_id"],
                                event["trace_id"], event["document_id"], event["request_id"],
                                json.dumps(event["before"]), json.dumps(event["after"]),
                                prev_hash, digest))
                prev_hash = digest
                if event["trace_id"] and rng.random() < 0.01:
                    samples.traces.append(str(event["trace_id"]))
                samples.last_seq = seq
        conn.commit()
        conn.autocommit = True
        conn.execute("VACUUM ANALYZE audit_auditevent")
    full_pages(url, samples)
    return samples


SESSION_SCRIPT = """
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from reviewqueue.accounts.models import Role
from reviewqueue.accounts.services import user_create_or_update
from reviewqueue.audit.services import SYSTEM
user = user_create_or_update(username="bench-admin", role=Role.ADMIN, groups=[],
                             password="bench-only-password-0123", actor=SYSTEM)
store = import_module(settings.SESSION_ENGINE).SessionStore()
store[SESSION_KEY] = str(user.pk)
store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
store[HASH_SESSION_KEY] = user.get_session_auth_hash()
store.create()
print("SESSION", settings.SESSION_COOKIE_NAME, store.session_key)
"""


def admin_cookie(env: dict[str, str]) -> str:
    """A signed-in admin's session cookie. Creating the admin appends one more event to the
    chain, through audit_record, after the loaded ones."""
    for line in manage(env, "shell", "-c", SESSION_SCRIPT).splitlines():
        if line.startswith("SESSION "):
            _, name, key = line.split()
            return f"{name}={key}"
    raise RuntimeError("no session created")


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM")


class Browser:
    """One admin's keep-alive connection."""

    def __init__(self, port: int, cookie: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        self.headers = {"Cookie": cookie}

    def get(self, path: str, keep: list[bytes] | None = None) -> tuple[int, int]:
        """Fetch `path`, reading the body in blocks; return the status and the body size.
        The blocks are appended to `keep` when one is given."""
        self.conn.request("GET", path, headers=self.headers)
        response = self.conn.getresponse()
        size = 0
        while block := response.read(1 << 16):
            size += len(block)
            if keep is not None:
                keep.append(block)
        return response.status, size


ROW_MARK = b'<td class="num">'  # the first cell of each event row of the list, and only there


def rows_shown(blocks: list[bytes]) -> int:
    return b"".join(blocks).count(ROW_MARK)


def common(small: Samples, large: Samples) -> tuple[Samples, Samples]:
    """Each size's samples, keeping only the reviewers, actions and windows that fill a page at
    both sizes, so that both sides search for the same things."""
    shared = {"reviewers": small.reviewers & large.reviewers,
              "actions": small.actions & large.actions,
              "days": small.days & large.days,
              "decision_weeks": small.decision_weeks & large.decision_weeks}
    return (Samples(small.traces, small.last_seq, **shared),
            Samples(large.traces, large.last_seq, **shared))


def searches(samples: Samples, rng: random.Random, n: int) -> dict[str, list[str]]:
    """Per kind of list page, the query strings it is measured with (drawn at random)."""
    mid = START + SPAN / 2

    def pick(values: list[str] | set[str]) -> list[str]:
        ordered = sorted(values)
        return [rng.choice(ordered) for _ in range(n)]

    def from_day(days: set[int]) -> dt.datetime:
        return START + dt.timedelta(days=rng.choice(sorted(days)))

    probe_actor = PROBE_REVIEWER.removeprefix("user:")
    # A month that holds one of the probe's busy weeks whole.
    months = [week - back for week in PROBE_WEEKS for back in range(24) if week - back < 150]

    def days(first: dt.datetime, length: int) -> str:
        return urlencode({"since": f"{first:%Y-%m-%d}",
                          "until": f"{first + dt.timedelta(days=length - 1):%Y-%m-%d}"})

    return {
        "newest page": [""] * n,
        "keyset page deep in the log": [
            f"before={rng.randrange(PAGE_SIZE + 2, samples.last_seq)}" for _ in range(n)],
        "trace id": [urlencode({"trace_id": t}) for t in pick(samples.traces)],
        "actor, a reviewer": [urlencode({"actor": a.removeprefix("user:")})
                              for a in pick(samples.reviewers)],
        "actor, a service and its tokens": [urlencode({"actor": "rag-service"})] * n,
        "actor worker": [urlencode({"actor": "worker"})] * n,
        "action, exact": [urlencode({"action": a}) for a in pick(samples.actions)],
        "action prefix decision.*": [urlencode({"action": "decision.*"})] * n,
        "document": [urlencode({"document": d}) for d in pick(set(PROBE_DOCUMENTS))],
        "one day, anywhere in six months": [days(from_day(samples.days), 1) for _ in range(n)],
        "one month in the middle": [days(mid, 30)] * n,
        "actor and a week": [
            urlencode({"actor": probe_actor}) + "&" + days(from_day(set(PROBE_WEEKS)), 7)
            for _ in range(n)],
        "action prefix and a week": [
            "action=decision.*&" + days(from_day(samples.decision_weeks), 7) for _ in range(n)],
        "document and a month": [
            urlencode({"document": d}) + "&" + days(from_day(set(months)), 30)
            for d in pick(set(PROBE_DOCUMENTS))],
        # Two fields: one is read through its index, the other checked on a bounded window.
        "actor and an action": [
            urlencode({"actor": probe_actor, "action": "decision.reject"}) for _ in range(n)],
    }


@dataclass
class Prepared:
    events: int  # in the log, the admin's creation included
    url: str
    env: dict[str, str]
    cookie: str
    samples: Samples


def prepare(events: int) -> Prepared:
    url = scratch_database(f"rq_bench_audit_{events}")
    env = app_env(url)
    manage(env, "migrate", "--noinput")
    started = time.perf_counter()
    samples = load_chain(url, events)
    print(f"  {events:,} events loaded in {time.perf_counter() - started:.0f} s",
          file=sys.stderr, flush=True)
    return Prepared(events + 1, url, env, admin_cookie(env), samples)


@dataclass
class ListFigure:
    p95s: tuple[float, float]  # small, large
    rows: tuple[list[int], list[int]]  # rows each measured page showed, small and large


def measure_list(small: Prepared, large: Prepared, requests: int,
                 warm_up: int) -> dict[str, ListFigure]:
    """p95 per kind of page, small and large, and the rows each page showed. Both servers run
    at once and the requests alternate between them, so load from anything else on the
    machine hits both alike."""
    figures = {}
    small_samples, large_samples = common(small.samples, large.samples)
    with gunicorn(small.env, workers=1, timeout=600) as small_server, \
            gunicorn(large.env, workers=1, timeout=600) as large_server:
        small_port, large_port = small_server.port, large_server.port
        browsers = (Browser(small_port, small.cookie), Browser(large_port, large.cookie))
        queries = (searches(small_samples, random.Random(7), requests + warm_up),
                   searches(large_samples, random.Random(7), requests + warm_up))
        for kind in queries[0]:
            timings: tuple[list[float], list[float]] = ([], [])
            rows: tuple[list[int], list[int]] = ([], [])
            for i in range(requests + warm_up):
                for side in ((0, 1) if i % 2 else (1, 0)):
                    query = queries[side][kind][i]
                    path = f"/audit/?{query}" if query else "/audit/"
                    body: list[bytes] = []
                    began = time.perf_counter()
                    status, _ = browsers[side].get(path, body)
                    elapsed = time.perf_counter() - began
                    if status != 200:
                        raise RuntimeError(f"{kind}: {path} gave {status}")
                    if i >= warm_up:
                        timings[side].append(elapsed)
                        rows[side].append(rows_shown(body))
            figures[kind] = ListFigure((p95(timings[0]), p95(timings[1])), rows)
    return figures


def rows_note(rows: tuple[list[int], list[int]], small_n: int, large_n: int) -> str:
    """How many rows the measured pages showed at each size, e.g. "50 rows a page at both
    sizes" or "4-50 rows a page at 10k, 50 at 1,000k"."""
    def span(counts: list[int]) -> str:
        low, high = min(counts), max(counts)
        return f"{low}" if low == high else f"{low}-{high} (mean {sum(counts) / len(counts):.1f})"

    little, big = span(rows[0]), span(rows[1])
    if little == big:
        return f"{little} rows a page at both sizes"
    return (f"UNEQUAL pages: {little} rows a page at {small_n // 1000:,}k, "
            f"{big} at {large_n // 1000:,}k")


def copy_rate(url: str) -> float:
    """Rows per second PostgreSQL itself streams the same columns at, read by psycopg."""
    columns = ", ".join(COLUMNS)
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        rows = cur.execute("SELECT count(*) FROM audit_auditevent").fetchone()[0]
        started = time.perf_counter()
        with cur.copy(f"COPY (SELECT {columns} FROM audit_auditevent ORDER BY seq) "
                      "TO STDOUT") as copy:
            for _block in copy:
                pass
        return rows / (time.perf_counter() - started)


def export_once(prepared: Prepared, fmt: str) -> tuple[float, int]:
    """Rows/s of one full export from a fresh single-worker gunicorn, and that worker's peak
    RSS in KiB afterwards."""
    with gunicorn(prepared.env, workers=1, timeout=600) as server:
        port, worker = server.port, server.worker_pids()[0]
        browser = Browser(port, prepared.cookie)
        # Warm up: imports, templates, a first connection; exports nothing.
        browser.get("/audit/")
        browser.get(f"/audit/export.{fmt}?trace_id=nothing-matches")
        began = time.perf_counter()
        status, size = browser.get(f"/audit/export.{fmt}")
        elapsed = time.perf_counter() - began
        if status != 200 or size < prepared.events * 100:
            raise RuntimeError(f"export.{fmt}: {status}, {size} bytes")
        return prepared.events / elapsed, peak_rss_kib(worker)


def main() -> None:
    parser = section_args(__doc__.splitlines()[0])
    args = parser.parse_args()
    small_n, large_n = (10_000, 100_000) if args.quick else (10_000, 1_000_000)
    requests, warm_up = (40, 10) if args.quick else (REQUESTS, WARM_UP)
    small, large = prepare(small_n), prepare(large_n)
    p95s = measure_list(small, large, requests, warm_up)
    rates: dict[str, float] = {}
    peaks: dict[str, tuple[int, int]] = {}
    copy = 0.0
    for fmt in ("csv", "jsonl"):
        _, small_peak = export_once(small, fmt)
        best, large_peak = 0.0, 0
        # Best of two, the app's export and COPY alike, taken in turn.
        for _attempt in range(1 if args.quick else 2):
            app_rate, peak = export_once(large, fmt)
            best, large_peak = max(best, app_rate), max(large_peak, peak)
            copy = max(copy, copy_rate(large.url))
        rates[fmt] = best
        peaks[fmt] = (small_peak, large_peak)

    figures: list[Figure] = []
    size = f"{large_n // 1000:,}k vs {small_n // 1000:,}k events"
    for index, (kind, figure) in enumerate(p95s.items()):
        little, big = figure.p95s
        # How the pages were measured is said once, on the first row.
        how = (f"{size}, {requests} requests each after {warm_up} warm-up, alternating; "
               if index == 0 else "")
        figures.append(at_most(
            f"audit list p95, {kind}", ms(big), ms(little), big / little, 1.5,
            how + rows_note(figure.rows, small_n, large_n)))
    for fmt in ("csv", "jsonl"):
        figures.append(at_least(
            f"audit export {fmt.upper()} rows/s", rate(rates[fmt], "rows"),
            f"COPY TO STDOUT {rate(copy, 'rows')}", rates[fmt] / copy, 0.2,
            f"full export of {large.events:,} events over HTTP, best of {1 if args.quick else 2}"))
    for fmt in ("csv", "jsonl"):
        little, big = peaks[fmt]
        figures.append(at_most(
            f"audit export {fmt.upper()} peak memory", f"{big / 1024:.1f} MiB",
            f"{little / 1024:.1f} MiB", big / little, 1.2,
            f"{size}: VmHWM of a fresh single-worker gunicorn after one full export"))
    report(figures, args.json)


if __name__ == "__main__":
    main()
