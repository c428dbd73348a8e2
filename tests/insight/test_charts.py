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
