"""Sweeps: each metric against the swept parameter, one line per algorithm."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from webapp.charts.compare import BAR_METRICS
from webapp.charts.style import LEGEND_RIGHT, PALETTE, _small, legend_height


def sweep_charts(param: str, points: Sequence[tuple[str, Any, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """``points``: (line label, swept value, metrics) of each done run. Total utility is charted only
    for traces with utility columns (their results carry the ``timeliness`` metric); otherwise every
    completed job earns the default 0.5 and the chart restates the completed jobs."""
    algorithms = list(dict.fromkeys(a for a, _, _ in points))
    utilities = any("timeliness" in m for _, _, m in points)
    figures = []
    for key, title in (*BAR_METRICS, ("makespan", "makespan (slots)"), ("completed", "completed jobs")):
        if key == "total_utility" and not utilities:
            continue
        data = []
        for i, algorithm in enumerate(algorithms):
            pts = sorted((v, m.get(key)) for a, v, m in points if a == algorithm and m.get(key) is not None)
            if pts:
                data.append(
                    {
                        "type": "scatter",
                        "mode": "lines+markers",
                        "name": algorithm,
                        "x": [v for v, _ in pts],
                        "y": [y for _, y in pts],
                        "line": {"color": PALETTE[i % len(PALETTE)]},
                    }
                )
        if data:
            figure = _small(
                f"{title} against {param}",
                data,
                xaxis={"title": {"text": param}},
                # automargin: long tick labels (7,420,199) are never cut off
                yaxis={"automargin": True, "tickformat": ",~r"},
                showlegend=True,
                legend=LEGEND_RIGHT,
                height=legend_height(len(data), 300),
            )
            values = {y for trace in data for y in trace["y"]}
            if len(values) == 1:  # a flat line: plotly would zoom into rounding noise around it
                (v,) = values
                pad = abs(v) * 0.1 or 1
                figure["layout"]["yaxis"]["range"] = [v - pad, v + pad]
            figures.append(figure)
    return figures


def unchanged(param: str, points: Sequence[tuple[str, Any, Mapping[str, Any]]]) -> list[str]:
    """Notes for the lines on which every value of ``param`` gave the same metrics: the parameter
    changed no schedule there (its flat lines are not a finding about the parameter)."""
    notes = []
    for algorithm in dict.fromkeys(a for a, _, _ in points):
        runs = [(v, m) for a, v, m in points if a == algorithm]
        if len({v for v, _ in runs}) > 1 and all(m == runs[0][1] for _, m in runs):
            values = ", ".join(str(v) for v in sorted({v for v, _ in runs}))
            notes.append(
                f"{algorithm}: {param} = {values} all gave the same metrics; the parameter changed no schedule here."
            )
    return notes
