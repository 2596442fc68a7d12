"""Time series of a repeated experiment: one colour per variant (an algorithm with its parameters),
its repetitions drawn as one band, not as a line per run in recycled colours. At each of
``GRID`` evenly spaced slots the band spans the lowest to the highest run and the line is the median
run. Repetitions over windows start at slot 0 (``scheduling.repeat.window_cases`` shifts each
window's arrivals), so slot t of every run is "t slots into its window"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from webapp.charts.compare import _utilization_series, binned_title
from webapp.charts.style import LEGEND_RIGHT, PALETTE, _small, legend_height, slot_axis

GRID = 400  # slots at which the band is evaluated

Group = tuple[str, Sequence[Mapping[str, Any]]]  # (variant label, the chart documents of its runs)


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _grid(end: float) -> np.ndarray:
    return np.linspace(0.0, max(end, 1.0), GRID)


def _step_at(xs: Sequence[float], ys: Sequence[float], grid: np.ndarray) -> np.ndarray:
    """The step series (each y holds from its x to the next x) at ``grid``; 0 before its first x and
    its last value after the last x."""
    if not len(xs):
        return np.zeros(len(grid))
    i = np.searchsorted(np.asarray(xs, dtype=float), grid, side="right") - 1
    values = np.asarray(ys, dtype=float)[np.clip(i, 0, None)]
    return np.where(i >= 0, values, 0.0)


def _count_at(times: Sequence[float], grid: np.ndarray) -> np.ndarray:
    """How many of ``times`` are <= each grid slot."""
    return np.searchsorted(np.sort(np.asarray(times, dtype=float)), grid, side="right").astype(float)


def _band(k: int, variant: str, n: int, grid: np.ndarray, rows: np.ndarray, dash: str | None = None,
          legend: bool = True, group: str | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Three traces of one variant: lowest run, highest run (filled down to the lowest), median."""
    colour = PALETTE[k % len(PALETTE)]
    x = [round(float(v), 3) for v in grid]
    low, high, median = (np.round(f(rows, axis=0), 4).tolist() for f in (np.min, np.max, np.median))
    group = group or variant
    common = {"type": "scatter", "mode": "lines", "x": x, "legendgroup": group, "hoverinfo": "skip"}
    line = {"shape": "hv", "width": 0, "color": colour}
    return [
        {**common, "y": low, "line": line, "showlegend": False, "name": f"{variant} lowest"},
        {
            **common,
            "y": high,
            "line": line,
            "fill": "tonexty",
            "fillcolor": _rgba(colour, 0.18),
            "showlegend": False,
            "name": f"{variant} highest",
        },
        {
            **{key: v for key, v in common.items() if key != "hoverinfo"},
            "y": median,
            "name": f"{variant} (median of {n})",
            "showlegend": legend,
            "line": {"shape": "hv", "color": colour, "width": 1.5, **({"dash": dash} if dash else {})},
            "hovertemplate": "%{x:.0f}: %{y:.4g}<extra>" + variant + " median</extra>",
        },
    ]


def utilization_bands(groups: Sequence[Group], slot_seconds: float | None) -> list[dict[str, Any]]:
    """One figure per resource: % of capacity in use, a band per variant over its repetitions."""
    series = [(v, [_utilization_series(d) for d in docs]) for v, docs in groups]
    resources = sorted({r for _, runs in series for s in runs for r in s})
    figures = []
    for resource in resources:
        ends = [s[resource][0][-1] for _, runs in series for s in runs if resource in s and s[resource][0]]
        end = max(ends, default=1)
        grid = _grid(end)
        data, binned = [], 1.0
        for k, (variant, runs) in enumerate(series):
            present = [s[resource] for s in runs if resource in s]
            if not present:
                continue
            binned = max(binned, *(w for _, _, w in present))
            rows = np.array([_step_at(xs, ys, grid) * 100 for xs, ys, _ in present])
            data += _band(k, variant, len(present), grid, rows)
        figures.append(
            {
                "data": data,
                "layout": {
                    "title": {
                        "text": f"{resource} utilisation (median run, band: lowest to highest)",
                        "font": {"size": 14},
                    },
                    "xaxis": {"title": {"text": slot_axis(binned_title(binned), slot_seconds)}},
                    "yaxis": {"title": {"text": "% of capacity"}, "range": [0, 105]},
                    "height": legend_height(len(groups), 280),
                    "margin": {"l": 60, "r": 20, "t": 40, "b": 40},
                    "legend": LEGEND_RIGHT,
                },
            }
        )
    return figures


def events_bands(groups: Sequence[Group], slot_seconds: float | None) -> list[dict[str, Any]]:
    """Cumulative admissions (at arrival) and completions, and suspensions: a band per variant."""
    from webapp.charts.timeline import suspensions

    def times(doc: Mapping[str, Any]) -> tuple[list[float], list[float], list[float]]:
        jobs = doc["jobs"]
        starts = doc["_suspension_starts"] if "_suspension_starts" in doc else [s[2] for s in suspensions(doc)]
        return (
            [j["arrival"] for j in jobs if j["admitted"]],
            [j["completion"] for j in jobs if j["completion"] is not None],
            list(starts),
        )

    per_variant = [(v, [times(d) for d in docs]) for v, docs in groups]
    end = max((max(t, default=0) for _, runs in per_variant for run in runs for t in run), default=1)
    grid = _grid(end)
    admitted, suspended = [], []
    for k, (variant, runs) in enumerate(per_variant):
        n = len(runs)
        admitted += _band(k, variant, n, grid, np.array([_count_at(a, grid) for a, _, _ in runs]))
        admitted += _band(k, f"{variant} (completed)", n, grid, np.array([_count_at(c, grid) for _, c, _ in runs]),
                          dash="dot", legend=False, group=variant)  # fmt: skip
        suspended += _band(k, variant, n, grid, np.array([_count_at(s, grid) for _, _, s in runs]))
    common = {"xaxis": {"title": {"text": slot_axis("slot", slot_seconds)}}, "showlegend": True,
              "legend": LEGEND_RIGHT, "height": legend_height(len(groups), 300),
              "yaxis": {"title": {"text": "jobs"}, "rangemode": "tozero"}}  # fmt: skip
    title = "median run, band: lowest to highest"
    return [
        _small(f"Admitted (solid, at arrival) and completed (dotted) jobs, cumulative ({title})", admitted, **common),
        _small(f"Suspensions (a started job left without resources), cumulative ({title})", suspended, **common),
    ]
