"""Events over time: cumulative admissions (at arrival) and completions, and suspensions (intervals
in which a started job held no resources, derived from its placements), a line per run."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from webapp.charts import downsample
from webapp.charts.compare import all_zero
from webapp.charts.style import LEGEND_RIGHT, PALETTE, _small, legend_height, runs_slot_seconds, slot_axis


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


def _steps(times: Sequence[int]) -> tuple[list[float], list[int]]:
    """Cumulative count over time: exact points, at most ``downsample.MAX_POINTS`` of them."""
    return downsample.cumulative(times)


def events_over_time(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Cumulative admissions (at arrival) and completions, and suspensions, over time: a line per run."""
    admitted: list[dict[str, Any]] = []
    suspended: list[dict[str, Any]] = []
    for i, (label, doc) in enumerate(runs):
        colour = PALETTE[i % len(PALETTE)]
        xs, ys = _steps([j["arrival"] for j in doc["jobs"] if j["admitted"]])
        admitted.append(
            {
                "type": "scatter",
                "mode": "lines",
                "line": {"shape": "hv", "color": colour},
                "name": label,
                "legendgroup": label,
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
                "legendgroup": label,  # one legend entry per run: the title tells solid from dotted
                "showlegend": False,
                "x": xs,
                "y": ys,
            }
        )
        starts = doc["_suspension_starts"] if "_suspension_starts" in doc else [s[2] for s in suspensions(doc)]
        xs, ys = _steps(starts)
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
    common = {"xaxis": {"title": {"text": slot_axis("slot", runs_slot_seconds(runs))}}, "showlegend": True,
              "legend": LEGEND_RIGHT, "height": legend_height(len(runs), 300)}  # fmt: skip
    jobs = {"title": {"text": "jobs"}, "rangemode": "tozero"}
    none = all_zero([y for t in suspended for y in t["y"]], "no suspension in any run")
    return [
        _small("Admitted (solid, at arrival) and completed (dotted) jobs, cumulative", admitted, **common, yaxis=jobs),
        _small(
            "Suspensions (a started job left without resources), cumulative",
            suspended,
            **common,
            yaxis={**jobs, **none.pop("yaxis", {})},
            **none,
        ),
    ]
