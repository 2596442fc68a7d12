"""Per-job restart costs: what one restart costs a given job (docs/formats.md, "Per-job restart costs").

The simple case is one constant per cluster or run (``Cluster.restart_seconds``, the run's
``restart_seconds``). On top of it a job may have its own cost, found in this order:

1. the job's own ``restart_seconds`` (a trace column);
2. its checkpoint size: ``checkpoint_gb`` (a trace column) / the cluster's ``checkpoint_gbps`` (the
   rate a restart reloads a checkpoint at, GB/s), as Gavel and Blox charge checkpoint save and load;
3. the cluster's ``restart_costs`` table, keyed by model and GPU count as Muri charges: the row of
   the job's model and GPU count, else of its model (any count), else of its GPU count (any model);
4. else the constant.

The engine charges each job its own cost and the validator recomputes it from the instance, so a
result that charges the constant to a job with its own cost is refused.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from scheduling.bounds import MAX_RESTART_SECONDS, MAX_WORKERS
from scheduling.errors import InputError
from scheduling.model import Cluster, Instance, Job, RestartCost

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


EPS = 1e-9


def to_slots(seconds: float, slot_seconds: float) -> int:
    """ceil(seconds / slot_seconds), 0 for no cost."""
    return math.ceil(seconds / slot_seconds - EPS) if seconds > 0 else 0


def parse_table(value: Any) -> tuple[RestartCost, ...]:
    """The cluster spec's ``restart_costs``: a list of ``{model?, gpus?, seconds}`` (a row without
    ``model`` is for any model, without ``gpus`` for any GPU count); no two rows for the same key."""
    if not isinstance(value, list):
        raise InputError("expected a list of {model, gpus, seconds}", field="restart_costs")
    from scheduling.values import integer, no_nul, number

    rows: list[RestartCost] = []
    seen: set[tuple[str | None, int | None]] = set()
    for i, row in enumerate(value):
        f = f"restart_costs[{i}]"
        if not isinstance(row, Mapping):
            raise InputError("expected an object {model, gpus, seconds}", field=f)
        unknown = set(row) - {"model", "gpus", "seconds"}
        if unknown:
            raise InputError(f"unknown key {sorted(unknown)[0]!r} (known: gpus, model, seconds)", field=f)
        if "seconds" not in row:
            raise InputError("missing", field=f"{f}.seconds")
        seconds = number(row["seconds"], f"{f}.seconds", minimum=0, maximum=MAX_RESTART_SECONDS)
        model = None if row.get("model") in (None, "*") else no_nul(str(row["model"]), f"{f}.model")
        gpus = None if row.get("gpus") is None else integer(row["gpus"], f"{f}.gpus", minimum=1, maximum=MAX_WORKERS)
        if model is None and gpus is None:
            raise InputError("a row needs a model or gpus (the constant restart_seconds is for any job)", field=f)
        if (model, gpus) in seen:
            raise InputError(f"a second row for model {model!r} and gpus {gpus!r}", field=f)
        seen.add((model, gpus))
        rows.append(RestartCost(seconds, model, gpus))
    return tuple(rows)


def own_seconds(cluster: Cluster, job: Job) -> float | None:
    """The job's own restart cost (seconds) by the order of the module docstring, or None when the
    constant applies to it."""
    if job.restart_seconds is not None:
        return job.restart_seconds
    if job.checkpoint_gb is not None and cluster.checkpoint_gbps > 0:
        return min(MAX_RESTART_SECONDS, job.checkpoint_gb / cluster.checkpoint_gbps)
    table = cluster.restart_costs
    if not table:
        return None
    best: tuple[int, float] | None = None  # (specificity, seconds)
    for row in table:
        if row.model is not None and row.model != job.model:
            continue
        if row.gpus is not None and row.gpus != job.gpus:
            continue
        rank = (2 if row.model is not None else 0) + (1 if row.gpus is not None else 0)
        if best is None or rank > best[0]:
            best = (rank, row.seconds)
    return None if best is None else best[1]


def declared(instance: Instance) -> bool:
    """Whether the instance declares any per-job restart cost (a table or a trace column)."""
    cluster = instance.cluster
    if cluster.restart_costs:
        return True
    by_size = cluster.checkpoint_gbps > 0
    return any(j.restart_seconds is not None or (by_size and j.checkpoint_gb is not None) for j in instance.jobs)


def job_slots(instance: Instance) -> dict[str, int] | None:
    """Job id -> its own restart cost in slots, for every job that has one; None when the instance
    declares none (every job pays the constant)."""
    if not declared(instance):
        return None
    cluster = instance.cluster
    out: dict[str, int] = {}
    for job in instance.jobs:
        seconds = own_seconds(cluster, job)
        if seconds is not None:
            out[job.job_id] = to_slots(seconds, cluster.slot_seconds)
    return out
