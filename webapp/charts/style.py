"""Shared looks of the charts: the palettes (runs, jobs) and the small figure frame of the comparison,
timeline, sweep and price charts."""

from __future__ import annotations

from typing import Any

JOB_PALETTE = (
    "#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac",
    "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79", "#637939",
)  # fmt: skip
# Legends of the run lines: a column right of the plot area (plotly widens the right margin to fit it,
# and scrolls a column longer than the plot). A horizontal legend under the plot, plotly's default
# place for one, covers the x-axis title, and one placed lower (paper coordinates) still does once it
# wraps to several rows and the plot area shrinks.
LEGEND_RIGHT: dict[str, Any] = {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"}
PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac")


def _small(title: str, data: list[dict[str, Any]], **layout: Any) -> dict[str, Any]:
    return {
        "data": data,
        "layout": {
            "title": {"text": title, "font": {"size": 14}},
            "height": 300,
            "margin": {"l": 60, "r": 20, "t": 40, "b": 60},
            "showlegend": False,
            **layout,
        },
    }
