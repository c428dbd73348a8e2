"""Template helpers of the reviewer's workspace: relative times, the gate's words, and the
parts of the item page drawn once per citation or claim, written here rather than in template
loops (over hundreds of them a loop cost more than the rest of the page). Every value is
escaped, as a template would; tests/perf holds each part to the loop it replaced."""

from __future__ import annotations

import re
from datetime import datetime, time
from typing import Any

from django import template
from django.utils import timezone
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import timesince, timeuntil
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop, pgettext

from reviewqueue.reviews import labels

register = template.Library()

# Django's timesince joins its units with gettext(", "). Named here, it is in the project's
# catalog, which gives it in Japanese as a space: "3日 22時間", as `duration` writes it.
gettext_noop(", ")


@register.filter
def ago(value: datetime | None) -> str:
    """'3 days ago' (or 'just now'), in the active language; a moment still to come (a
    source's own date, say) is 'in 3 days', not 'just now'. A moment of an earlier day is
    counted in calendar days of the time zone, as validity is ("expired 2 days ago"): 23:59
    the day before yesterday is '2 days ago' beside its date, not the '1 day' of its hours."""
    if value is None:
        return ""
    now = timezone.now()
    past = (now - value).total_seconds()
    if past < -60:
        return _("in %(time)s") % {"time": timeuntil(value, depth=1)}
    if past < 60:
        return _("just now")
    if timezone.localdate(value) < timezone.localdate(now):
        value, now = _midnight(value), _midnight(now)
    return _("%(time)s ago") % {"time": timesince(value, now, depth=1)}


def _midnight(moment: datetime) -> datetime:
    """The start of `moment`'s day in the current time zone."""
    return timezone.make_aware(datetime.combine(timezone.localdate(moment), time.min))


@register.filter
def held_for(value: datetime | None) -> str:
    """How long an item has waited: '2 days, 3 hours'."""
    if value is None:
        return ""
    if (timezone.now() - value).total_seconds() < 60:
        return _("less than a minute")  # timesince would say "0 minutes"
    return timesince(value, depth=2)


@register.filter
def time_left(value: datetime | None) -> str:
    if value is None:
        return ""
    return timeuntil(value, depth=1)


@register.filter
def reason_label(code: str) -> str:
    return labels.reason_label(code)


@register.filter
def verdict_reason_label(code: str) -> str:
    """A verdict's reason: "Supported" for a candidate, where reason_label, which names why an
    item waits in the queue, would say "Audit sample"."""
    return labels.verdict_reason_label(code)


@register.filter
def decision_label(code: str) -> str:
    return labels.decision_label(code)


@register.filter
def reason_tone(code: str) -> str:
    """A CSS tone per reason: what a reviewer must fix first stands out."""
    if code == "supported":
        return "sample"
    if code in ("conflicting_sources", "superseded_revision", "noncurrent_citation",
                "invalid_metadata"):
        return "review"
    return "abstain"


@register.filter
def show_value(value: Any) -> str:
    return labels.show_value(value)


_BREAK_AFTER = re.compile(r"([_./-])(?=.)")


@register.filter
def word_breaks(value: object) -> SafeString:
    """The value escaped, with a line-break opportunity after each _ . / - inside it: a long
    key (data_retention_days) in a narrow column wraps between its words, never mid-word.
    <wbr> adds no character, so a copied key stays whole."""
    return mark_safe(_BREAK_AFTER.sub(r"\1<wbr>", str(conditional_escape(value))))


@register.simple_tag
def citation_card(cite: str, c: Any) -> SafeString:
    """A citation expandable in place, written here rather than in a template because the
    item page draws one per citation, and an include costs ten times as much. As in a
    template, every value is escaped, and so is a translated text with no value in it."""
    e = conditional_escape
    show = e(_("Show the cited passage"))
    out = [f'<details class="cite" data-cite="{e(cite)}"><summary title="{show}">[{e(cite)}]'
           '</summary><div class="cite-card">']
    if not c:
        missing = _("[%(cite)s] is not among the retrieved sources.") % {"cite": e(cite)}
        out.append(f'<p class="warn-text">{missing}</p>')
    elif c.status == "no_document":
        missing = _("The store has not received document %(key)s.") % {"key": e(c.document_key)}
        out.append(f'<p class="warn-text">{missing}</p>')
    else:
        out.append(_citation_source(c))
        if c.passage_restricted:
            restricted = e(_("That revision was restricted; you may not read its text."))
            out.append(f'<p class="muted">{restricted}</p>')
        elif c.passage:
            p = c.passage
            before = f'<span class="context">…{e(p.before)} </span>' if p.before else ""
            after = f'<span class="context"> {e(p.after)}…</span>' if p.after else ""
            out.append(f"{_states_now(c) if c.passage_now else ''}<blockquote class=\"passage\">"
                       f"{before}<mark>{e(p.text)}</mark>{after}</blockquote>")
        elif c.status != "no_passage":
            none = e(_("No passage is cited."))
            out.append(f'<p class="muted">{none}</p>')
        if c.facts:
            out.append(_citation_facts(c))
    out.append("</div></details>")
    return mark_safe("".join(out))


def _citation_source(c: Any) -> str:
    """The cited document's title, id, revision and dates."""
    e = conditional_escape
    title = (f'<a href="{e(c.url)}" class="doc-title" target="_blank" '
             f'rel="noopener noreferrer">{e(c.title)}</a>' if c.url
             else f'<span class="doc-title">{e(c.title)}</span>')
    revision = _("Revision %(revision)s") % {"revision": e(c.revision)}
    out = [f'<header>{title} <span class="doc-key">{e(c.document_key)}</span></header>'
           f'<p class="meta">{revision}']
    if c.updated_at:
        local = timezone.localtime(c.updated_at)
        # The day itself, as the side-by-side view gives it: "6 months ago" alone is vague.
        updated = _("updated %(day)s (%(ago)s)") % {"day": f"{local:%Y-%m-%d}",
                                                    "ago": e(ago(c.updated_at))}
        out.append(f' · <time datetime="{local.isoformat()}" title="{local:%Y-%m-%d %H:%M}">'
                   f"{updated}</time>")
    if c.superseded:
        replaced = _("Replaced by revision %(current)s") % {"current": e(c.current_revision)}
        if c.current_updated_at:
            replaced += " (" + _("updated %(ago)s") % {"ago": e(ago(c.current_updated_at))} + ")"
        out.append(f'<br><span class="warn-text">{replaced}</span>')
    if c.status == "withdrawn":
        withdrawn = e(_("This document has been withdrawn."))
        out.append(f'<br><span class="warn-text">{withdrawn}</span>')
    if c.status == "not_received":
        unknown = e(_("The store never received the revision the answer was taken from."))
        out.append(f'<br><span class="warn-text">{unknown}</span>')
    if c.status == "no_passage":
        missing = _("This revision has no passage %(span)s: the answer quotes something its "
                    "source does not contain.") % {"span": e(c.span)}
        out.append(f'<br><span class="warn-text">{missing}</span>')
    out.append("</p>")
    return "".join(out)


def _citation_again(cite: str) -> str:
    """A chip of a source already cited above: item.js fills its card from the first one."""
    e = conditional_escape
    show = e(_("Show the cited passage"))
    above = _("The passage is shown where [%(cite)s] is first cited, above.") % {
        "cite": e(cite)}
    return (f'<details class="cite" data-cite="{e(cite)}" data-cited-above>'
            f'<summary title="{show}">[{e(cite)}]</summary>'
            f'<div class="cite-card"><p class="muted">{above}</p></div></details>')


@register.simple_tag
def answer_sentences(sentences: list[Any]) -> SafeString:
    """The answer, a list item per sentence, each citation expandable where its marker was
    (citation_card) and no whitespace between the parts: the spaces shown are the answer's
    own. Written here as citation_card is: an answer cites up to hundreds of sources."""
    e = conditional_escape
    if not sentences:
        empty = _("The answer is empty.")  # asked for outside f-strings: see _CARD_TERMS
        return mark_safe(f'<li class="muted">{e(empty)}</li>')
    no_citation = _("no citation")
    no_cite = f'\n<span class="no-cite">{e(no_citation)}</span>'
    # A source's card is written at its first marker only: a passage runs to 100,000
    # characters and a 200 KB answer to thousands of markers, and a card at each made pages of
    # gigabytes. The later chips open on a copy of it (item.js).
    written: set[str] = set()
    out = []
    for sentence in sentences:
        drawn = []
        for part in sentence.parts:
            if not part.cite:
                drawn.append(f'<span class="text">{e(part.text)}</span>')
            elif part.cite in written:
                drawn.append(_citation_again(part.cite))
            else:
                written.add(part.cite)
                drawn.append(citation_card(part.cite, part.citation))
        parts = "".join(drawn)
        out.append(f'<li class="sentence" data-sentence tabindex="-1">{parts}'
                   f'{"" if sentence.cites else no_cite}\n</li>')
    return mark_safe("\n".join(out))


@register.simple_tag
def claim_table_rows(claims: list[Any]) -> SafeString:
    """A row per claim: its subject, key, value and cited id, the fact of its source that
    supports it, with validity and state, and whether it holds (✓), fails (✗), cannot be
    checked (?) or holds while the gate found against it (⚠). On a phone each row is a card
    whose cells name their column (data-label)."""
    e = conditional_escape
    col = {name: e(label) for name, label in (
        ("subject", _("Subject")), ("key", _("Key")), ("value", _("Value")),
        ("cited", _("Cited")), ("fact", _("Supporting fact")), ("holds", _("Holds?")))}
    separator = pgettext("between the findings in a sentence", "; ")
    no_end = e(_("no end"))
    out = []
    for claim in claims:
        kind = ("disputed" if claim.disputed else "holds" if claim.holds
                else "unchecked" if not claim.checked else "fails")
        fact = claim.fact
        if fact:
            until = fact.valid_until.isoformat() if fact.valid_until else no_end
            supported = (f"<code>{word_breaks(fact.what)} = {e(fact.shown_value)}</code><br>"
                         f'<span class="muted">{fact.valid_from.isoformat()} → {until} · '
                         f"{e(fact.phrase)}</span>")
        else:
            supported = "—"
        if claim.disputed:
            found = _("Its source holds it, but the gate found: %(found)s.") % {
                "found": e(separator.join(claim.disputed))}
            holds = f'<span class="warn-text" data-disputed>⚠ {found}</span>'
        elif claim.holds:
            holds = f'<span class="ok">✓ {e(claim.note)}</span>'
        elif not claim.checked:
            why = _("Cannot be checked. %(why)s") % {"why": e(claim.note)}
            holds = f'<span class="warn-text" data-unchecked>? {why}</span>'
        else:
            holds = f'<span class="bad">✗ {e(claim.note)}</span>'
        out.append(
            f'<tr class="{kind}"><td data-label="#">{claim.number}</td>'
            f'<td data-label="{col["subject"]}">{e(claim.subject or "—")}</td>'
            f'<td data-label="{col["key"]}"><code class="key">{word_breaks(claim.key)}</code></td>'
            f'<td data-label="{col["value"]}"><code>{e(claim.shown_value)}</code></td>'
            f'<td data-label="{col["cited"]}">[{e(claim.cite)}]</td>'
            f'<td class="wide" data-label="{col["fact"]}">{supported}</td>'
            f'<td class="wide" data-label="{col["holds"]}">{holds}</td></tr>')
    return mark_safe("\n".join(out))


# The words of a conflict's source card. Asked for here, not inside the f-strings that write
# the card: makemessages reads no f-string, and a word asked for only there falls out of the
# catalogue at its next run (tests/reviews/test_translations.py checks every one is in it).
_CARD_TERMS = {
    "subject": gettext_lazy("Subject"), "revision": gettext_lazy("Revision"),
    "valid": gettext_lazy("Valid"), "no_end": gettext_lazy("no end"),
    "owner": gettext_lazy("Owner"), "updated": gettext_lazy("Updated"),
}


@register.simple_tag
def conflict_source_card(src: Any) -> SafeString:
    """One source of a conflict, beside the others: its value, the fact's subject, validity
    and state, the revision, owner, update and cited passage. Written here as citation_card
    is: a conflict on a key 50 retrieved documents state shows 50 of them."""
    e = conditional_escape
    if src.restricted:
        hidden = _("Another source that you may not read gives a different value.")
        return mark_safe(f'<article class="source-card"><p class="muted">{e(hidden)}</p>'
                         "</article>")
    term = {name: e(text) for name, text in _CARD_TERMS.items()}
    fact = src.fact
    cites = "".join(f"[{e(cite)}] " for cite in src.cites)
    out = [f'<article class="source-card"><header><strong>{e(src.title)}</strong> '
           f'<span class="doc-key">{cites}{e(src.document_key)}</span></header>'
           f'<p class="value">{e(fact.shown_value) if fact else "—"}</p><dl class="compact">']
    if fact and fact.subject:
        out.append(f'<dt>{term["subject"]}</dt><dd data-subject>{e(fact.subject)}</dd>')
    out.append(f'<dt>{term["revision"]}</dt><dd>{e(src.revision)}</dd>')
    if fact:
        until = fact.valid_until.isoformat() if fact.valid_until else term["no_end"]
        out.append(f'<dt>{term["valid"]}</dt><dd>{fact.valid_from.isoformat()} → {until} '
                   f'<span class="state state-{e(fact.state)}">{e(fact.phrase)}</span></dd>')
    updated = (f"{timezone.localtime(src.updated_at).date().isoformat()} "
               f"({e(ago(src.updated_at))})" if src.updated_at else "")
    out.append(f'<dt>{term["owner"]}</dt><dd>{e(src.owner)}</dd>'
               f'<dt>{term["updated"]}</dt><dd>{updated}</dd></dl>')
    if src.passage:
        out.append(f'<blockquote class="passage"><mark>{e(src.passage.text)}</mark></blockquote>')
    out.append("</article>")
    return mark_safe("".join(out))


def _states_now(c: Any) -> str:
    """Said before a passage or facts of a revision other than the one the answer quoted."""
    states = _("What revision %(current)s states now:") % {
        "current": conditional_escape(c.current_revision)}
    return f'<p class="meta">{states}</p>'


def _citation_facts(c: Any) -> str:
    """The facts a citation stands for, each with its validity and its state."""
    e = conditional_escape
    no_end = e(_("no end"))
    out = [_states_now(c) if c.facts_now and not c.passage_now else "", '<ul class="facts">']
    for f in c.facts:
        until = f.valid_until.isoformat() if f.valid_until else no_end
        out.append(f'<li class="fact state-{e(f.state)}"><code>{e(f.what)} = '
                   f'{e(f.shown_value)}</code> <span class="validity">{f.valid_from.isoformat()} '
                   f'→ {until}</span> <span class="state">{e(f.phrase)}</span></li>')
    out.append("</ul>")
    return "".join(out)


# The claim editor's columns: (field, its heading on the page, the label a screen reader gives
# each input: "Key of claim 2", whether the field's errors are shown after it).
_CLAIM_COLUMNS = (
    ("subject", gettext_lazy("Subject"), gettext_lazy("Subject of claim"), True),
    ("key", gettext_lazy("Key"), gettext_lazy("Key of claim"), True),
    ("value", gettext_lazy("Value"), gettext_lazy("Value of claim"), True),
    ("value_type", gettext_lazy("Type"), gettext_lazy("Type of claim"), False),
    ("cite", gettext_lazy("Cited"), gettext_lazy("Source cited by claim"), True),
    ("DELETE", gettext_lazy("Remove"), gettext_lazy("Remove claim"), False),
)


@register.simple_tag
def claim_edit_rows(rows: list[tuple[Any, dict[str, SafeString]]],
                    blank_row: int | None) -> SafeString:
    """The rows of the claim editor (`claim_rows`: each row's form, or None, and its inputs
    already written), written here for the reason citation_card is: a 50-claim answer's
    table took a template loop a fifth of the page's time. Each cell says its column's
    heading (data-label: on a narrow screen app.css lays each claim out as a block of
    labelled fields), and each input has a label a screen reader reads ("Key of claim 2")."""
    e = conditional_escape
    columns = [(name, e(heading), e(label), with_errors)
               for name, heading, label, with_errors in _CLAIM_COLUMNS]
    out = []
    for n, (form, inputs) in enumerate(rows):
        cells = []
        for name, heading, label, with_errors in columns:
            errors = form[name].errors if with_errors and form is not None else None
            cells.append(f'<td data-label="{heading}"><label class="visually-hidden" '
                         f'for="id_claims-{n}-{name}">{label} {n + 1}</label>{inputs[name]}'
                         f'{e(errors) if errors else ""}</td>')
        blank = " data-blank-row" if n == blank_row else ""
        out.append(f'<tr data-claim-row{blank}>{"".join(cells)}</tr>')
    return mark_safe("\n".join(out))
