"""Charts of repeated runs, from ``scheduling.stats`` results only: paired differences against the
reference with their 95% CIs, pooled JCT CDFs with bands, and sweep lines with CI bands."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduling.stats import CdfBand, MetricReport
from webapp.charts.compare import log_axis
from webapp.charts.style import LEGEND_RIGHT, PALETTE, _small


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def paired_differences(report: MetricReport, title: str) -> dict[str, Any] | None:
    """A marker per variant other than the reference: its median paired difference, with the 95%
    CI of that median as an error bar; a dashed line at 0 (no difference). None without pairs."""
    rows = [(v, p) for v, p in report.paired.items() if p.median_diff is not None]
    if not rows:
        return None
    better = "lower" if report.better == "lower" else "higher"
    data = [
        {
            "type": "scatter",
            "mode": "markers",
            "name": "median difference",
            "y": [v for v, _ in rows],
            "x": [p.median_diff for _, p in rows],
            "error_x": {
                "type": "data",
                "symmetric": False,
                "array": [
                    p.median_ci.high - p.median_diff if p.median_ci and p.median_diff is not None else 0
                    for _, p in rows
                ],
                "arrayminus": [
                    p.median_diff - p.median_ci.low if p.median_ci and p.median_diff is not None else 0 for _, p in rows
                ],
            },
            "marker": {"color": [PALETTE[i % len(PALETTE)] for i in range(1, len(rows) + 1)], "size": 9},
            "customdata": [f"{p.wins}/{p.ties}/{p.losses}, {p.verdict}" for _, p in rows],
            "hovertemplate": "%{y}: %{x:.4g} (wins/ties/losses %{customdata})<extra></extra>",
        }
    ]
    return _small(
        f"{title}: paired difference against {report.reference} (median, 95% CI; {better} is better)",
        data,
        height=max(220, 60 + 40 * len(rows)),
        margin={"l": 160, "r": 20, "t": 40, "b": 50},
        xaxis={"title": {"text": f"difference in {title}"}, "zeroline": False},
        yaxis={"automargin": True},
        shapes=[
            {"type": "line", "x0": 0, "x1": 0, "yref": "paper", "y0": 0, "y1": 1, "line": {"dash": "dash", "width": 1}}
        ],
    )


def cdf_bands(bands: Sequence[tuple[str, CdfBand]]) -> dict[str, Any] | None:
    """The pooled JCT CDF of each variant over its repetitions, with its pointwise 95% band (shaded);
    it tops out at the share of jobs that completed. None when no job completed."""
    data: list[dict[str, Any]] = []
    every: list[float] = []
    for i, (label, band) in enumerate(bands):
        if not band.x:
            continue
        colour = PALETTE[i % len(PALETTE)]
        every += band.x
        if band.low is not None and band.high is not None:
            data.append(
                {"type": "scatter", "mode": "lines", "x": band.x, "y": band.high, "line": {"width": 0, "shape": "hv"},
                 "legendgroup": label, "showlegend": False, "hoverinfo": "skip"}
            )  # fmt: skip
            data.append(
                {"type": "scatter", "mode": "lines", "x": band.x, "y": band.low, "line": {"width": 0, "shape": "hv"},
                 "fill": "tonexty", "fillcolor": _rgba(colour, 0.2), "legendgroup": label, "showlegend": False,
                 "hoverinfo": "skip"}
            )  # fmt: skip
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"{label} ({band.seeds} rep., {band.completed}/{band.jobs} jobs)",
                "legendgroup": label,
                "x": band.x,
                "y": [round(y, 6) for y in band.cdf],
                "line": {"shape": "hv", "color": colour, "width": 1.5},
                "hovertemplate": "JCT %{x}: %{y:.0%}<extra>" + label + "</extra>",
            }
        )
    if not data:
        return None
    return {
        "data": data,
        "layout": {
            "title": {
                "text": "JCT distribution pooled over repetitions (95% band over repetitions)",
                "font": {"size": 14},
            },
            "xaxis": log_axis("JCT (slots)", every),
            "yaxis": {"title": {"text": "share of jobs"}, "range": [0, 1.02]},
            "height": 340,
            "margin": {"l": 60, "r": 20, "t": 40, "b": 40},
            "legend": LEGEND_RIGHT,
        },
    }


@dataclass(frozen=True)
class SweepLine:
    label: str  # the series (variant without the swept value)
    x: list[Any]  # swept values, ascending
    mean: list[float | None]  # mean over repetitions at each value
    low: list[float | None]  # bootstrap 95% CI of the mean (None: fewer than 2 repetitions)
    high: list[float | None]


def sweep_bands(param: str, title: str, lines: Sequence[SweepLine]) -> dict[str, Any]:
    """The metric against the swept parameter: per series the mean with its CI as a shaded band."""
    data: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        colour = PALETTE[i % len(PALETTE)]
        if any(v is not None for v in line.low):
            data.append(
                {"type": "scatter", "mode": "lines", "x": line.x, "y": line.high, "line": {"width": 0},
                 "legendgroup": line.label, "showlegend": False, "hoverinfo": "skip"}
            )  # fmt: skip
            data.append(
                {"type": "scatter", "mode": "lines", "x": line.x, "y": line.low, "line": {"width": 0},
                 "fill": "tonexty", "fillcolor": _rgba(colour, 0.2), "legendgroup": line.label,
                 "showlegend": False, "hoverinfo": "skip"}
            )  # fmt: skip
        data.append(
            {"type": "scatter", "mode": "lines+markers", "name": line.label, "legendgroup": line.label,
             "x": line.x, "y": line.mean, "line": {"color": colour}}
        )  # fmt: skip
    return _small(
        f"{title} against {param} (mean, 95% CI over repetitions)",
        data,
        xaxis={"title": {"text": param}},
        showlegend=True,
        legend=LEGEND_RIGHT,
    )
