"""Chart and table assembly from result documents (DESIGN section 4) only: no models, no queries.

Figures are plain Plotly JSON dicts ({"data", "layout"}) drawn by the local plotly.js.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from scheduling import results

MAX_BARS = 4000  # a Gantt chart draws at most this many placement segments (the earliest ones)
MAX_IDLE_ROWS = 40  # with more servers than this, servers without placements get no row
MAX_HEIGHT = 4000  # pixels
OUTLINE_BARS = 500  # up to this many bars, each gets a white edge
ROW_SPAN = 0.8  # share of a server's row that its lanes fill

ROLES = {
    # role -> (legend name, colour, fill pattern): PS bars are hatched so they differ without colour too
    "worker": ("worker", "#4c78a8", ""),
    "ps": ("parameter server (PS)", "#f58518", "/"),
}

METRIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("jobs", "jobs"),
    ("admitted", "admitted"),
    ("completed", "completed"),
    ("avg_jct", "avg JCT"),
    ("total_jct", "total JCT"),
    ("total_weighted_completion", "Σ w·C"),
    ("total_weighted_jct", "Σ w·JCT"),
    ("makespan", "makespan"),
    ("total_utility", "utility"),
    ("admission_rate", "admission rate"),  # OASiS: optional, results of traces with utilities
    ("timeliness", "JCT − target (mean ± std)"),  # OASiS Fig. 4: per job class, optional
    ("preemptions", "preemptions"),
    ("utilization", "utilization"),
)


# ---------------------------------------------------------------------------------------------
# Metrics table


def format_value(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.2f}"
    if isinstance(value, Mapping) and all(isinstance(v, Mapping) for v in value.values()):
        # timeliness: per job class, completed jobs' JCT minus target (slots)
        return (
            ", ".join(f"{k} {v['mean']:+.1f} ± {v['std']:.1f}" for k, v in value.items() if v.get("mean") is not None)
            or "—"
        )
    if isinstance(value, Mapping):  # utilization: share per resource
        return ", ".join(f"{k} {v * 100:.0f}%" for k, v in sorted(value.items()))
    return str(value)


def format_params(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={format_value(v)}" for k, v in params.items())


def metrics_row(algorithm: str, params: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    metrics = result["metrics"]
    return {
        "algorithm": algorithm,
        "params": format_params(params),
        "cells": [format_value(metrics.get(key)) for key, _ in METRIC_COLUMNS],
    }


# ---------------------------------------------------------------------------------------------
# Gantt chart of placements: one row per server, one bar per placement segment


def gantt(result: Mapping[str, Any], title: str = "") -> dict[str, Any]:
    placements = sorted(result["placements"], key=lambda p: (p["start"], p["end"], p["job_id"], p["role"]))
    shown = placements[:MAX_BARS]
    servers = [s["id"] for s in result["servers"]]
    notes = []
    if len(placements) > MAX_BARS:
        notes.append(f"first {MAX_BARS:,} of {len(placements):,} placements")
    if len(servers) > MAX_IDLE_ROWS:  # a big cluster: leave out the rows that would stay empty
        used = {p["server"] for p in shown}
        if len(used) < len(servers):
            notes.append(f"{len(servers) - len(used):,} idle servers not shown")
        servers = [sid for sid in servers if sid in used]
    lanes, lane_count = assign_lanes(shown)
    bars = _bars(shown, {sid: i for i, sid in enumerate(servers)}, lanes, lane_count, result.get("slot_seconds") or 1)
    order = {role: i for i, role in enumerate(ROLES)}
    outline = 1 if len(shown) <= OUTLINE_BARS else 0  # white edges part adjacent bars; on thin bars they hide them
    data = [_bar_trace(role, bars[role], outline) for role in sorted(bars, key=lambda r: order.get(r, len(order)))]
    row_px = min(90, max(48, 20 * max(lane_count.values(), default=1)))
    layout: dict[str, Any] = {
        "title": {"text": title + (f" ({'; '.join(notes)})" if notes else ""), "x": 0, "xanchor": "left"},
        "barmode": "overlay",
        "showlegend": True,
        "legend": {"orientation": "h", "x": 1, "xanchor": "right", "y": 1.0, "yanchor": "bottom"},
        "xaxis": {"title": {"text": f"time (slots of {result.get('slot_seconds') or 1:g} s)"}, "rangemode": "tozero"},
        "yaxis": {
            "tickmode": "array",
            "tickvals": list(range(len(servers))),
            "ticktext": servers,
            "range": [len(servers) - 0.5, -0.5],
            "showgrid": False,
            "zeroline": False,
            "automargin": True,
        },
        "shapes": [_separator(i + 0.5) for i in range(len(servers) - 1)],
        "height": min(MAX_HEIGHT, 130 + len(servers) * row_px),
        "margin": {"l": 20, "r": 20, "t": 60, "b": 50},
        "uniformtext": {"minsize": 8, "mode": "hide"},
        "hovermode": "closest",
        "plot_bgcolor": "#ffffff",
    }
    if not placements:
        layout["annotations"] = [
            {"text": "no placements", "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5, "showarrow": False}
        ]
    return {"data": data, "layout": layout}


def _bars(
    placements: Sequence[Mapping[str, Any]],
    row: Mapping[str, int],
    lanes: Sequence[int],
    lane_count: Mapping[str, int],
    slot_seconds: float,
) -> dict[str, dict[str, list[Any]]]:
    """Per role, the column arrays of one horizontal bar trace (y = row and lane, base = start)."""
    bars: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for p, lane in zip(placements, lanes, strict=True):
        height = ROW_SPAN / lane_count[p["server"]]
        b = bars[p["role"]]
        b["y"].append(row[p["server"]] - ROW_SPAN / 2 + (lane + 0.5) * height)
        b["width"].append(height * 0.85)
        b["base"].append(p["start"])
        b["x"].append(p["end"] - p["start"])
        b["text"].append(p["job_id"])
        role = ROLES.get(p["role"], (p["role"],))[0]
        wall = (clock(p["start"] * slot_seconds), clock(p["end"] * slot_seconds))
        b["customdata"].append([p["job_id"], role, p["type"], p["count"], p["start"], p["end"], *wall, p["server"]])
    return bars


def assign_lanes(placements: Sequence[Mapping[str, Any]]) -> tuple[list[int], dict[str, int]]:
    """A lane per placement such that placements sharing a lane on one server never overlap in time.

    ``placements`` must be sorted by start. A job keeps its previous lane when that lane is free, so
    consecutive segments of one job line up.
    """
    lane_end: dict[str, list[int]] = defaultdict(list)  # server -> end of the last bar in each lane
    last_lane: dict[tuple[str, str, str], int] = {}
    lanes = []
    for p in placements:
        ends = lane_end[p["server"]]
        key = (p["server"], p["job_id"], p["role"])
        preferred = last_lane.get(key)
        if preferred is not None and ends[preferred] <= p["start"]:
            lane = preferred
        else:
            lane = next((i for i, end in enumerate(ends) if end <= p["start"]), len(ends))
            if lane == len(ends):
                ends.append(0)
        ends[lane] = p["end"]
        last_lane[key] = lane
        lanes.append(lane)
    return lanes, {server: len(ends) for server, ends in lane_end.items()}


def clock(seconds: float) -> str:
    """Wall time as [Nd ]H:MM:SS."""
    s = round(seconds)
    days, s = divmod(s, 86400)
    text = f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{days}d {text}" if days else text


def _bar_trace(role: str, b: Mapping[str, list[Any]], outline: float) -> dict[str, Any]:
    name, colour, pattern = ROLES.get(role, (role, "#888888", ""))
    return {
        "type": "bar",
        "orientation": "h",
        "name": name,
        **b,
        "marker": {
            "color": colour,
            "line": {"color": "#ffffff", "width": outline},
            "pattern": {"shape": pattern, "solidity": 0.4},
        },
        "textposition": "inside",
        "insidetextanchor": "middle",
        "textangle": 0,
        "hovertemplate": (
            "<b>job %{customdata[0]}</b> on %{customdata[8]}<br>"
            "%{customdata[1]} × %{customdata[3]} (type %{customdata[2]})<br>"
            "slots [%{customdata[4]}, %{customdata[5]})<br>"
            "%{customdata[6]} – %{customdata[7]}<extra></extra>"
        ),
    }


def _separator(y: float) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": y,
        "y1": y,
        "line": {"color": "#e5e7eb", "width": 1},
    }


# ---------------------------------------------------------------------------------------------
# Comparisons across the runs of one experiment: utilisation over time, JCT distribution

PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac")


def utilization(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """One figure per resource: share of finite capacity in use over time, a line per run."""
    timelines = [(label, results.utilization_timeline(doc)) for label, doc in runs]
    resources = sorted({r for _, series in timelines for r in series})
    figures = []
    for resource in resources:
        data = []
        for i, (label, series) in enumerate(timelines):
            points = series.get(resource, [])
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "line": {"shape": "hv", "color": PALETTE[i % len(PALETTE)], "width": 1.5},
                    "name": label,
                    "x": [t for t, _ in points],
                    "y": [round(share * 100, 3) for _, share in points],
                    "hovertemplate": "%{x}: %{y:.1f}%<extra>" + label + "</extra>",
                }
            )
        figures.append(
            {
                "data": data,
                "layout": {
                    "title": {"text": f"{resource} utilisation", "font": {"size": 14}},
                    "xaxis": {"title": {"text": "slot"}},
                    "yaxis": {"title": {"text": "% of capacity"}, "range": [0, 105]},
                    "height": 280,
                    "margin": {"l": 60, "r": 20, "t": 40, "b": 40},
                    "legend": {"orientation": "h"},
                },
            }
        )
    return figures


def jct_cdf(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """Cumulative distribution of completed jobs' JCT (slots), a line per run."""
    data = []
    for i, (label, doc) in enumerate(runs):
        jcts = sorted(j["completion"] - j["arrival"] for j in doc["jobs"] if j["completion"] is not None)
        n = len(jcts)
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "line": {"shape": "hv", "color": PALETTE[i % len(PALETTE)], "width": 1.5},
                "name": label,
                "x": jcts,
                "y": [round((k + 1) / n, 6) for k in range(n)],
                "hovertemplate": "JCT %{x}: %{y:.0%}<extra>" + label + "</extra>",
            }
        )
    return {
        "data": data,
        "layout": {
            "title": {"text": "JCT distribution (completed jobs)", "font": {"size": 14}},
            "xaxis": {"title": {"text": "JCT (slots)"}, "type": "log"},
            "yaxis": {"title": {"text": "share of jobs"}, "range": [0, 1.02]},
            "height": 320,
            "margin": {"l": 60, "r": 20, "t": 40, "b": 40},
            "legend": {"orientation": "h"},
        },
    }
