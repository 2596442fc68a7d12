"""Heterogeneous GPU speed for rigid jobs (docs/formats.md, "GPU types").

A server's ``gpu_model`` names its GPU type. A rigid job's recorded ``duration`` is its run time at
speed factor 1; on a GPU type with factor f it makes f work units per slot. The factor of a job on a
type is, in this order: the job's own ``gpu_speed.<type>`` (a trace column), the cluster's
``gpu_speeds`` row of the job's ``model``, the cluster's ``gpu_speeds`` row ``*``, else 1. This is
Gavel's throughput matrix (Narayanan et al., OSDI'20: throughput per (job type, accelerator type)),
normalised to the type the durations were recorded on. A job whose GPUs span several types runs at
the slowest one's factor (synchronous data parallelism waits for the slowest worker, as Gavel
assumes for a job placed on one type and as ``speed.rate`` does for elastic jobs' worker types).
A server without ``gpu_model`` has factor 1 for every job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from scheduling.errors import InputError
from scheduling.model import Amounts, Cluster, Job, frozen_amounts

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


MAX_FACTOR = 1000.0


def declared(cluster: Cluster, job: Job) -> bool:
    """Whether a speed factor other than 1 may apply to ``job`` on ``cluster`` (cheap)."""
    return bool(cluster.gpu_speeds) or bool(job.gpu_speed)


def factor_on(cluster: Cluster, job: Job, gpu_type: str | None) -> float:
    """The speed factor of ``job`` on one GPU type (the order of the module docstring)."""
    if gpu_type is None:
        return 1.0
    own = job.gpu_speed.get(gpu_type)
    if own is not None:
        return float(own)
    table = cluster.gpu_speeds
    if job.model is not None:
        row = table.get(job.model)
        if row is not None and gpu_type in row:
            return float(row[gpu_type])
    row = table.get("*")
    if row is not None and gpu_type in row:
        return float(row[gpu_type])
    return 1.0


_MODELS: dict[int, tuple[Cluster, dict[str, str | None]]] = {}


def gpu_model_of(cluster: Cluster, server_id: str) -> str | None:
    """The server's ``gpu_model`` (an index built once per cluster)."""
    entry = _MODELS.get(id(cluster))
    if entry is None or entry[0] is not cluster:
        if len(_MODELS) > 64:
            _MODELS.clear()
        entry = _MODELS[id(cluster)] = (cluster, {s.id: s.gpu_model for s in cluster.servers})
    return entry[1].get(server_id)


def factor(cluster: Cluster, job: Job, servers: Iterable[str]) -> float:
    """The speed factor of ``job`` with workers on ``servers``: the slowest type's."""
    return min((factor_on(cluster, job, gpu_model_of(cluster, s)) for s in servers), default=1.0)


def _factors(value: Any, field: str) -> dict[str, float]:
    from scheduling.values import number

    if not isinstance(value, Mapping):
        raise InputError("expected an object {gpu type: speed factor}", field=field)
    return {str(k): number(v, f"{field}.{k}", strict=True, minimum=0, maximum=MAX_FACTOR) for k, v in value.items()}


def parse_table(value: Any) -> Mapping[str, Amounts]:
    """The cluster spec's ``gpu_speeds``: ``{model or "*": {gpu type: factor > 0}}``."""
    if not isinstance(value, Mapping):
        raise InputError('expected an object {model or "*": {gpu type: speed factor}}', field="gpu_speeds")
    rows = {str(model): frozen_amounts(_factors(row, f"gpu_speeds.{model}")) for model, row in value.items()}
    return MappingProxyType(rows)


def parse_job(value: Any) -> Amounts:
    """A trace row's ``gpu_speed`` (columns ``gpu_speed.<type>``)."""
    return frozen_amounts(_factors(value, "gpu_speed"))
