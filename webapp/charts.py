"""Chart and table assembly from result documents (DESIGN section 4) only: no models, no queries.

Figures are plain Plotly JSON dicts ({"data", "layout"}) drawn by the local plotly.js.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduling import results

MAX_BARS = 4000  # above this many placement segments (after filters), the Gantt chart is an aggregate heat map
AGGREGATE_BINS = 400  # time bins of the aggregate view
MAX_IDLE_ROWS = 40  # with more servers than this, servers without placements get no row
MAX_HEIGHT = 4000  # pixels
OUTLINE_BARS = 500  # up to this many bars, each gets a white edge
LABEL_BARS = 150  # up to this many bars, each shows its job id (text layout is most of the drawing time)
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


def job_colour(job_id: str) -> str:
    """A stable colour per job (the same job has the same colour in every chart and run)."""
    h = 0
    for ch in job_id:
        h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    return JOB_PALETTE[h % len(JOB_PALETTE)]


def filter_placements(
    placements: Sequence[Mapping[str, Any]],
    job: str = "",
    server: str = "",
    t0: float | None = None,
    t1: float | None = None,
) -> list[Mapping[str, Any]]:
    """Placements of jobs whose id contains ``job``, on servers whose id contains ``server``, that
    overlap the window [t0, t1) (bars are clipped to the window by the axis range, not cut)."""
    out = []
    for p in placements:
        if job and job not in p["job_id"]:
            continue
        if server and server not in p["server"]:
            continue
        if t0 is not None and p["end"] <= t0:
            continue
        if t1 is not None and p["start"] >= t1:
            continue
        out.append(p)
    return out


def gantt(
    result: Mapping[str, Any],
    title: str = "",
    job: str = "",
    server: str = "",
    t0: float | None = None,
    t1: float | None = None,
    max_bars: int | None = None,
    total: int | None = None,
) -> dict[str, Any]:
    """The Gantt chart of a run's placements, filtered; above ``max_bars`` segments an aggregate
    heat map (busy GPUs, or busy placements, per server and time bin) replaces the bars.
    ``total``: the run's number of segments when ``result`` holds only some of them."""
    limit = MAX_BARS if max_bars is None else max_bars
    all_placements = result["placements"]
    chosen = filter_placements(all_placements, job, server, t0, t1)
    if len(chosen) > limit:
        return gantt_aggregate(result, chosen, title, t0, t1)
    placements = sorted(chosen, key=lambda p: (p["start"], p["end"], p["job_id"], p["role"]))
    shown = placements
    servers = [s["id"] for s in result["servers"] if not server or server in s["id"]]
    notes = []
    total = len(all_placements) if total is None else total
    if len(chosen) < total:
        notes.append(f"{len(chosen):,} of {total:,} placements")
    if len(servers) > MAX_IDLE_ROWS or job:  # leave out the rows that would stay empty
        used = {p["server"] for p in shown}
        if len(used) < len(servers) and len(servers) > MAX_IDLE_ROWS:
            notes.append(f"{len(servers) - len(used):,} idle servers not shown")
        servers = [sid for sid in servers if sid in used]
    lanes, lane_count = assign_lanes(shown)
    rows = {sid: i for i, sid in enumerate(servers)}
    slot_seconds = result.get("slot_seconds") or 1
    bars = _bars(shown, rows, lanes, lane_count, slot_seconds)
    order = {role: i for i, role in enumerate(ROLES)}
    outline = 1 if len(shown) <= OUTLINE_BARS else 0  # white edges part adjacent bars; on thin bars they hide them
    labels = len(shown) <= LABEL_BARS
    roles = sorted(bars, key=lambda r: order.get(r, len(order)))
    # Legend entries in a neutral grey (bars are coloured by job, so a role trace's own legend
    # swatch would show some job's colour); each toggles its role's bars (same legend group).
    data = [_legend_entry(role) for role in roles]
    data += [_bar_trace(role, bars[role], outline, labels) for role in roles]
    shown_jobs = {p["job_id"] for p in shown}  # suspensions of the jobs on the chart only (100k segments: 0.7 s)
    own = {"placements": [p for p in result["placements"] if p["job_id"] in shown_jobs]}
    susp = [s for s in suspensions(own) if s[1] in rows]
    if susp:
        data.append(_suspended_trace(susp, rows, slot_seconds))
    row_px = min(90, max(48, 20 * max(lane_count.values(), default=1)))
    xaxis: dict[str, Any] = {"title": {"text": f"time (slots of {slot_seconds:g} s)"}, "rangemode": "tozero"}
    if t0 is not None or t1 is not None:
        lo = t0 if t0 is not None else 0
        hi = t1 if t1 is not None else max((p["end"] for p in shown), default=lo + 1)
        xaxis["range"] = [lo, hi]
    layout: dict[str, Any] = {
        "title": {"text": title + (f" ({'; '.join(notes)})" if notes else ""), "x": 0, "xanchor": "left"},
        "barmode": "overlay",
        "showlegend": True,
        "legend": {"orientation": "h", "x": 1, "xanchor": "right", "y": 1.0, "yanchor": "bottom"},
        "xaxis": xaxis,
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
        "meta": {"view": "bars", "segments": len(shown)},
    }
    if not placements:
        layout["annotations"] = [
            {"text": "no placements", "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5, "showarrow": False}
        ]
    return {"data": data, "layout": layout}


def _suspended_trace(
    susp: Sequence[tuple[str, str, int, int]], rows: Mapping[str, int], slot_seconds: float
) -> dict[str, Any]:
    """Thin grey bars below a server's row: a job that ran there was suspended over that interval."""
    return {
        "type": "bar",
        "orientation": "h",
        "name": "suspended",
        "y": [rows[s] + ROW_SPAN / 2 + 0.06 for s in (x[1] for x in susp)],
        "base": [x[2] for x in susp],
        "x": [x[3] - x[2] for x in susp],
        "width": [0.08] * len(susp),
        "customdata": [[x[0], x[2], x[3], clock(x[2] * slot_seconds), clock(x[3] * slot_seconds)] for x in susp],
        "marker": {"color": "#9ca3af"},
        "hovertemplate": (
            "<b>job %{customdata[0]}</b> suspended<br>slots [%{customdata[1]}, %{customdata[2]})<br>"
            "%{customdata[3]} – %{customdata[4]}<extra></extra>"
        ),
    }


def gantt_aggregate(
    result: Mapping[str, Any],
    placements: Sequence[Mapping[str, Any]],
    title: str,
    t0: float | None,
    t1: float | None,
    bins: int = AGGREGATE_BINS,
) -> dict[str, Any]:
    """A heat map: per server and time bin, the mean number of busy GPUs (or of placed instances
    when no placement uses GPUs). One trace whatever the number of segments."""
    server_ids = [s["id"] for s in result["servers"]]
    index = {sid: i for i, sid in enumerate(server_ids)}
    cols = Columns(
        server=np.array([index[p["server"]] for p in placements], dtype=np.int64),
        count=np.array([p["count"] for p in placements], dtype=float),
        gpu=np.array([p.get("demand", {}).get("gpu", np.nan) for p in placements], dtype=float),
        start=np.array([p["start"] for p in placements], dtype=float),
        end=np.array([p["end"] for p in placements], dtype=float),
    )
    return aggregate_columns(server_ids, result.get("slot_seconds"), cols, title, t0, t1, bins)


@dataclass(frozen=True)
class Columns:
    """Placement segments as arrays (one entry per segment); ``gpu`` is NaN where a placement's
    demand has no GPU entry."""

    server: np.ndarray
    count: np.ndarray
    gpu: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def take(self, rows: np.ndarray) -> Columns:
        return Columns(self.server[rows], self.count[rows], self.gpu[rows], self.start[rows], self.end[rows])


def aggregate_columns(
    server_ids: Sequence[str],
    slot_seconds: float | None,
    c: Columns,
    title: str,
    t0: float | None,
    t1: float | None,
    bins: int = AGGREGATE_BINS,
) -> dict[str, Any]:
    """The heat map of ``gantt_aggregate`` from arrays: each segment adds ``amount x overlap /
    width`` to the bins it overlaps (whole bins through a difference array, the partial bins at
    its two ends directly), so the cost is O(segments + servers x bins)."""
    n = len(c.start)
    lo = float(t0) if t0 is not None else float(c.start.min())
    hi = float(t1) if t1 is not None else float(c.end.max())
    hi = max(hi, lo + 1)
    width = (hi - lo) / bins
    uses_gpu = bool(n) and not bool(np.isnan(c.gpu).all())
    amount = c.count * (np.nan_to_num(c.gpu, nan=0.0) if uses_gpu else 1.0)
    used = np.unique(c.server)  # rows in the cluster's server order
    row_of = np.full(len(server_ids), -1, dtype=np.int64)
    row_of[used] = np.arange(len(used))
    s, e = np.maximum(c.start, lo), np.minimum(c.end, hi)
    keep = (amount != 0) & (e > s)
    rows, amt, s, e = row_of[c.server[keep]], amount[keep], s[keep], e[keep]
    first = np.floor((s - lo) / width).astype(np.int64)
    last = np.minimum(bins - 1, np.floor((e - lo) / width).astype(np.int64))
    z = np.zeros((len(used), bins))
    diff = np.zeros((len(used), bins + 1))
    one = first == last
    np.add.at(z, (rows[one], first[one]), amt[one] * (e[one] - s[one]) / width)
    many = ~one
    r, a, f, la = rows[many], amt[many], first[many], last[many]
    np.add.at(z, (r, f), a * (np.minimum(e[many], lo + (f + 1) * width) - s[many]) / width)
    tail = np.maximum(e[many] - (lo + la * width), 0.0)
    np.add.at(z, (r, la), a * tail / width)
    np.add.at(diff, (r, f + 1), a)  # whole bins first+1 .. last-1
    np.add.at(diff, (r, la), -a)
    z += np.cumsum(diff, axis=1)[:, :bins]
    unit = "busy GPUs" if uses_gpu else "placed instances"
    note = f"aggregate view of {n:,} segments: {unit} per server; filter or narrow the window to see bars"
    return {
        "data": [
            {
                "type": "heatmap",
                "z": np.round(z, 3).tolist(),
                "x": [round(lo + (b + 0.5) * width, 3) for b in range(bins)],
                "y": [server_ids[i] for i in used],
                "colorscale": "Blues",
                "colorbar": {"title": {"text": unit}},
                "hovertemplate": "%{y}, slot %{x:.0f}: %{z:.2f} " + unit + "<extra></extra>",
            }
        ],
        "layout": {
            "title": {"text": f"{title} ({note})", "x": 0, "xanchor": "left"},
            "xaxis": {"title": {"text": f"time (slots of {slot_seconds or 1:g} s)"}},
            "yaxis": {"autorange": "reversed", "automargin": True},
            "height": min(MAX_HEIGHT, 160 + 14 * len(used)),
            "margin": {"l": 20, "r": 20, "t": 60, "b": 50},
            "meta": {"view": "aggregate", "segments": n},
        },
    }


def gantt_from_index(
    index: Mapping[str, Any],
    title: str = "",
    job: str = "",
    server: str = "",
    t0: float | None = None,
    t1: float | None = None,
    max_bars: int | None = None,
) -> dict[str, Any]:
    """``gantt`` on a compact index (``webapp.runstore.gantt_index``): filters with array masks,
    the aggregate view straight from the arrays, and placement dicts built only for the jobs a
    bar chart shows. Gives the same figure as ``gantt`` on the full result."""
    p = index["placements"]
    names, servers = index["names"], index["servers"]
    J, S = np.asarray(p["job"], dtype=np.int64), np.asarray(p["server"], dtype=np.int64)
    A, B = np.asarray(p["start"], dtype=float), np.asarray(p["end"], dtype=float)
    mask = np.ones(len(J), dtype=bool)
    if job:
        mask &= np.array([job in name for name in names], dtype=bool)[J]
    if server:
        mask &= np.array([server in sid for sid in servers], dtype=bool)[S]
    if t0 is not None:
        mask &= t0 < B
    if t1 is not None:
        mask &= t1 > A
    chosen = np.flatnonzero(mask)
    limit = MAX_BARS if max_bars is None else max_bars
    if len(chosen) > limit:
        gpu = np.array([np.nan if g is None else g for g in p["gpu"]], dtype=float)
        cols = Columns(S, np.asarray(p["count"], dtype=float), gpu, A, B).take(chosen)
        return aggregate_columns(servers, index["slot_seconds"], cols, title, t0, t1)
    shown_jobs = np.unique(J[chosen])
    rows = np.flatnonzero(np.isin(J, shown_jobs))  # all segments of the shown jobs (suspensions)
    sub = {k: [v[i] for i in rows] for k, v in p.items()}
    from webapp.runstore import gantt_doc

    doc = gantt_doc({**index, "placements": sub})
    return gantt(doc, title, job, server, t0, t1, max_bars, total=len(J))


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
        b["color"].append(job_colour(p["job_id"]))
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


def _legend_entry(role: str) -> dict[str, Any]:
    name, _, pattern = ROLES.get(role, (role, "#888888", ""))
    return {
        "type": "bar",
        "orientation": "h",
        "name": name,
        "legendgroup": role,
        "x": [None],
        "y": [None],
        "marker": {"color": "#6b7280", "pattern": {"shape": pattern, "solidity": 0.4}},
        "hoverinfo": "skip",
    }


def _bar_trace(role: str, b: Mapping[str, list[Any]], outline: float, labels: bool = True) -> dict[str, Any]:
    name, _, pattern = ROLES.get(role, (role, "#888888", ""))
    columns = {k: v for k, v in b.items() if k != "color"}
    return {
        "type": "bar",
        "orientation": "h",
        "name": name,
        "legendgroup": role,
        "showlegend": False,
        **columns,
        "marker": {
            "color": b["color"],  # bars are coloured by job; PS bars are hatched
            "line": {"color": "#ffffff", "width": outline},
            "pattern": {"shape": pattern, "solidity": 0.4},
        },
        "textposition": "inside" if labels else "none",  # job ids stay in the hover and the bar colour
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

JOB_PALETTE = (
    "#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac",
    "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79", "#637939",
)  # fmt: skip
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


# ---------------------------------------------------------------------------------------------
# Summary table: best value per column (issue 7). Lower is better for times, higher for counts
# of done work, utility and utilisation; columns without a direction are not marked.

LOWER_BETTER = {"avg_jct", "total_jct", "total_weighted_completion", "total_weighted_jct", "makespan", "preemptions"}
HIGHER_BETTER = {"admitted", "completed", "total_utility", "utilization"}


def sort_key(value: Any) -> float | str:
    """The value a table cell sorts by (utilisation: the mean share over resources)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, Mapping):
        return float(sum(value.values()) / len(value)) if value else 0.0
    return str(value)


def summary_table(rows: Sequence[tuple[int, str, Mapping[str, Any], Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Rows (run id, algorithm, params, metrics) -> table rows whose cells carry text, sort key, best flag."""
    best: dict[str, float] = {}
    for key, _ in METRIC_COLUMNS:
        values = [v for _, _, _, m in rows if isinstance(v := sort_key(m.get(key)), float)]
        if len(values) >= 2 and key in LOWER_BETTER:
            best[key] = min(values)
        elif len(values) >= 2 and key in HIGHER_BETTER:
            best[key] = max(values)
    table = []
    for run_id, algorithm, params, metrics in rows:
        cells = []
        for key, _ in METRIC_COLUMNS:
            k = sort_key(metrics.get(key))
            cells.append({"text": format_value(metrics.get(key)), "sort": k, "best": key in best and k == best[key]})
        table.append({"run": run_id, "algorithm": algorithm, "params": format_params(params), "cells": cells})
    return table


# ---------------------------------------------------------------------------------------------
# JCT comparison

BAR_METRICS = (
    ("avg_jct", "average JCT (slots)"),
    ("total_jct", "total JCT (slots)"),
    ("total_weighted_completion", "Σ w·C (slots)"),
    ("total_utility", "total utility"),
)


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


def metric_bars(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """One bar chart per metric of BAR_METRICS, a bar per run (metrics missing everywhere: no chart)."""
    figures = []
    for key, title in BAR_METRICS:
        values = [doc["metrics"].get(key) for _, doc in runs]
        if all(v is None for v in values):
            continue
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
            )
        )
    return figures


def jcts(doc: Mapping[str, Any]) -> dict[str, int]:
    """JCT (slots) of each completed job, by job id."""
    return {j["job_id"]: j["completion"] - j["arrival"] for j in doc["jobs"] if j["completion"] is not None}


def jct_box(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    data = [
        {
            "type": "box",
            "name": label,
            "y": list(jcts(doc).values()),
            "marker": {"color": PALETTE[i % len(PALETTE)]},
            "boxpoints": False,
        }
        for i, (label, doc) in enumerate(runs)
    ]
    return _small("JCT per completed job (box)", data, yaxis={"title": {"text": "JCT (slots)"}, "type": "log"})


def jct_scatter(a: tuple[str, Mapping[str, Any]], b: tuple[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Per-job JCT of run ``a`` (x) against run ``b`` (y), jobs completed by both; the diagonal drawn."""
    ja, jb = jcts(a[1]), jcts(b[1])
    common = sorted(set(ja) & set(jb))
    xs, ys = [ja[j] for j in common], [jb[j] for j in common]
    top = max([*xs, *ys, 1])
    return {
        "data": [
            {
                "type": "scattergl" if len(common) > 2000 else "scatter",
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
                "text": f"JCT per job: {a[0]} vs {b[0]} ({len(common):,} jobs completed by both)",
                "font": {"size": 14},
            },
            "xaxis": {"title": {"text": f"{a[0]} JCT (slots)"}},
            "yaxis": {"title": {"text": f"{b[0]} JCT (slots)"}},
            "height": 420,
            "showlegend": False,
            "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
        },
    }


def timeliness(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any] | None:
    """For utility-based runs: share of jobs by utility earned (completed late earns less, rejected 0)."""
    data = []
    for i, (label, doc) in enumerate(runs):
        utilities = [j["utility"] for j in doc["jobs"]]
        if not any(utilities):
            continue
        data.append(
            {
                "type": "histogram",
                "name": label,
                "x": utilities,
                "opacity": 0.6,
                "marker": {"color": PALETTE[i % len(PALETTE)]},
                "histnorm": "percent",
            }
        )
    if not data:
        return None
    fig = _small("Completion timeliness: utility earned per job", data, barmode="overlay")
    fig["layout"].update(
        showlegend=True,
        legend={"orientation": "h"},
        xaxis={"title": {"text": "utility"}},
        yaxis={"title": {"text": "% of jobs"}},
    )
    return fig


# ---------------------------------------------------------------------------------------------
# Over time: admissions, completions, suspensions (preemptions derived from placements)


def suspensions(doc: Mapping[str, Any]) -> list[tuple[str, str, int, int]]:
    """(job, server it last ran on, start, end) of each interval in which a started, unfinished job
    held no resources: the union of its placements has a gap there."""
    by_job: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for p in doc["placements"]:
        by_job[p["job_id"]].append(p)
    out = []
    for job, segs in by_job.items():
        segs.sort(key=lambda p: (p["start"], p["end"]))
        reach, last_server = segs[0]["end"], segs[0]["server"]
        for p in segs[1:]:
            if p["start"] > reach:
                out.append((job, last_server, reach, p["start"]))
            if p["end"] >= reach:
                reach, last_server = p["end"], p["server"]
    return sorted(out, key=lambda s: (s[2], s[0]))


def _steps(times: Sequence[int]) -> tuple[list[int], list[int]]:
    xs = sorted(times)
    return xs, list(range(1, len(xs) + 1))


def events_over_time(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Cumulative admissions (at arrival) and completions, and suspensions, over time: a line per run."""
    admitted, suspended = [], []
    for i, (label, doc) in enumerate(runs):
        colour = PALETTE[i % len(PALETTE)]
        xs, ys = _steps([j["arrival"] for j in doc["jobs"] if j["admitted"]])
        admitted.append(
            {
                "type": "scatter",
                "mode": "lines",
                "line": {"shape": "hv", "color": colour},
                "name": label,
                "x": xs,
                "y": ys,
            }
        )
        xs, ys = _steps([j["completion"] for j in doc["jobs"] if j["completion"] is not None])
        admitted.append(
            {
                "type": "scatter",
                "mode": "lines",
                "line": {"shape": "hv", "color": colour, "dash": "dot"},
                "name": label + " (completed)",
                "x": xs,
                "y": ys,
            }
        )
        xs, ys = _steps([s[2] for s in suspensions(doc)])
        suspended.append(
            {
                "type": "scatter",
                "mode": "lines",
                "line": {"shape": "hv", "color": colour},
                "name": label,
                "x": xs,
                "y": ys,
            }
        )
    common = {"xaxis": {"title": {"text": "slot"}}, "showlegend": True, "legend": {"orientation": "h"}}
    return [
        _small("Admitted (solid, at arrival) and completed (dotted) jobs, cumulative", admitted, **common),
        _small("Suspensions (a started job left without resources), cumulative", suspended, **common),
    ]


# ---------------------------------------------------------------------------------------------
# Sweeps: a metric against the swept parameter, one line per algorithm


def sweep_charts(param: str, points: Sequence[tuple[str, Any, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """``points``: (algorithm, swept value, metrics) of each done run."""
    algorithms = list(dict.fromkeys(a for a, _, _ in points))
    figures = []
    for key, title in (*BAR_METRICS, ("makespan", "makespan (slots)"), ("completed", "completed jobs")):
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
                    legend={"orientation": "h"},
                )
            )
    return figures


# ---------------------------------------------------------------------------------------------
# Prices (schema mlsched.prices/1, scheduling/prices.py)


def price_lines(prices: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per resource, mean and max price of the current and upcoming slots after each decision."""
    figures = []
    n = len(prices["decisions"])
    admitted = [d["admitted"] for d in prices["decisions"]]
    for resource in prices["resources"]:
        s = prices["summary"][resource]
        x = list(range(n))
        data = [
            {"type": "scatter", "mode": "lines", "name": "mean", "x": x, "y": s["mean"], "line": {"color": PALETTE[0]}},
            {"type": "scatter", "mode": "lines", "name": "max", "x": x, "y": s["max"], "line": {"color": PALETTE[1]}},
            {
                "type": "scatter",
                "mode": "markers",
                "name": "rejected",
                "x": [i for i in x if not admitted[i]],
                "y": [s["max"][i] for i in x if not admitted[i]],
                "marker": {"color": PALETTE[3], "symbol": "x", "size": 6},
            },
        ]
        figures.append(
            _small(
                f"{resource}: {prices.get('label') or 'price'} over the decisions (slots t.. of the window)",
                data,
                xaxis={"title": {"text": "decision"}},
                showlegend=True,
                legend={"orientation": "h"},
            )
        )
    return figures
