"""The charts' axes: each tick is labelled with the share it stands at."""

from __future__ import annotations

import re

import pytest

from reviewqueue.insight.charts import Interval, interval_chart, line_chart


def tick_labels(svg: str) -> list[str]:
    """The tick labels of the first drawing (the wide one)."""
    wide = svg.split("</svg>", 1)[0]
    return re.findall(r'<text class="tick"[^>]*>(\d+%)</text>', wide)


@pytest.mark.parametrize(("high", "labels"), [
    (0.04, ["0%", "1%", "2%", "3%", "4%", "5%"]),
    (0.09, ["0%", "2%", "4%", "6%", "8%", "10%"]),
    (0.15, ["0%", "5%", "10%", "15%", "20%"]),
    (0.45, ["0%", "10%", "20%", "30%", "40%", "50%"]),
    (0.9, ["0%", "25%", "50%", "75%", "100%"]),
])
def test_every_tick_of_a_share_axis_is_a_whole_percent_where_it_stands(
    high: float, labels: list[str]
) -> None:
    assert tick_labels(interval_chart([Interval("2026.10", high / 2, 0.0, high)],
                                      title="False-pass estimate")) == labels
    line = line_chart([("2026-10-01", 0.0), ("2026-10-02", high)], title="Hold rate")
    assert re.findall(r'>(\d+%)</text>', line.split("</svg>")[0]) == labels


def test_a_count_bar_prints_its_count_whole() -> None:
    """A backlog of a million and more is a count of answers, not 1.23457e+06."""
    from reviewqueue.insight.charts import Bar, bar_chart

    svg = bar_chart([Bar("older than a week", 1_234_567), Bar("today", 3)],
                    title="Review queue by age", share=False)

    assert ">1234567<" in svg and ">3<" in svg
    assert "e+" not in svg
