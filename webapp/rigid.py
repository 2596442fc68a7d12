"""Which parameters a run's page lists: on a trace of rigid jobs only (an imported production
trace: every job has ``gpus`` and ``duration``, scheduling/model.py ``Job.rigid``), the baselines'
elastic worker parameters change nothing (a rigid job always gets the GPUs its trace asked for), so
the run table leaves them out and says so."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from typing import Any

JSON_CHECK_BYTES = 2_000_000  # a JSON trace is read whole to tell; beyond this size it is not


def elastic_params() -> frozenset[str]:
    """The baselines' worker parameters, which act only on elastic jobs."""
    from scheduling.algorithms.baselines import WORKER_PARAMS

    return frozenset(p.name for p in WORKER_PARAMS)


def all_rigid(trace_name: str, trace_text: str) -> bool:
    """Whether every job of the trace is rigid: a CSV whose header has ``gpus`` and ``duration`` and
    no column of an elastic job's work (``epochs``, ``chunks``, ``minibatches``); a JSON list whose
    every job states ``gpus`` and ``duration``. False when it cannot tell cheaply."""
    if trace_name.lower().endswith(".json"):
        if len(trace_text) > JSON_CHECK_BYTES:
            return False
        try:
            jobs = json.loads(trace_text)
        except ValueError:
            return False
        return (
            isinstance(jobs, list)
            and bool(jobs)
            and all(isinstance(j, dict) and j.get("gpus") is not None and j.get("duration") is not None for j in jobs)
        )
    header = next(csv.reader(io.StringIO(trace_text[: trace_text.find("\n") if "\n" in trace_text else None])), [])
    columns = {c.strip() for c in header}
    return {"gpus", "duration"} <= columns and not columns & {"epochs", "chunks", "minibatches"}


def shown_params(params: Mapping[str, Any], rigid: bool) -> tuple[dict[str, Any], list[str]]:
    """(the parameters to list, the names left out because they do not apply)."""
    if not rigid:
        return dict(params), []
    elastic = elastic_params()
    return {k: v for k, v in params.items() if k not in elastic}, sorted(k for k in params if k in elastic)
