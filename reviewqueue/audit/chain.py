"""Checking the hash chain. Pure functions over rows; the database walk lives in services.

A row is a mapping with the hashed fields plus `prev_hash` and `hash`, in `seq` order: a
`.values()` dict from the table or a line of a JSON Lines export.

The walk does not stop at the first bad event. History cannot be repaired, so a walk that
stopped there would find the same thing every night and never look at what comes after it:
an event edited or deleted later would go unnoticed. Every event is checked on its own (its
content against its hash, its stored link against the event before it), every problem is
counted, and the first MAX_LISTED are kept with a digest of all of them, so two walks can
tell whether they found the same set without either holding more than that in memory.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from reviewqueue.audit.hashing import GENESIS_HASH, event_hash, hashed_fields_of

# How many problems a report lists. The count and the digest cover all of them.
MAX_LISTED = 100
# How many lines of an export the walk reads ahead to find one moved down the file.
LOOKAHEAD = 100

PARTIAL_NOTE = ("Not a full export: each event's own hash checked; only a full export proves "
                "nothing was removed, and an event the file does not follow with the next one "
                "is vouched for only by its own hash, which anyone can compute again (check the "
                "file with --against-log where its log is).")


class Problem:
    """Codes for what is wrong at a bad event."""

    MISSING = "missing"  # a gap in seq: events were deleted
    OUT_OF_ORDER = "out_of_order"  # seq goes backwards or repeats, or starts below 1
    BROKEN_LINK = "broken_link"  # prev_hash is not the previous event's hash
    CHANGED = "changed"  # the event's content no longer matches its own hash
    TRUNCATED = "truncated"  # events a past verification saw at the end are gone
    REWRITTEN = "rewritten"  # the anchored event's hash differs from the one verified before
    NOT_IN_EXPORT = "anchor_not_in_export"  # a partial export lacks the anchored event


@dataclass(frozen=True)
class Anchor:
    """An event a past verification vouched for, and where that came from, in words that
    follow "the one ..." ("verified on 2026-10-01 02:30 UTC", "given with --anchor")."""

    seq: int
    hash: str
    source: str


@dataclass(frozen=True)
class Finding:
    """One problem at one event. `evidence` is not shown; it goes into the digest so that a
    second write to an event already known to be bad (edited again, re-linked elsewhere)
    changes the set of problems like a new one would."""

    seq: int
    problem: str
    detail: str
    evidence: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "problem": self.problem, "detail": self.detail}


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def problem_lines(problems: Sequence[Mapping[str, Any]], total: int) -> list[str]:
    """One line per listed problem (`Finding.as_dict()` or as a run stores them), and how
    many more there are when the list stopped short."""
    lines = [f"Event #{p['seq']}: {p['detail']}" for p in problems]
    if total > len(problems):
        lines.append(f"... and {total - len(problems)} more (only the first "
                     f"{len(problems)} are listed).")
    return lines


@dataclass(frozen=True)
class ChainReport:
    checked: int  # events read
    last_seq: int | None  # the last event read in order: checked up to here
    last_hash: str
    problems: tuple[Finding, ...] = ()  # the first MAX_LISTED, in the order they were found
    problem_count: int = 0  # all of them
    digest: str = ""  # of all of them; empty when there are none
    first_seq: int | None = None
    absent: int = 0  # a partial export: events between its first and last that it lacks
    links_checked: int = 0
    anchor: Anchor | None = None
    anchor_matched: bool = False
    # The events of `anchor` and of the anchors given with it (same source) that held.
    anchors_matched: tuple[int, ...] = ()
    may_be_partial: bool = False  # an export, which may hold only some events
    # Every anchor checked (`anchor` and any others) was there with its hash: only then may
    # the end of this walk serve as the next walk's anchor.
    anchors_held: bool = True

    @property
    def ok(self) -> bool:
        return self.problem_count == 0

    @property
    def partial(self) -> bool:
        """The rows do not start at #1 or skip events, and the walk was told that may be
        fine (a filtered export); on the table a gap is a MISSING problem instead."""
        return self.may_be_partial and (self.absent > 0 or (self.first_seq or 1) > 1)

    @property
    def first_bad_seq(self) -> int | None:
        return self.problems[0].seq if self.problems else None

    @property
    def problem(self) -> str:
        return self.problems[0].problem if self.problems else ""

    def describe(self) -> str:
        """One paragraph: intact or not, the first bad event, how many problems, how far the
        walk got. The problems themselves are listed apart (`problem_lines`)."""
        if self.ok:
            if not self.checked:
                return "The audit log is empty: nothing to verify."
            if self.partial:
                return f"{self._partial_text()} {self._all_intact()}"
            every = "The one event checks" if self.checked == 1 else \
                f"All {self.checked} events check"
            text = f"{every} out, up to event #{self.last_seq} (hash {self.last_hash[:12]})."
            return f"{text} {self._anchor_text()}".rstrip()
        first = self.problems[0]
        text = (f"Event #{first.seq} is the first bad event: {first.detail} "
                f"{plural(self.problem_count, 'problem')} in all. ")
        if self.checked:
            text += (f"Checked {plural(self.checked, 'event')}, "
                     f"up to event #{self.last_seq}.")
        else:
            text += "No event was there to check."
        if self.partial:
            text += f" {self._partial_text()}"
        return text

    def problem_lines(self) -> list[str]:
        return problem_lines([f.as_dict() for f in self.problems], self.problem_count)

    def _partial_text(self) -> str:
        assert self.first_seq is not None
        lacks = []
        if self.first_seq > 1:
            lacks.append(f"the {plural(self.first_seq - 1, 'event')} before #{self.first_seq}")
        if self.absent:
            lacks.append(f"{plural(self.absent, 'event')} between")
        holds = (f"event #{self.first_seq}" if self.checked == 1 else
                 f"{self.checked} events from #{self.first_seq} to #{self.last_seq}")
        return f"{PARTIAL_NOTE} It holds {holds}, without {' and '.join(lacks)}."

    def _all_intact(self) -> str:
        if self.checked == 1:
            return f"Its one event matches its own hash. {self._anchor_text()}".rstrip()
        if not self.links_checked:
            links = "no two of them follow each other, so no link could be checked."
        elif self.links_checked == 1:
            links = "the 1 link between consecutive events holds."
        else:
            links = f"the {self.links_checked} links between consecutive events hold."
        return (f"All {self.checked} events match their own hash, and {links} "
                f"{self._anchor_text()}").rstrip()

    def _anchor_text(self) -> str:
        if self.anchor is None or not self.anchor_matched:
            return ""
        return " ".join(f"Event #{seq} still has the hash {self.anchor.source}."
                        for seq in self.anchors_matched or (self.anchor.seq,))


class _Findings:
    """Counts every problem and hashes all of them, but keeps only the first few."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept: list[Finding] = []
        self.count = 0
        self._digest = hashlib.sha256()

    def add(self, seq: int, problem: str, detail: str, evidence: str = "") -> None:
        self.count += 1
        self._digest.update(f"{seq}:{problem}:{evidence}\n".encode())
        if len(self.kept) < self.limit:
            self.kept.append(Finding(seq, problem, detail, evidence))

    def digest(self) -> str:
        return self._digest.hexdigest() if self.count else ""


def walk(rows: Iterable[Mapping[str, Any]], *, anchor: Anchor | None = None,
         also: Sequence[Anchor] = (), allow_partial: bool = False, lines: bool = False,
         limit: int = MAX_LISTED) -> ChainReport:
    """Check every event, going on past bad ones, and report every problem found.

    For each event, in order: its seq follows the one before (a gap means events were
    deleted; going backwards or repeating means it was inserted or moved); where it follows
    directly, its stored prev_hash is the stored hash of the event before (otherwise something
    before it was changed and re-hashed, or it was inserted or moved); and the hash of its
    own canonical content equals its stored hash (otherwise it was edited). The anchor, when
    given, must be there with the same hash, and so must every anchor in `also` (the summary
    speaks of `anchor`, and of those of `also` given the same way; a broken one of `also` is a
    problem like any other).

    `allow_partial` is for an export, which may hold only the events of a search: a gap is
    then not a problem but something the file lacks, and the report says it is not a full
    export. Links are checked only between events that follow each other directly.

    `lines` is for an export too: the rows are a file's lines in the file's order, which may
    have been changed. A line moved up or down (by up to LOOKAHEAD lines) is then named as
    moved, and walked in its place, rather than taken for events deleted and inserted.

    Memory stays flat: the rows are read once, as they come.
    """
    found = _Findings(limit)
    prev_seq = 0  # the last event read in order, which the next one should follow
    prev_hash = GENESIS_HASH
    first_seq: int | None = None
    checked = absent = links = 0
    anchors = [a for a in (anchor, *also) if a is not None]
    by_seq: dict[int, list[Anchor]] = {}
    for one in anchors:
        by_seq.setdefault(one.seq, []).append(one)
    seen: set[Anchor] = set()
    held: set[Anchor] = set()

    def check(row: Mapping[str, Any]) -> None:
        nonlocal prev_seq, prev_hash, first_seq, checked, absent, links
        seq = int(row["seq"])
        stored = row["hash"]
        linked_to = row["prev_hash"]
        checked += 1
        expected = prev_seq + 1
        if seq < expected:
            where = (f"it comes after event #{prev_seq} (seq must go up by one)" if prev_seq
                     else "its seq is below 1, before the first event")
            found.add(seq, Problem.OUT_OF_ORDER, f"{where}: it was inserted or moved.", stored)
        elif seq > expected and allow_partial:
            absent += seq - expected if prev_seq else 0
        elif seq > expected:
            missing = (f"event #{expected} is" if seq == expected + 1
                       else f"events #{expected} to #{seq - 1} are")
            found.add(seq, Problem.MISSING,
                      f"{missing} missing before it (deleted from the log).", str(expected))
        else:
            links += 1
            if linked_to != prev_hash:
                follows = f"event #{prev_seq}" if prev_seq else "the start of the chain"
                found.add(seq, Problem.BROKEN_LINK,
                          f"it does not link to {follows}: an earlier event was changed and "
                          "re-hashed, or this event was inserted or moved.",
                          f"{prev_hash}>{linked_to}")
        fields = hashed_fields_of(row)
        computed = event_hash(fields, linked_to)
        if computed != stored:
            # Two events whose numbers were swapped each match their hash under the other's
            # number: they were reordered, not edited.
            was = next((other for other in (seq + 1, seq - 1)
                        if event_hash({**fields, "seq": other}, linked_to) == stored), None)
            if was is None:
                found.add(seq, Problem.CHANGED,
                          "its content no longer matches its hash: the event was edited.",
                          computed)
            else:
                found.add(seq, Problem.OUT_OF_ORDER,
                          f"it is event #{was} numbered #{seq} (its content matches its hash "
                          f"as #{was}): the events were reordered, not edited.", computed)
        for one in by_seq.get(seq, ()):
            if one in seen:
                continue
            seen.add(one)
            if stored == one.hash:
                held.add(one)
            else:
                found.add(seq, Problem.REWRITTEN,
                          f"its hash differs from the one {one.source}: the chain up to "
                          "here was rewritten and re-hashed.", stored)
        # An event out of order is checked but does not become the one the next must follow:
        # the events around it are judged against each other, not against the intruder.
        if seq >= expected:
            prev_seq, prev_hash = seq, stored
            if first_seq is None:
                first_seq = seq

    if not lines:  # the table, read in seq order: an event is out of place only by its seq
        for row in rows:
            check(row)
    else:
        # A line moved up the file (two lines swapped, say) is held back until its place comes,
        # and a line moved down is taken from the lines read ahead when its place comes: either is
        # named once, as moved. Walked where it stands, it would make the events it jumped look
        # deleted, then one of them out of order.
        source = iter(rows)
        ahead: deque[Mapping[str, Any]] = deque()  # read, not yet walked: at most LOOKAHEAD
        ahead_seqs: Counter[int] = Counter()

        def walked(seq: int) -> None:  # a line read ahead leaves the buffer (memory stays flat)
            ahead_seqs[seq] -= 1
            if not ahead_seqs[seq]:
                del ahead_seqs[seq]

        def take() -> Mapping[str, Any] | None:
            if not ahead:
                return next(source, None)
            row = ahead.popleft()
            walked(int(row["seq"]))
            return row

        def read_ahead() -> None:
            while len(ahead) < LOOKAHEAD and (row := next(source, None)) is not None:
                ahead.append(row)
                ahead_seqs[int(row["seq"])] += 1

        early: Mapping[str, Any] | None = None
        row = take()
        while row is not None:
            seq = int(row["seq"])
            if early is not None and seq > int(early["seq"]):
                check(early)
                early = None
            read_ahead()
            upcoming = ahead[0] if ahead else None
            if early is None and upcoming is not None and prev_seq < int(upcoming["seq"]) < seq:
                found.add(seq, Problem.OUT_OF_ORDER,
                          f"its line was moved up, above event #{upcoming['seq']}'s: the lines "
                          "were reordered, not deleted.", f"moved>{upcoming['seq']}")
                early, row = row, take()
                continue
            if not allow_partial and seq > prev_seq + 1 and ahead_seqs[prev_seq + 1] > 0:
                at = next(i for i, line in enumerate(ahead) if int(line["seq"]) == prev_seq + 1)
                late = ahead[at]
                del ahead[at]
                walked(prev_seq + 1)
                above = (ahead[at - 1] if at else row)["seq"]
                found.add(prev_seq + 1, Problem.OUT_OF_ORDER,
                          f"its line was moved down, below event #{above}'s: the lines were "
                          "reordered, not deleted.", f"moved<{above}")
                check(late)
                continue  # the line read is walked again, now that the one before it was
            check(row)
            row = take()
        if early is not None:
            check(early)

    for one in anchors:
        if one in seen:
            continue
        seen.add(one)
        if one.seq > prev_seq and not allow_partial:
            ends = (f"the chain ends at event #{prev_seq}, so events after #{prev_seq} were "
                    "removed." if prev_seq else "no event is left: every event was removed.")
            found.add(one.seq, Problem.TRUNCATED,
                      f"the anchor ({one.source}) names it, but it is not there: {ends}")
        elif allow_partial:
            # On the table a gap over the anchor is already a MISSING problem; a partial
            # export simply lacks it (or ends before it: a search's export ends at its last
            # match), and then cannot vouch for it.
            found.add(one.seq, Problem.NOT_IN_EXPORT,
                      f"the anchor ({one.source}) names it, but this file does not hold "
                      "it, so it cannot be checked against the anchor.")

    return ChainReport(
        checked=checked,
        last_seq=prev_seq or None,
        last_hash=prev_hash if prev_seq else "",
        problems=tuple(found.kept),
        problem_count=found.count,
        digest=found.digest(),
        first_seq=first_seq,
        may_be_partial=allow_partial,
        absent=absent,
        links_checked=links,
        anchor=anchor,
        anchor_matched=anchor is not None and anchor in held,
        anchors_matched=tuple(sorted({one.seq for one in held if anchor is not None
                                      and one.source == anchor.source})),
        anchors_held=len(held) == len(set(anchors)),
    )


# --- Shown on a page ----------------------------------------------------------------------------
#
# A run stores its summary and the details of its problems in English (`describe()`, `walk()`):
# verify_audit prints them, alerts and logs repeat them. A page shows them in the reader's
# language: `localized_detail()` and `localized_problem()` recognise each sentence those two
# functions write and give it back through gettext, with the same numbers. Text they do not
# recognise (a run stored by an older version) is shown as stored.

def _localized_source(source: str) -> str:
    """Where an anchor came from ("verified on 2026-10-01 02:30 UTC", "given with --anchor"),
    in words that follow "the one ..."."""
    if match := re.fullmatch(r"verified on (?P<when>.+) UTC", source):
        try:
            when = timezone.localtime(dt.datetime.strptime(match["when"], "%Y-%m-%d %H:%M")
                                      .replace(tzinfo=dt.UTC))
        except ValueError:
            return source
        # In the page's time zone, as every other time on it.
        return _("verified on %(when)s") % {"when": f"{when:%Y-%m-%d %H:%M} {when.tzname()}"}
    if source == "given with --anchor":
        return _("given with --anchor")
    return source


def _localized_finding(detail: str) -> str | None:
    """One problem's detail as `walk()` writes it, or None when it is not one of those."""
    if match := re.fullmatch(r"it comes after event #(?P<prev>\d+) \(seq must go up by one\): "
                             r"it was inserted or moved\.", detail):
        return _("it comes after event #%(prev)s (seq must go up by one): it was inserted or "
                 "moved.") % {"prev": match["prev"]}
    if detail == "its seq is below 1, before the first event: it was inserted or moved.":
        return _("its seq is below 1, before the first event: it was inserted or moved.")
    if match := re.fullmatch(r"event #(?P<seq>\d+) is missing before it \(deleted from the "
                             r"log\)\.", detail):
        return _("event #%(seq)s is missing before it (deleted from the log).") % {
            "seq": match["seq"]}
    if match := re.fullmatch(r"events #(?P<first>\d+) to #(?P<last>\d+) are missing before it "
                             r"\(deleted from the log\)\.", detail):
        return _("events #%(first)s to #%(last)s are missing before it (deleted from the "
                 "log).") % {"first": match["first"], "last": match["last"]}
    if match := re.fullmatch(r"it does not link to event #(?P<prev>\d+): an earlier event was "
                             r"changed and re-hashed, or this event was inserted or moved\.",
                             detail):
        return _("it does not link to event #%(prev)s: an earlier event was changed and "
                 "re-hashed, or this event was inserted or moved.") % {"prev": match["prev"]}
    if detail == ("it does not link to the start of the chain: an earlier event was changed and "
                  "re-hashed, or this event was inserted or moved."):
        return _("it does not link to the start of the chain: an earlier event was changed and "
                 "re-hashed, or this event was inserted or moved.")
    if match := re.fullmatch(r"it is event #(?P<was>\d+) numbered #(?P<seq>-?\d+) \(its content "
                             r"matches its hash as #(?P=was)\): the events were reordered, "
                             r"not edited\.", detail):
        return _("it is event #%(was)s numbered #%(seq)s (its content matches its hash as "
                 "#%(was)s): the events were reordered, not edited.") % {
            "was": match["was"], "seq": match["seq"]}
    if detail == "its content no longer matches its hash: the event was edited.":
        return _("its content no longer matches its hash: the event was edited.")
    if match := re.fullmatch(r"its hash differs from the one (?P<source>.+): the chain up to "
                             r"here was rewritten and re-hashed\.", detail):
        return _("its hash differs from the one %(source)s: the chain up to here was rewritten "
                 "and re-hashed.") % {"source": _localized_source(match["source"])}
    if match := re.fullmatch(r"the anchor \((?P<source>.+)\) names it, but it is not there: "
                             r"the chain ends at event #(?P<prev>\d+), so events after "
                             r"#(?P=prev) were removed\.", detail):
        return _("the anchor (%(source)s) names it, but it is not there: the chain ends at "
                 "event #%(prev)s, so events after #%(prev)s were removed.") % {
            "source": _localized_source(match["source"]), "prev": match["prev"]}
    if match := re.fullmatch(r"the anchor \((?P<source>.+)\) names it, but it is not there: "
                             r"no event is left: every event was removed\.", detail):
        return _("the anchor (%(source)s) names it, but it is not there: no event is left: "
                 "every event was removed.") % {"source": _localized_source(match["source"])}
    if match := re.fullmatch(r"the anchor \((?P<source>.+)\) names it, but this file does not "
                             r"hold it, so it cannot be checked against the anchor\.", detail):
        return _("the anchor (%(source)s) names it, but this file does not hold it, so it "
                 "cannot be checked against the anchor.") % {
            "source": _localized_source(match["source"])}
    return None


def localized_problem(detail: str) -> str:
    """A problem's detail (`Finding.detail`, as a run stores it) in the active language."""
    return _localized_finding(detail) or detail


# What each problem code means, for people; the code itself stays in stored runs and exports.
PROBLEM_LABELS: dict[str, Any] = {
    Problem.MISSING: gettext_lazy("Events missing"),
    Problem.OUT_OF_ORDER: gettext_lazy("Out of order"),
    Problem.BROKEN_LINK: gettext_lazy("Broken link"),
    Problem.CHANGED: gettext_lazy("Content changed"),
    Problem.TRUNCATED: gettext_lazy("Events removed from the end"),
    Problem.REWRITTEN: gettext_lazy("Chain rewritten"),
    Problem.NOT_IN_EXPORT: gettext_lazy("Anchor not in the export"),
}


def problem_label(code: str) -> str:
    label = PROBLEM_LABELS.get(code)
    return str(label) if label is not None else code


_STILL_HAS = re.compile(r"Event #(?P<seq>\d+) still has the hash (?P<source>.+)\.")


def _localized_anchor(text: str) -> str | None:
    """`ChainReport._anchor_text()`: empty, or that each anchored event kept its hash."""
    if not text:
        return ""
    matches = [_STILL_HAS.fullmatch(sentence)
               for sentence in re.split(r"(?<=\.) (?=Event #)", text)]
    if not all(matches):
        return None
    return " ".join(_("Event #%(seq)s still has the hash %(source)s.") % {
        "seq": match["seq"], "source": _localized_source(match["source"])}
        for match in matches if match is not None)


_ALL_CHECK_OUT = re.compile(r"(?:All (?P<checked>\d+) events check|(?P<one>The one event) "
                            r"checks) out, up to event #(?P<last>\d+) "
                            r"\(hash (?P<hash>[0-9a-f]*)\)\.(?: (?P<anchor>.+))?")
_FIRST_BAD = re.compile(r"Event #(?P<seq>-?\d+) is the first bad event: (?P<detail>.*) "
                        r"(?P<count>\d+) (?P<noun>problems?) in all\. "
                        r"(?:Checked (?P<checked>\d+) (?:events?), up to event #(?P<last>\d+)\."
                        r"|(?P<none>No event was there to check\.))")


def localized_detail(detail: str) -> str:
    """A run's summary (`ChainReport.describe()` of a walk of the table, as the run stores it)
    in the active language. In English it reads exactly as stored."""
    if detail == "The audit log is empty: nothing to verify.":
        return _("The audit log is empty: nothing to verify.")
    if match := _ALL_CHECK_OUT.fullmatch(detail):
        anchor = _localized_anchor(match["anchor"] or "")
        if anchor is not None:
            values = {"checked": match["checked"], "last": match["last"], "hash": match["hash"]}
            if match["one"]:
                text = _("The one event checks out, up to event #%(last)s (hash %(hash)s).") % (
                    values)
            else:
                text = _("All %(checked)s events check out, up to event #%(last)s "
                         "(hash %(hash)s).") % values
            return f"{text} {anchor}".rstrip()
    if match := _FIRST_BAD.fullmatch(detail):
        finding = _localized_finding(match["detail"])
        if finding is not None:
            values = {"seq": match["seq"], "detail": finding, "count": match["count"]}
            if match["noun"] == "problem":
                text = _("Event #%(seq)s is the first bad event: %(detail)s %(count)s problem "
                         "in all.") % values
            else:
                text = _("Event #%(seq)s is the first bad event: %(detail)s %(count)s problems "
                         "in all.") % values
            if match["none"]:
                none = _("No event was there to check.")
                return f"{text} {none}"
            checked = {"checked": match["checked"], "last": match["last"]}
            if match["checked"] == "1":
                more = _("Checked %(checked)s event, up to event #%(last)s.") % checked
            else:
                more = _("Checked %(checked)s events, up to event #%(last)s.") % checked
            return f"{text} {more}"
    return detail
