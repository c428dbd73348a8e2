"""Template helpers of the reviewer's workspace: relative times and the gate's words."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import timesince, timeuntil
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from reviewqueue.reviews import labels

register = template.Library()

# Django's timesince joins its units with gettext(", "). Named here, it is in the project's
# catalog, which gives it in Japanese as a space: "3日 22時間", as `duration` writes it.
gettext_noop(", ")


@register.filter
def ago(value: datetime | None) -> str:
    """'3 days ago' (or 'just now'), in the active language; a moment still to come (a
    source's own date, say) is 'in 3 days', not 'just now'."""
    if value is None:
        return ""
    past = (timezone.now() - value).total_seconds()
    if past < -60:
        return _("in %(time)s") % {"time": timeuntil(value, depth=1)}
    if past < 60:
        return _("just now")
    return _("%(time)s ago") % {"time": timesince(value, depth=1)}


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
        until = f"{f.valid_until:%Y-%m-%d}" if f.valid_until else no_end
        out.append(f'<li class="fact state-{e(f.state)}"><code>{e(f.what)} = '
                   f'{e(f.shown_value)}</code> <span class="validity">{f.valid_from:%Y-%m-%d} → '
                   f'{until}</span> <span class="state">{e(f.phrase)}</span></li>')
    out.append("</ul>")
    return "".join(out)
