"""Sweeps: each metric against the swept parameter, one line per algorithm."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from webapp.charts.compare import BAR_METRICS
from webapp.charts.style import LEGEND_RIGHT, PALETTE, _small


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
            figures.append(
                _small(
                    f"{title} against {param}",
                    data,
                    xaxis={"title": {"text": param}},
                    showlegend=True,
                    legend=LEGEND_RIGHT,
                )
            )
    return figures
