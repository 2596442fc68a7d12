"""The Gantt chart of placements: one row per server, one bar per placement segment (lanes where
segments overlap, a trace per role, suspension marks), or above ``MAX_BARS`` segments an aggregate
heat map (busy GPUs, or placed instances, per server and time bin); also drawn from a run store's compact index."""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from webapp.charts.style import JOB_PALETTE
from webapp.charts.timeline import suspensions

MAX_BARS = 4000  # above this many placement segments (after filters), the Gantt chart is an aggregate heat map
AGGREGATE_BINS = 400  # time bins of the aggregate view
MAX_IDLE_ROWS = 40  # with more servers than this, servers without placements get no row
MAX_HEIGHT = 4000  # pixels
OUTLINE_BARS = 500  # up to this many bars, each gets a white edge
LABEL_BARS = 150  # up to this many bars, each shows its job id (text layout is most of the drawing time)
ROW_SPAN = 0.8  # share of a server's row that its lanes fill
ROW_PX = (48, 90)  # an ordinary row's height in pixels: 20 px per lane of the busiest server, within these bounds
LANE_PX = 6  # a row with more lanes than an ordinary row fits at this size grows to give each lane this many pixels

ROLES = {
    # role -> (legend name, colour, fill pattern): PS bars are hatched so they differ without colour too
    "worker": ("worker", "#4c78a8", ""),
    "ps": ("parameter server (PS)", "#f58518", "/"),
}


BUSY_SCALE = [[0.0, "#f7fbff"], [0.25, "#c6dbef"], [0.5, "#6baed6"], [0.75, "#2171b5"], [1.0, "#08306b"]]


def job_colour(job_id: str) -> str:
    """A stable colour per job (the same job has the same colour in every chart and run)."""
    h = 0
    for ch in job_id:
        h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    return JOB_PALETTE[h % len(JOB_PALETTE)]


def job_matcher(pattern: str) -> Callable[[str], bool]:
    """The Gantt's Job filter: a whole job id, or a pattern with ``*`` and ``?`` (fnmatch). An id is
    never matched by a part of it: "philly-1" is that job, not philly-10, philly-100, ..."""
    if any(c in pattern for c in "*?["):
        return lambda name: fnmatch.fnmatchcase(name, pattern)
    return lambda name: name == pattern


def filter_placements(
    placements: Sequence[Mapping[str, Any]],
    job: str = "",
    server: str = "",
    t0: float | None = None,
    t1: float | None = None,
) -> list[Mapping[str, Any]]:
    """Placements of the jobs ``job`` names (``job_matcher``), on servers whose id contains ``server``,
    that overlap the window [t0, t1) (bars are clipped to the window by the axis range, not cut)."""
    out = []
    wanted = job_matcher(job)
    for p in placements:
        if job and not wanted(p["job_id"]):
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
    rows = row_layout(servers, lane_count)
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
    susp = [s for s in suspensions(own) if s[1] in rows.centre]
    if susp:
        data.append(_suspended_trace(susp, rows, slot_seconds))
    restarting = _restart_bars(result.get("restarts") or [], shown, rows, lanes, lane_count)
    if restarting:
        data.append(_restart_trace(restarting, slot_seconds))
    down = [f for f in result.get("failures") or [] if f["server"] in rows.centre]  # scheduling.failures
    if down:
        data.append(_failure_trace(down, rows, slot_seconds))
    data += _ended_traces(result.get("jobs") or (), shown, rows, lanes, lane_count, slot_seconds)
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
            "tickvals": [rows.centre[sid] for sid in servers],
            "ticktext": servers,
            "range": [rows.bottom, -0.5],
            "showgrid": False,
            "zeroline": False,
            "automargin": True,
        },
        "shapes": [_separator(rows.centre[sid] + rows.size[sid] / 2) for sid in servers[:-1]],
        "height": rows.height_px,
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


@dataclass(frozen=True)
class Rows:
    """The Gantt's y layout: per server, the centre of its row and the row's size in y units (an
    ordinary row is 1 unit; rows run downwards from -0.5 to ``bottom``), and the figure height."""

    centre: dict[str, float]
    size: dict[str, float]
    bottom: float
    height_px: int

    def span(self, server: str) -> float:
        """The part of the server's row that its lanes fill: all but the gap of an ordinary row."""
        return self.size[server] - (1 - ROW_SPAN)

    def lane(self, server: str, lane: int, lanes: int) -> tuple[float, float]:
        """The centre and the bar width of lane ``lane`` of ``lanes`` on ``server``."""
        height = self.span(server) / lanes
        return self.centre[server] - self.span(server) / 2 + (lane + 0.5) * height, height * 0.85


def row_layout(servers: Sequence[str], lane_count: Mapping[str, int]) -> Rows:
    """Variable row heights: every row is at least an ordinary row (20 px per lane of the busiest
    server, within ``ROW_PX``, as when all rows had one height), and a row whose lanes would get
    fewer than ``LANE_PX`` pixels there grows to give each of them ``LANE_PX`` (the unlimited cloud
    server of the edge-cloud preset holds over a hundred at once), keeping an ordinary row's gap
    between its lanes and its neighbours. Above ``MAX_HEIGHT`` the
    figure is capped and all rows shrink in proportion."""
    lanes = {sid: max(1, lane_count.get(sid, 1)) for sid in servers}
    ordinary = min(ROW_PX[1], max(ROW_PX[0], 20 * max(lanes.values(), default=1)))
    size = {sid: max(1.0, n * LANE_PX / ordinary + 1 - ROW_SPAN) for sid, n in lanes.items()}
    centre, top = {}, -0.5
    for sid in servers:
        centre[sid] = top + size[sid] / 2
        top += size[sid]
    height = min(MAX_HEIGHT, round(130 + (top + 0.5) * ordinary))
    return Rows(centre, size, top, height)


def _suspended_trace(susp: Sequence[tuple[str, str, int, int]], rows: Rows, slot_seconds: float) -> dict[str, Any]:
    """Thin grey bars below a server's row: a job that ran there was suspended over that interval."""
    return {
        "type": "bar",
        "orientation": "h",
        "name": "suspended",
        "y": [rows.centre[s] + rows.span(s) / 2 + 0.06 for s in (x[1] for x in susp)],
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


def _restart_bars(
    restarts: Sequence[Mapping[str, Any]],
    placements: Sequence[Mapping[str, Any]],
    rows: Rows,
    lanes: Sequence[int],
    lane_count: Mapping[str, int],
) -> list[tuple[str, float, float, int, int]]:
    """(job, y, height, start, end) of each restart period over each bar its job holds then (the
    allocation is constant during a restart, so the bars that cover its start cover all of it)."""
    by_job: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for r in restarts:
        by_job[r["job_id"]].append((r["start"], r["end"]))
    out = []
    for p, lane in zip(placements, lanes, strict=True):
        for start, end in by_job.get(p["job_id"], ()):
            if p["start"] <= start < p["end"]:
                y, width = rows.lane(p["server"], lane, lane_count[p["server"]])
                out.append((p["job_id"], y, width, start, end))
    return out


def _restart_trace(bars: Sequence[tuple[str, float, float, int, int]], slot_seconds: float) -> dict[str, Any]:
    """Restart periods (DESIGN section 9) drawn over the job's own bars with their own hatch: the
    job holds those servers but makes no progress."""
    return {
        "type": "bar",
        "orientation": "h",
        "name": "restarting (no progress)",
        "y": [b[1] for b in bars],
        "width": [b[2] for b in bars],
        "base": [b[3] for b in bars],
        "x": [b[4] - b[3] for b in bars],
        "customdata": [[b[0], b[3], b[4], clock(b[3] * slot_seconds), clock(b[4] * slot_seconds)] for b in bars],
        "marker": {
            "color": "rgba(255,255,255,0.35)",
            "line": {"color": "#111827", "width": 0.5},
            "pattern": {"shape": "x", "fgcolor": "#111827", "solidity": 0.3},
        },
        "hovertemplate": (
            "<b>job %{customdata[0]}</b> restarting (no progress)<br>slots [%{customdata[1]}, %{customdata[2]})<br>"
            "%{customdata[3]} – %{customdata[4]}<extra></extra>"
        ),
    }


def _failure_trace(down: Sequence[Mapping[str, Any]], rows: Rows, slot_seconds: float) -> dict[str, Any]:
    """Server failures (the cluster's failure trace): the whole row of the server, shaded, while it
    is down; the jobs it stopped are listed in the result's ``failure_kills``."""
    return {
        "type": "bar",
        "orientation": "h",
        "name": "server down (failure)",
        "y": [rows.centre[f["server"]] for f in down],
        "width": [rows.span(f["server"]) for f in down],
        "base": [f["start"] for f in down],
        "x": [f["end"] - f["start"] for f in down],
        "customdata": [
            [f["server"], f["start"], f["end"], clock(f["start"] * slot_seconds), clock(f["end"] * slot_seconds)]
            for f in down
        ],
        "marker": {"color": "rgba(220,38,38,0.25)", "line": {"color": "#b91c1c", "width": 1}},
        "hovertemplate": (
            "<b>server %{customdata[0]}</b> down (failure)<br>slots [%{customdata[1]}, %{customdata[2]})<br>"
            "%{customdata[3]} – %{customdata[4]}<extra></extra>"
        ),
    }


ENDED = {
    # a job the trace records as failed or killed (scheduling.status_replay) -> legend name, symbol
    "failed": ("failed (recorded in the trace)", "x"),
    "killed": ("killed (recorded in the trace)", "diamond-x"),
}


def _ended_traces(
    jobs: Sequence[Mapping[str, Any]],
    placements: Sequence[Mapping[str, Any]],
    rows: Rows,
    lanes: Sequence[int],
    lane_count: Mapping[str, int],
    slot_seconds: float,
) -> list[dict[str, Any]]:
    """A status replay's ended jobs (``outcome``, ``ended``): a marker per outcome at the end of each
    bar the job held until it ended, one trace (and legend entry) per outcome."""
    ended = {j["job_id"]: (j["outcome"], j["ended"]) for j in jobs if j.get("outcome") in ENDED}
    if not ended:
        return []
    marks: dict[str, list[tuple[str, float, int]]] = defaultdict(list)
    for p, lane in zip(placements, lanes, strict=True):
        found = ended.get(p["job_id"])
        if found is not None and p["end"] == found[1]:
            y, _ = rows.lane(p["server"], lane, lane_count[p["server"]])
            marks[found[0]].append((p["job_id"], y, found[1]))
    traces = []
    for outcome, (name, symbol) in ENDED.items():
        m = marks.get(outcome)
        if not m:
            continue
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": name,
                "x": [x[2] for x in m],
                "y": [x[1] for x in m],
                "customdata": [[x[0], x[2], clock(x[2] * slot_seconds)] for x in m],
                "marker": {"symbol": symbol, "size": 11, "color": "#111827", "line": {"color": "#ffffff", "width": 1}},
                "cliponaxis": False,
                "hovertemplate": (
                    f"<b>job %{{customdata[0]}}</b> {outcome} at slot %{{customdata[1]}} (recorded in the trace)<br>"
                    "%{customdata[2]}<extra></extra>"
                ),
            }
        )
    return traces


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
                # ColorBrewer's Blues: idle pale, busy dark (plotly.js's named "Blues" runs dark to pale)
                "colorscale": BUSY_SCALE,
                "zmin": 0,
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
        wanted = job_matcher(job)
        mask &= np.array([wanted(name) for name in names], dtype=bool)[J]
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
    rows: Rows,
    lanes: Sequence[int],
    lane_count: Mapping[str, int],
    slot_seconds: float,
) -> dict[str, dict[str, list[Any]]]:
    """Per role, the column arrays of one horizontal bar trace (y = row and lane, base = start)."""
    bars: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for p, lane in zip(placements, lanes, strict=True):
        y, width = rows.lane(p["server"], lane, lane_count[p["server"]])
        b = bars[p["role"]]
        b["y"].append(y)
        b["width"].append(width)
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
