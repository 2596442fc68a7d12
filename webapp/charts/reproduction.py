"""The figure of a paper reproduction, drawn in the page by the local plotly.js from its
``summary.csv`` (``scheduling.reproduce.write``): per x-axis point and algorithm the median with its
95% CI as an error bar, in the figure's unit, as the ``figure.html`` file the reproduction writes
draws it."""

from __future__ import annotations

import csv
import io
from typing import Any

from scheduling.reproduce import Figure
from webapp.charts.style import LEGEND_RIGHT, PALETTE


def _number(cell: str | None) -> float | None:
    try:
        return float(cell) if cell not in (None, "") else None
    except ValueError:
        return None


def reproduction_figure(fig: Figure, summary_csv: str, seeds: int) -> dict[str, Any] | None:
    """Grouped bars (one colour per algorithm, in the figure's order) of the medians with their 95%
    CIs; None when no algorithm has a median."""
    rows = list(csv.DictReader(io.StringIO(summary_csv)))
    data = []
    for k, (label, _, _) in enumerate(fig.algorithms):
        xs, ys, up, down = [], [], [], []
        for row in rows:
            median = _number(row.get("median"))
            # summary.csv also holds the metric's _censored rows (scheduling.reproduce.write): not drawn
            if row.get("algorithm") != label or row.get("metric", fig.metric) != fig.metric or median is None:
                continue
            low, high = _number(row.get("median_ci_low")), _number(row.get("median_ci_high"))
            xs.append(row.get("point", ""))
            ys.append(median / fig.scale)
            up.append(0.0 if high is None else (high - median) / fig.scale)
            down.append(0.0 if low is None else (median - low) / fig.scale)
        if xs:
            data.append(
                {
                    "type": "bar",
                    "name": label,
                    "x": xs,
                    "y": ys,
                    "marker": {"color": PALETTE[k % len(PALETTE)]},
                    "error_y": {"type": "data", "array": up, "arrayminus": down, "visible": True},
                    "hovertemplate": f"{label}, %{{x}}: %{{y:.4g}}<extra></extra>",
                }
            )
    if not data:
        return None
    title = f"{fig.paper} {fig.figure}: {fig.title} (median, 95% CI, {seeds} seeds)"
    return {
        "data": data,
        "layout": {
            "title": {"text": title, "font": {"size": 14}},
            "barmode": "group",
            "height": 420,
            "margin": {"l": 70, "r": 20, "t": 50, "b": 60},
            "legend": LEGEND_RIGHT,
            "xaxis": {"title": {"text": fig.x_label}, "type": "category"},
            "yaxis": {"title": {"text": f"{fig.metric} ({fig.unit})"}, "rangemode": "tozero"},
        },
    }
