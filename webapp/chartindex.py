"""The chart index of a run: what the JCT and utilisation tabs draw, written beside the result when
the run finishes (as the Gantt index is), so that those tabs never open the full result document.

An 82,000-job result takes seconds to decompress and parse and seconds more to turn its placements
into a utilisation timeline; its chart index is per-job columns (id, arrival, completion, admitted,
utility), the utilisation series already reduced to at most ``downsample.MAX_POINTS`` bin means, and
the suspension start times. The exports still read the full result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduling import results
from webapp.charts import downsample
from webapp.charts.timeline import suspensions

SCHEMA = "mlsched.charts/1"
JOB_FIELDS = ("job_id", "arrival", "completion", "admitted", "utility")


def chart_index(result: Mapping[str, Any]) -> dict[str, Any]:
    utilization = {}
    for resource, points in results.utilization_timeline(result).items():
        xs, ys, width = downsample.step_means(points)
        utilization[resource] = {"x": xs, "y": ys, "width": width}
    return {
        "schema": SCHEMA,
        "slot_seconds": result.get("slot_seconds"),
        "metrics": result["metrics"],
        "jobs": {f: [j.get(f) for j in result["jobs"]] for f in JOB_FIELDS},
        "utilization": utilization,
        "suspension_starts": [s[2] for s in suspensions(result)],
    }


def chart_doc(index: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a result document the JCT and utilisation charts read, rebuilt from the index;
    ``_utilization`` and ``_suspension_starts`` stand for what those charts would derive from the
    placements."""
    cols = index["jobs"]
    jobs = [dict(zip(JOB_FIELDS, row, strict=True)) for row in zip(*(cols[f] for f in JOB_FIELDS), strict=True)]
    return {
        "slot_seconds": index.get("slot_seconds"),
        "metrics": index["metrics"],
        "jobs": jobs,
        "_utilization": index["utilization"],
        "_suspension_starts": index["suspension_starts"],
    }


def chart_index_name(result_name: str) -> str:
    return result_name.removesuffix(".json.gz") + ".charts.json.gz"
