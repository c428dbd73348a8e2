"""The reviewer's pages at scale: the queue with 100,000 held answers, deep pages, big items.

    python -m benchmarks.queue_bench [--quick] [--json] [--keep]

Prints three figures, each a p95 over a few hundred requests after a warm-up, served by the
real app (gunicorn, DEBUG off, a signed-in reviewer's session: every middleware, the session
write, the templates) from scratch PostgreSQL databases that it builds and drops,
`rq_bench_queue` and `rq_bench_queue_small`:

  a. the queue page with 100,000 held answers against the same page with 1,000: one database
     is built to 1,000 held, copied (the copy is the baseline), then grown to 100,000; two
     gunicorns serve them and requests alternate between them, so both see the same load;
  b. the queue page reached by following the page's own "More" link 999 times (page 1,000)
     against page 1;
  c. the item page of an answer with 50 citations against one with 2, and the number of SQL
     queries each page runs, counted in process (they must be equal: the page reads in a fixed
     number of queries, or the figure fails).

Held answers are copies, made in SQL, of one answer that went through ingest
(tests/perf/builders.py): their retrieved documents (40 public ones, 5 only the `hr` group may
read, which the reviewer is not in), primary reasons, index releases, entry times and leases
vary, so that visibility and filters do real work. The two item-page answers go through ingest:
a conflict between their first two sources and, on the big one, 16 sources revised since the
answer was generated, so every part of the page is drawn.
"""

from __future__ import annotations

import html
import http.client
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from benchmarks._app import ADMIN_URL, app_env, gunicorn, scratch_database  # noqa: E402
from benchmarks._table import Figure, at_most, ms, p95, report, section_args  # noqa: E402

DATABASE = "rq_bench_queue"
SMALL_DATABASE = "rq_bench_queue_small"
PUBLIC_DOCUMENTS = 40
HR_DOCUMENTS = 5
RELEASES = 6


# --- Data -------------------------------------------------------------------------------------

def _publish(key: str, revision: str, *, facts: list[tuple[str, Any]], passages: list[str],
             principals: tuple[str, ...] = ("*",), title: str = "") -> None:
    import datetime as dt

    from django.utils import timezone

    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.sources.services import (
        FactInput,
        PassageInput,
        RevisionInput,
        revision_publish,
    )

    start = timezone.localdate() - dt.timedelta(days=365)
    data = RevisionInput(
        title=title or f"Document {key}",
        owner="bench-owner",
        updated_at=timezone.now() - dt.timedelta(days=3),
        allowed_principals=principals,
        url=f"https://docs.example.test/{key}",
        passages=tuple(PassageInput(f"p{i + 1}", text) for i, text in enumerate(passages)),
        facts=tuple(FactInput(key=k, value=v, valid_from=start, valid_until=None, span="p1")
                    for k, v in facts),
    )
    revision_publish(document_key=key, revision=revision, data=data, actor=SYSTEM)


def _ingest(trace_id: str, cites: list[tuple[str, str]], claims: list[dict[str, Any]],
            text: str) -> Any:
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.reviews.services.ingest import AnswerInput, RetrievedInput, answer_ingest

    data = AnswerInput(
        trace_id=trace_id, question=f"Question of {trace_id}: how long is the free trial?",
        answer=text, asked_by=("user:customer-7",), index_release="2026.01",
        retrieved=tuple(RetrievedInput(c, d, "r1", "p1") for c, d in cites),
        claims=tuple(claims),
    )
    return answer_ingest(data=data, actor=SYSTEM).answer


def _users() -> tuple[Any, Any]:
    from reviewqueue.accounts.models import Role
    from reviewqueue.accounts.services import user_create_or_update
    from reviewqueue.audit.services import SYSTEM

    def make(name: str, role: Role) -> Any:
        return user_create_or_update(username=name, role=role, groups=[],
                                     password="bench-only-password-123", actor=SYSTEM)

    make("bench-owner", Role.OWNER)
    return make("bench-reviewer", Role.REVIEWER), make("bench-colleague", Role.REVIEWER)


def _sources() -> None:
    """The documents held answers cite: public ones that disagree in pairs, and HR-only ones."""
    for n in range(PUBLIC_DOCUMENTS):
        # Only kb-00 and kb-01 disagree (on trial_days): one conflict, as in a real store.
        key = "trial_days" if n < 2 else f"plan_{n}_days"
        _publish(f"kb-{n:02d}", "r1", facts=[(key, 14 + n % 2 * 16)],
                 passages=[f"The free trial of plan {n} lasts {14 + n % 2 * 16} days.",
                           "Support is available on weekdays."])
    for n in range(HR_DOCUMENTS):
        _publish(f"hr-{n}", "r1", facts=[("probation_days", 90)], principals=("group:hr",),
                 passages=["Probation lasts 90 days."])


def _template() -> Any:
    answer = _ingest("queue-0", [("d1", "kb-00"), ("d2", "kb-01")],
                     [{"key": "trial_days", "value": 14, "cite": "d1"}],
                     "The free trial lasts 14 days [d1]. In some plans it is longer [d2].")
    assert answer.status == "held", answer.status
    return answer


def _item_answers() -> tuple[str, str]:
    """Two held answers for the item page, 2 citations and 50, each generated from revisions
    r1, with a conflict between its first two sources; a third of the big answer's sources
    have been revised since (r2), so its page also shows old and new passages side by side.
    Revisions are published before the answers arrive: each answer has one verdict."""
    def passages(n: int, revised: bool) -> list[str]:
        days = 30 if n == 1 else 14
        lead = (f"Plan {n}: the free trial lasts {days} days; the limit is now {n}. "
                if revised else f"Plan {n}: the free trial lasts {days} days and the limit "
                f"is {n}. ")
        return [lead + "Some context. " * 20, f"More about plan {n}.",
                f"Even more about plan {n}."]

    for n in range(50):
        facts = [("item_trial_days", 30 if n == 1 else 14), (f"limit_{n}", n)]
        _publish(f"item-{n:02d}", "r1", facts=facts, passages=passages(n, False))
        if n >= 2 and n % 3 == 2:
            _publish(f"item-{n:02d}", "r2", facts=facts, passages=passages(n, True))

    def answer(trace_id: str, citations: int) -> str:
        cites = [(f"d{n + 1}", f"item-{n:02d}") for n in range(citations)]
        claims = [{"key": "item_trial_days", "value": 14, "cite": "d1"}]
        claims += [{"key": f"limit_{n}", "value": n, "cite": f"d{n + 1}"}
                   for n in range(2, citations)]
        text = " ".join(f"Sentence {n} [d{n + 1}]." for n in range(citations))
        made = _ingest(trace_id, cites, claims, text)
        assert made.status == "held", made.status
        return trace_id

    return answer("item-2", 2), answer("item-50", 50)


def _grow(template: Any, count: int, prefix: str, colleague_id: int) -> None:
    """`count` more held answers, copied from `template` in SQL, each with its queue entry."""
    from tests.perf.builders import held_copies

    held_copies(template, count, prefix, public_documents=PUBLIC_DOCUMENTS,
                hr_documents=HR_DOCUMENTS, releases=RELEASES, lessee_id=colleague_id)


def _settle() -> None:
    """VACUUM ANALYZE, as autovacuum would have done by the time a backlog this size had
    built up (the copies arrive in one statement; this server may run with autovacuum off)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")


def _log(message: str) -> None:
    """Progress on stderr, so that --json output stays one line on stdout."""
    print(f"queue_bench {time.strftime('%H:%M:%S')}: {message}", file=sys.stderr,
          flush=True)


def _held() -> int:
    from reviewqueue.reviews.models import ReviewItem

    return ReviewItem.objects.count()


# --- Measuring --------------------------------------------------------------------------------

class Browser:
    """A signed-in reviewer's keep-alive connection to one gunicorn."""

    def __init__(self, port: int, session: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers = {"Cookie": f"sessionid={session}", "Accept-Language": "en"}

    def get(self, path: str) -> tuple[float, str]:
        started = time.perf_counter()
        self.conn.request("GET", path, headers=self.headers)
        response = self.conn.getresponse()
        body = response.read()
        elapsed = time.perf_counter() - started
        if response.status != 200:
            raise SystemExit(f"GET {path} answered {response.status}")
        return elapsed, body.decode()


def _p95s(targets: list[tuple[Browser, str]], requests: int, warm_up: int) -> list[float]:
    """p95 per (browser, path), taken in turn, so that a neighbour's load on the machine
    falls on every figure alike."""
    for _ in range(warm_up):
        for browser, path in targets:
            browser.get(path)
    samples: list[list[float]] = [[] for _ in targets]
    for _ in range(requests):
        for i, (browser, path) in enumerate(targets):
            samples[i].append(browser.get(path)[0])
    return [p95(s) for s in samples]


def _queries(path: str, database: str | None = None) -> int:
    """SQL statements one request for `path` runs, counted in process (against `database`
    when given, instead of the benchmark's own)."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    name = connection.settings_dict["NAME"]
    if database:
        connection.close()
        connection.settings_dict["NAME"] = database
    try:
        client = Client()
        client.force_login(get_user_model().objects.get(username="bench-reviewer"))
        client.get(path)  # warm: the first request of a client loads its session
        with CaptureQueriesContext(connection) as captured:
            response = client.get(path)
        assert response.status_code == 200, response.status_code
        return len(captured.captured_queries)
    finally:
        if database:
            connection.close()
            connection.settings_dict["NAME"] = name


NEXT_LINK = re.compile(r'<a href="([^"]+)" rel="next">')


def _page_by_cursor(browser: Browser, pages: int) -> str:
    """The path of page `pages`, reached by following each page's own "More" link."""
    path = "/"
    for _ in range(pages - 1):
        found = NEXT_LINK.search(browser.get(path)[1])
        if found is None:
            raise SystemExit(f"the queue ran out of pages before page {pages}")
        path = html.unescape(found.group(1))
    return path


def _session(user: Any) -> str:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def _copy_database(source: str, target: str) -> str:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{target}" TEMPLATE "{source}"')
    return ADMIN_URL.rsplit("/", 1)[0] + f"/{target}"


def main() -> None:
    parser = section_args(__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the scratch databases")
    args = parser.parse_args()
    small, large = 1_000, (2_000 if args.quick else 100_000)
    deep = 30 if args.quick else 1_000
    requests, warm_up = (40, 5) if args.quick else (300, 30)

    url = scratch_database(DATABASE)
    os.environ.update(app_env(url))
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    figures: list[Figure] = []
    try:
        call_command("migrate", verbosity=0)
        reviewer, colleague = _users()
        _sources()
        template = _template()
        item_small, item_large = _item_answers()
        _grow(template, small - _held(), "queue-s", colleague.pk)
        _settle()
        session = _session(reviewer)
        held_small = _held()
        # The 1,000-held database is kept as it stands, so that both sizes can be measured
        # in turn, under the same load; this one grows to 100,000.
        connection.close()
        small_url = _copy_database(DATABASE, SMALL_DATABASE)
        build = time.perf_counter()
        _grow(template, large - held_small, "queue-l", colleague.pk)
        build_s = time.perf_counter() - build
        _settle()
        held_large = _held()
        _log(f"{held_small:,} and {held_large:,} held answers stored")
        counts = {
            "small": _queries("/", SMALL_DATABASE), "large": _queries("/"),
            "item-2": _queries(f"/answers/{item_small}/"),
            "item-50": _queries(f"/answers/{item_large}/"),
        }
        connection.close()

        with gunicorn(app_env(url), workers=1) as server, \
                gunicorn(app_env(small_url), workers=1) as small_server:
            on_large = Browser(server.port, session)
            on_small = Browser(small_server.port, session)

            # a. The queue page with 100,000 held against 1,000.
            queue_small, queue_large = _p95s([(on_small, "/"), (on_large, "/")], requests,
                                             warm_up)
            figures.append(at_most(
                f"queue page p95, {held_large:,} held vs {held_small:,}",
                f"{ms(queue_large)} at {held_large:,} held",
                f"{ms(queue_small)} at {held_small:,} held", queue_large / queue_small, 1.5,
                f"{counts['large']} vs {counts['small']} queries; "
                f"{held_large - held_small:,} held added in SQL in {build_s:.0f} s",
            ))
            _log("queue page measured")

            # b. Page 1,000, reached through the real "More" links, against page 1.
            deep_path = _page_by_cursor(on_large, deep)
            rows = on_large.get(deep_path)[1].count("data-row ")
            first, deep_p95 = _p95s([(on_large, "/"), (on_large, deep_path)], requests,
                                    warm_up)
            figures.append(at_most(
                f"queue page p95, page {deep:,} by cursor vs page 1",
                f"{ms(deep_p95)} on page {deep:,}", f"{ms(first)} on page 1",
                deep_p95 / first, 1.3, f"{rows} rows on page {deep:,}",
            ))
            _log("deep page measured")

            # c. The item page: 50 citations against 2, and the queries each runs.
            two, fifty = _p95s([(on_large, f"/answers/{item_small}/"),
                                (on_large, f"/answers/{item_large}/")], requests, warm_up)
            q_two, q_fifty = counts["item-2"], counts["item-50"]
            same = q_two == q_fifty
            figures.append(Figure(
                "item page p95, 50 citations vs 2", f"{ms(fifty)} with 50", f"{ms(two)} with 2",
                # A page whose queries grow with its citations fails whatever its time.
                fifty / two if same else float("inf"), "<= 2",
                f"{q_two} queries both" if same
                else f"QUERIES DIFFER: {q_fifty} with 50 citations, {q_two} with 2",
            ))
    finally:
        connection.close()
        if not args.keep:
            _drop(DATABASE, SMALL_DATABASE)
    report(figures, args.json)


def _drop(*names: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
