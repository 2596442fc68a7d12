"""Comparisons across the runs of one experiment: utilisation over time, the JCT distribution (CDF,
box, per-job scatter of two runs), bars of the headline metrics, and completion timeliness."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from scheduling import results
from webapp.charts import downsample
from webapp.charts.style import (
    LEGEND_RIGHT,
    PALETTE,
    SCALE_BUTTONS,
    _small,
    legend_height,
    runs_slot_seconds,
    slot_axis,
)

BAR_METRICS = (
    ("avg_jct", "average JCT (slots)"),
    ("avg_wait", "average wait before the first start (slots)"),
    ("total_jct", "total JCT (slots)"),
    ("total_weighted_completion", "Σ w·C (slots)"),
    ("total_utility", "total utility"),
)


def log_axis(title: str, values: Sequence[float]) -> dict[str, Any]:
    """A log axis labelled at 1, 2 and 5 times the powers of ten (only the powers beyond three decades):
    plotly's own labels there read "2 3 4 ... 10 2 3", digits without their magnitude."""
    positive = [v for v in values if v > 0]
    axis: dict[str, Any] = {"title": {"text": title}, "type": "log"}
    if positive:
        lo, hi = math.floor(math.log10(min(positive))), math.ceil(math.log10(max(positive)))
        steps = (1,) if hi - lo > 3 else (1, 2, 5)
        axis.update(tickmode="array", tickvals=[m * 10**e for e in range(lo, hi + 1) for m in steps])
    return axis


def utilization(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """One figure per resource: share of finite capacity in use over time, a line per run."""
    timelines = [(label, _utilization_series(doc)) for label, doc in runs]
    resources = sorted({r for _, series in timelines for r in series})
    figures = []
    for resource in resources:
        data = []
        binned = 1.0
        for i, (label, series) in enumerate(timelines):
            xs, ys, width = series.get(resource, ([], [], 1.0))
            binned = max(binned, width)
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "line": {"shape": "hv", "color": PALETTE[i % len(PALETTE)], "width": 1.5},
                    "name": label,
                    "x": xs,
                    "y": [round(share * 100, 3) for share in ys],
                    "hovertemplate": "%{x}: %{y:.1f}%<extra>" + label + "</extra>",
                }
            )
        figures.append(
            {
                "data": data,
                "layout": {
                    "title": {"text": f"{resource} utilisation", "font": {"size": 14}},
                    "xaxis": {"title": {"text": slot_axis(binned_title(binned), runs_slot_seconds(runs))}},
                    "yaxis": {"title": {"text": "% of capacity"}, "range": [0, 105]},
                    "height": legend_height(len(runs), 280),
                    "margin": {"l": 60, "r": 20, "t": 40, "b": 40},
                    "legend": LEGEND_RIGHT,
                },
            }
        )
    return figures


def binned_title(width: float) -> str:
    return "slot" if width == 1 else f"slot, mean over bins of {width:g}"


def _utilization_series(doc: Mapping[str, Any]) -> dict[str, tuple[list[float], list[float], float]]:
    """Per resource (bin starts, utilisation, bin width): from a chart index (``_utilization``, see
    webapp/chartindex.py) or derived from the result's placements."""
    if "_utilization" in doc:
        return {r: (s["x"], s["y"], s["width"]) for r, s in doc["_utilization"].items()}
    return {r: downsample.step_means(points) for r, points in results.utilization_timeline(doc).items()}


def jct_cdf(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """Cumulative distribution of completed jobs' JCT (slots), a line per run."""
    data = []
    every: list[float] = []
    for i, (label, doc) in enumerate(runs):
        jcts = [j["completion"] - j["arrival"] for j in doc["jobs"] if j["completion"] is not None]
        xs, shares = downsample.cdf(jcts)
        every += xs
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "line": {"shape": "hv", "color": PALETTE[i % len(PALETTE)], "width": 1.5},
                "name": label,
                "x": xs,
                "y": shares,
                "hovertemplate": "JCT %{x}: %{y:.0%}<extra>" + label + "</extra>",
            }
        )
    return {
        "data": data,
        "layout": {
            "title": {"text": "JCT distribution (completed jobs)", "font": {"size": 14}},
            "xaxis": log_axis(slot_axis("JCT (slots)", runs_slot_seconds(runs)), every),
            "yaxis": {"title": {"text": "share of jobs"}, "range": [0, 1.02]},
            "height": legend_height(len(runs), 320),
            "margin": {"l": 60, "r": 20, "t": 40, "b": 40},
            "legend": LEGEND_RIGHT,
        },
    }


def utility_varies(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> bool:
    """Whether completed jobs earn different utilities. Without utility columns in the trace every job
    has the default utility, constant 0.5 whenever it completes: utility charts would only restate
    the completions."""
    return len({j["utility"] for _, doc in runs for j in doc["jobs"] if j["completion"] is not None}) > 1


def metric_bars(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """One bar chart per metric of BAR_METRICS, a bar per run (metrics missing everywhere: no chart;
    total utility only where utility varies)."""
    figures = []
    for key, title in BAR_METRICS:
        values = [doc["metrics"].get(key) for _, doc in runs]
        if all(v is None for v in values) or (key == "total_utility" and not utility_varies(runs)):
            continue
        zero = all_zero(values, "0 for every run")
        figures.append(
            _small(
                title,
                [
                    {
                        "type": "bar",
                        "x": [label for label, _ in runs],
                        "y": values,
                        "marker": {"color": [PALETTE[i % len(PALETTE)] for i in range(len(runs))]},
                        "hovertemplate": "%{x}: %{y:,.2f}<extra></extra>",
                    }
                ],
                xaxis={"automargin": True},  # long run labels (sweeps, variants) stay whole
                yaxis={"title": {"text": title}, "rangemode": "tozero", "automargin": True, **zero.pop("yaxis", {})},
                **zero,
            )
        )
    return figures


def all_zero(values: Sequence[float | None], note: str) -> dict[str, Any]:
    """Layout for a chart whose values are all 0 (or missing): a 0..1 axis (plotly's own is -1..1
    around nothing) and a note saying so; nothing otherwise."""
    if any(v for v in values):
        return {}
    return {
        "yaxis": {"range": [0, 1], "rangemode": "tozero"},
        "annotations": [{"text": note, "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5}],
    }


def jcts(doc: Mapping[str, Any]) -> dict[str, int]:
    """JCT (slots) of each completed job, by job id."""
    return {j["job_id"]: j["completion"] - j["arrival"] for j in doc["jobs"] if j["completion"] is not None}


def jct_box(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """A box per run; beyond ``downsample.MAX_BOX_POINTS`` jobs the box's statistics are sent, not the
    values (the same box, a few numbers instead of every JCT)."""
    data = []
    every: list[float] = []
    for i, (label, doc) in enumerate(runs):
        values = list(jcts(doc).values())
        trace: dict[str, Any] = {"type": "box", "name": label, "marker": {"color": PALETTE[i % len(PALETTE)]},
                                 "boxpoints": False}  # fmt: skip
        if len(values) > downsample.MAX_BOX_POINTS:
            stats = downsample.box_stats(values)
            trace.update({k: [v] for k, v in stats.items()}, x=[label])
            every += [stats["lowerfence"], stats["upperfence"], min(values), max(values)]
        else:
            trace["y"] = values
            every += values
        data.append(trace)
    return _small("JCT per completed job (box)", data, yaxis=log_axis("JCT (slots)", every), xaxis={"automargin": True})


def jct_scatter(a: tuple[str, Mapping[str, Any]], b: tuple[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Per-job JCT of run ``a`` (x) against run ``b`` (y), jobs completed by both; the diagonal drawn."""
    ja, jb = jcts(a[1]), jcts(b[1])
    every = sorted(set(ja) & set(jb))
    common = [every[k] for k in downsample.sample(len(every))]  # evenly in job-id order
    xs, ys = [ja[j] for j in common], [jb[j] for j in common]
    top = max([*xs, *ys, 1])
    shown = f"{len(every):,} jobs completed by both"
    if len(common) < len(every):
        shown = f"{len(common):,} of the {len(every):,} jobs completed by both; all in the CSV export"
    return {
        "data": [
            {
                "type": "scatter",  # at most downsample.MAX_MARKERS: SVG copes, and the partial bundle has no WebGL
                "mode": "markers",
                "x": xs,
                "y": ys,
                "text": common,
                "marker": {"size": 5, "color": PALETTE[0], "opacity": 0.7},
                "hovertemplate": "job %{text}<br>" + a[0] + ": %{x}<br>" + b[0] + ": %{y}<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "lines",
                "x": [0, top],
                "y": [0, top],
                "line": {"color": "#999", "dash": "dot"},
                "hoverinfo": "skip",
            },
        ],
        "layout": {
            "title": {
                "text": f"JCT per job: {a[0]} vs {b[0]} ({shown})",
                "font": {"size": 14},
            },
            "xaxis": {"title": {"text": f"{a[0]} JCT (slots)"}},
            "yaxis": {"title": {"text": f"{b[0]} JCT (slots)"}},
            "height": 440,
            "showlegend": False,
            "updatemenus": SCALE_BUTTONS,
            "margin": {"l": 60, "r": 20, "t": 70, "b": 50},
        },
    }


def timeliness(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any] | None:
    """For utility-based runs: share of jobs by utility earned (completed late earns less, rejected 0);
    None where utility does not vary."""
    if not utility_varies(runs):
        return None
    data = []
    for i, (label, doc) in enumerate(runs):
        utilities = [j["utility"] for j in doc["jobs"]]
        if not any(utilities):
            continue
        trace: dict[str, Any] = {"name": label, "opacity": 0.6, "marker": {"color": PALETTE[i % len(PALETTE)]}}
        if len(utilities) > downsample.MAX_BOX_POINTS:  # counted here: 40 bars, not every job's value
            counts, edges = np.histogram(utilities, bins=40)
            width = float(edges[1] - edges[0])
            trace.update(
                type="bar",
                x=[float(e) + width / 2 for e in edges[:-1]],
                y=[round(100 * c / len(utilities), 4) for c in counts],
                width=width,
            )
        else:
            trace.update(type="histogram", x=utilities, histnorm="percent")
        data.append(trace)
    if not data:
        return None
    fig = _small("Completion timeliness: utility earned per job", data, barmode="overlay")
    fig["layout"].update(
        showlegend=True,
        legend=LEGEND_RIGHT,
        height=legend_height(len(data), 300),
        xaxis={"title": {"text": "utility"}},
        yaxis={"title": {"text": "% of jobs"}},
    )
    return fig
