"""Shared looks of the charts: the palettes (runs, jobs) and the small figure frame of the comparison,
timeline, sweep and price charts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
# Run colours: the first nine as before, then colours of Kelly's maximum-contrast set, so that up to
# 24 runs (a sweep, or every algorithm on one preset) never share a colour.
PALETTE = (
    "#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac",
    "#f3c300", "#875692", "#008856", "#882d17", "#8db600", "#a1caf1", "#e25822", "#604e97", "#dcd300",
    "#b3446c", "#2b3d26", "#17becf", "#654522", "#393b79", "#000000",
)  # fmt: skip
LEGEND_ROW = 20  # px a legend entry takes


def legend_height(entries: int, base: int) -> int:
    """A figure's height so that a right-hand legend of ``entries`` runs fits without scrolling
    (plotly scrolls a legend taller than the plot, hiding runs)."""
    return max(base, 60 + LEGEND_ROW * entries)


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


def runs_slot_seconds(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> float | None:
    """The slot length of the first of ``runs`` (label, result document) that records one."""
    return next((doc.get("slot_seconds") for _, doc in runs if doc.get("slot_seconds")), None)


def slot_axis(title: str, slot_seconds: float | None) -> str:
    """An axis title in slots that also says how long a slot is and what 1,000 slots are in hours."""
    if not slot_seconds:
        return title
    return f"{title} (1 slot = {slot_seconds:g} s; 1,000 slots = {1000 * slot_seconds / 3600:,.3g} h)"


# Linear/log buttons for a scatter whose values span decades (JCTs of production traces).
SCALE_BUTTONS: list[dict[str, Any]] = [
    {
        "type": "buttons",
        "direction": "right",
        "x": 0,
        "xanchor": "left",
        "y": 1.12,
        "yanchor": "bottom",
        "buttons": [
            {"label": "linear", "method": "relayout", "args": [{"xaxis.type": "linear", "yaxis.type": "linear"}]},
            {"label": "log", "method": "relayout", "args": [{"xaxis.type": "log", "yaxis.type": "log"}]},
        ],
    }
]
