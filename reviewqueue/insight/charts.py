"""Charts drawn on the server as inline SVG: no chart library, no script.

Colours and fonts come from classes styled in static/css/insight.css; the markup only uses
presentation attributes, so a strict Content-Security-Policy (no inline style or script) is
fine. Every label goes through escaping. Each chart has a <title> and an aria-label; the page
shows the same numbers in a table next to it. The few words the charts write themselves
("Nothing to show") are in the active language; callers pass translated titles and labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

NO_VALUE = "\u2013"  # an en dash: shown where there is no number


def percent(value: float | None, digits: int = 1) -> str:
    return NO_VALUE if value is None else f"{value * 100:.{digits}f}%"


# A phone's card is about this wide: its chart is drawn for it rather than scaled down from the
# wide one, whose text would shrink to a third of its size.
PHONE_WIDTH = 340


def _svg(width: int, height: int, title: str, body: list[str], fit: str = "wide") -> str:
    label = escape(title)
    # Drawn at its own size and only ever scaled down (max-width in the CSS), so the text of
    # every chart keeps about the same size whatever the width of its card. `fit` says which
    # screens show it: the CSS shows the "phone" drawing below 641 px, the "wide" one above.
    return (f'<svg class="chart" data-fit="{fit}" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-label="{label}" '
            f'xmlns="http://www.w3.org/2000/svg"><title>{label}</title>'
            + "".join(body) + "</svg>")


def _both(wide: str, phone: str) -> SafeString:
    # Safe: the markup is ours and every label and value inside it went through escape().
    return mark_safe(wide + phone)


def _nice_max(value: float) -> float:
    """A round upper bound for a share axis: 5%, 10%, 20%, 50% or 100%."""
    for bound in (0.05, 0.1, 0.2, 0.5):
        if value <= bound:
            return bound
    return 1.0


# How many parts each bound of `_nice_max` is drawn in, so that every tick is a whole percent.
_PARTS = {0.05: 5, 0.1: 5, 0.2: 4, 0.5: 5, 1.0: 4}


def _ticks(bound: float) -> list[float]:
    """The ticks of a share axis up to `bound` (from `_nice_max`): 0%, 1% ... 5%, or 0%, 10%
    ... 50%, never 12.5% shown as "12%"."""
    parts = _PARTS.get(bound, 4)
    return [bound * step / parts for step in range(parts + 1)]


def line_chart(points: Sequence[tuple[str, float | None]], *, title: str) -> SafeString:
    """Shares over time. A period without data leaves a gap in the line, not a zero."""
    return _both(_line(points, title, 1000, 240, "wide"),
                 _line(points, title, PHONE_WIDTH, 200, "phone"))


def _line(points: Sequence[tuple[str, float | None]], title: str, width: int, height: int,
          fit: str) -> str:
    left, right, top, bottom = 48, 12, 12, 28
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for _period, v in points if v is not None]
    y_max = _nice_max(max(values, default=0.0))
    n = len(points)

    def x(i: int) -> float:
        return left + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h * (1 - v / y_max)

    body = []
    for tick in _ticks(y_max):
        body.append(f'<line class="grid" x1="{left}" x2="{width - right}" '
                    f'y1="{y(tick):.1f}" y2="{y(tick):.1f}"/>')
        body.append(f'<text class="tick" x="{left - 6}" y="{y(tick) + 4:.1f}" '
                    f'text-anchor="end">{percent(tick, 0)}</text>')
    segment: list[str] = []
    segments: list[list[str]] = []
    for i, (_period, value) in enumerate(points):
        if value is None:
            if segment:
                segments.append(segment)
            segment = []
            continue
        segment.append(f"{x(i):.1f},{y(value):.1f}")
    if segment:
        segments.append(segment)
    for seg in segments:
        if len(seg) == 1:
            cx, cy = seg[0].split(",")
            body.append(f'<circle class="series" cx="{cx}" cy="{cy}" r="3"/>')
        else:
            body.append(f'<polyline class="series" fill="none" points="{" ".join(seg)}"/>')
    for i, (label, value) in enumerate(points):
        if value is not None:
            body.append(f'<circle class="dot" cx="{x(i):.1f}" cy="{y(value):.1f}" r="2.5">'
                        f'<title>{escape(label)}: {percent(value)}</title></circle>')
    # Label the first, middle and last periods; more would overlap on a narrow screen.
    for i in sorted({0, n // 2, n - 1}) if n else []:
        anchor = "start" if i == 0 else "end" if i == n - 1 else "middle"
        body.append(f'<text class="tick" x="{x(i):.1f}" y="{height - 8}" '
                    f'text-anchor="{anchor}">{escape(points[i][0])}</text>')
    if not values:
        empty = escape(_("No answers in this period"))
        body.append(f'<text class="empty" x="{width / 2}" y="{height / 2}" '
                    f'text-anchor="middle">{empty}</text>')
    return _svg(width, height, title, body, fit)


@dataclass(frozen=True)
class Bar:
    label: str
    value: float  # a share in 0..1, or a count when the chart is not a share chart
    note: str = ""


def bar_chart(bars: Sequence[Bar], *, title: str, share: bool = True) -> SafeString:
    """Horizontal bars, one per row, with the value printed at the end of each bar: each label
    beside its bar on a wide screen, above it on a phone."""
    return _both(_bars(bars, title, share, 520, 230, "wide"),
                 _bars(bars, title, share, PHONE_WIDTH, 0, "phone"))


def _bars(bars: Sequence[Bar], title: str, share: bool, width: int, label_w: int,
          fit: str) -> str:
    # label_w 0: the label goes on a line of its own above its bar.
    above = 16 if label_w == 0 else 0
    row, value_w, top = 26 + above, 90, 6
    height = top * 2 + row * max(len(bars), 1)
    plot_w = width - label_w - value_w
    biggest = max((b.value for b in bars), default=0.0)
    scale = _nice_max(biggest) if share else (biggest or 1.0)
    body = []
    for i, bar in enumerate(bars):
        y = top + i * row
        length = plot_w * (bar.value / scale) if scale else 0
        shown = percent(bar.value) if share else f"{bar.value:.0f}"  # a count
        if above:
            body.append(f'<text class="label" x="0" y="{y + 13}">{escape(bar.label)}</text>')
        else:
            body.append(f'<text class="label" x="{label_w - 8}" y="{y + 17}" '
                        f'text-anchor="end">{escape(bar.label)}</text>')
        body.append(f'<rect class="bar" x="{label_w}" y="{y + above + 5}" '
                    f'width="{length:.1f}" height="16" rx="2"><title>{escape(bar.label)}: '
                    f'{shown}</title></rect>')
        body.append(f'<text class="value" x="{label_w + length + 6:.1f}" y="{y + above + 17}">'
                    f'{escape(shown)}{(" " + escape(bar.note)) if bar.note else ""}</text>')
    if not bars:
        empty = escape(_("Nothing to show"))
        body.append(f'<text class="empty" x="{width / 2}" y="{top + 17}" '
                    f'text-anchor="middle">{empty}</text>')
    return _svg(width, height, title, body, fit)


@dataclass(frozen=True)
class Interval:
    label: str
    value: float | None
    low: float | None
    high: float | None
    note: str = ""


def interval_chart(items: Sequence[Interval], *, title: str, width: int = 1000,
                   label_w: int = 180, value_w: int = 250) -> SafeString:
    """A point with its 95% interval per row: compare hold rates of two index releases, or
    read the false-pass estimate with its uncertainty. On a wide screen the label, the
    interval and the figures share a line; on a phone the label and figures go above it."""
    return _both(_intervals(items, title, width, label_w, value_w, "wide"),
                 _intervals(items, title, PHONE_WIDTH, 0, 0, "phone"))


def _intervals(items: Sequence[Interval], title: str, width: int, label_w: int, value_w: int,
               fit: str) -> str:
    # label_w 0: label and figures on a line of their own above the interval.
    above = 18 if label_w == 0 else 0
    row, top = 30 + above, 6
    height = top * 2 + row * max(len(items), 1) + 18
    # On a phone the plot keeps a margin, so the 0% and 100% ticks are not cut in half.
    margin = 16 if above else 0
    plot_w = width - label_w - value_w - 2 * margin
    scale = _nice_max(max((i.high or i.value or 0.0 for i in items), default=0.0))

    def x(v: float) -> float:
        return margin + label_w + plot_w * v / scale

    # The axis: at 0% beside the labels on a wide screen; under the rows on a phone, whose
    # labels start where a line at 0% would cross them.
    body = [f'<line class="axis" x1="{x(0)}" x2="{x(scale)}" y1="{height - 18}" '
            f'y2="{height - 18}"/>' if above else
            f'<line class="axis" x1="{x(0)}" x2="{x(0)}" y1="{top}" y2="{height - 18}"/>']
    for tick in _ticks(scale):
        body.append(f'<text class="tick" x="{x(tick):.1f}" y="{height - 4}" '
                    f'text-anchor="middle">{percent(tick, 0)}</text>')
    for n, item in enumerate(items):
        y = top + n * row + above + (row - above) / 2
        shown = percent(item.value)
        if item.low is not None and item.high is not None:
            shown += f" ({percent(item.low)}\u2013{percent(item.high)})"
        figures = (escape(_("no data")) if item.value is None
                   else escape(shown) + ((" " + escape(item.note)) if item.note else ""))
        if above:
            body.append(f'<text class="label" x="0" y="{y - above + 2:.1f}">'
                        f'{escape(item.label)} <tspan class="value">{figures}</tspan></text>')
        else:
            body.append(f'<text class="label" x="{label_w - 8}" y="{y + 4:.1f}" '
                        f'text-anchor="end">{escape(item.label)}</text>')
        if item.value is None:
            if not above:
                body.append(f'<text class="value" x="{label_w + 6}" y="{y + 4:.1f}">'
                            f'{figures}</text>')
            continue
        if item.low is not None and item.high is not None:
            body.append(f'<line class="whisker" x1="{x(item.low):.1f}" x2="{x(item.high):.1f}" '
                        f'y1="{y:.1f}" y2="{y:.1f}"/>')
            for end in (item.low, item.high):
                body.append(f'<line class="whisker" x1="{x(end):.1f}" x2="{x(end):.1f}" '
                            f'y1="{y - 6:.1f}" y2="{y + 6:.1f}"/>')
        body.append(f'<circle class="point" cx="{x(item.value):.1f}" cy="{y:.1f}" r="4">'
                    f'<title>{escape(item.label)}: {shown}</title></circle>')
        if not above:
            body.append(f'<text class="value" x="{width - value_w + 8}" y="{y + 4:.1f}">'
                        f'{figures}</text>')
    if not items:
        empty = escape(_("Nothing to show"))
        body.append(f'<text class="empty" x="{width / 2}" y="{top + 17}" '
                    f'text-anchor="middle">{empty}</text>')
    return _svg(width, height, title, body, fit)
