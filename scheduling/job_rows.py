"""One job from one trace row (a CSV row unflattened, or a JSON object): ``job_from_row``.
Units are converted here, once: seconds -> slots (docs/formats.md, "Job trace").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from scheduling import gpu_types, records
from scheduling.bounds import MAX_RESTART_SECONDS, MAX_SLOTS, MAX_WORK, MAX_WORKERS, STEP_SECONDS
from scheduling.errors import InputError
from scheduling.model import ARCHITECTURES, SITES, Cluster, Job, Stage, Utility, frozen_amounts
from scheduling.records import record
from scheduling.values import amounts, choice, integer, listed, no_nul, number, shown, text


def _per_type(value: Any, field: str, known: frozenset[str], slot: float) -> dict[str, float]:
    """Seconds per type (or one number for every type) -> slots per type, "*" for any type."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if k != "*" and k not in known:
                raise InputError(
                    f"unknown type {shown(k)} (cluster defines: {listed(sorted(known)) or 'none'})",
                    field=f"{field}.{k}",
                )
            out[str(k)] = _step(v, f"{field}.{k}") / slot
        return out
    return {"*": _step(value, field) / slot}


def _step(value: Any, field: str) -> float:
    """A mini-batch or update time, seconds."""
    return number(value, field, minimum=STEP_SECONDS[0], maximum=STEP_SECONDS[1])


@record
class ClusterNames:
    """The names a trace row is checked against, as sets built once per cluster: a row costs time
    in its own size, not in the cluster's (a trace of 10^5 rows against 10^5 servers)."""

    resources: frozenset[str]
    worker_types: frozenset[str]
    ps_types: frozenset[str]
    delay_keys: frozenset[str]  # what an upload_delay object may name: server ids, sites, "*"

    @classmethod
    def of(cls, cluster: Cluster) -> ClusterNames:
        return cls(
            resources=frozenset(cluster.resource_names()),
            worker_types=frozenset(t.id for t in cluster.worker_types),
            ps_types=frozenset(t.id for t in cluster.ps_types) | {"*"},
            delay_keys=frozenset(s.id for s in cluster.servers) | set(SITES) | {"*"},
        )


_KNOWN_COLUMNS = frozenset(records.names(Job)) | {"priority", "decay", "target", "status", "slot_seconds"}


def job_from_row(row: Mapping[str, Any], cluster: Cluster, names: ClusterNames | None = None) -> Job:
    """One job from a trace row (CSV columns unflattened, or a JSON object); units per formats.md.
    ``names``: ``ClusterNames.of(cluster)``, passed by callers that load many rows."""
    job_id = text(row.get("job_id"), "job_id")
    slot = cluster.slot_seconds
    names = names or ClusterNames.of(cluster)
    resources = names.resources
    for key in row:
        if key not in _KNOWN_COLUMNS:
            raise InputError(f"unknown field (known: {', '.join(sorted(_KNOWN_COLUMNS))})", job=job_id, field=key)
    try:
        kw: dict[str, Any] = {"job_id": job_id, "arrival": integer(row.get("arrival"), "arrival", maximum=MAX_SLOTS)}
        if "arch" in row:
            kw["arch"] = choice(row["arch"], "arch", ARCHITECTURES)
        if "weight" in row:
            kw["weight"] = number(row["weight"], "weight")
        kw["utility"] = _utility(row)
        for key in ("epochs", "chunks", "minibatches"):
            if key in row:
                kw[key] = integer(row[key], key, minimum=1, maximum=MAX_WORKERS if key == "chunks" else MAX_WORK)
        if "batch_time" in row:
            kw["batch_time"] = frozen_amounts(_per_type(row["batch_time"], "batch_time", names.worker_types, slot))
        if "ps_update" in row:
            kw["ps_update"] = frozen_amounts(_per_type(row["ps_update"], "ps_update", names.ps_types, slot))
        if "gradient_mb" in row:
            kw["gradient_mb"] = number(row["gradient_mb"], "gradient_mb")
        for key in ("worker_demand", "ps_demand"):
            if key in row:
                kw[key] = frozen_amounts(amounts(row[key], key, resources))
        if "gpus" in row:
            kw["gpus"] = integer(row["gpus"], "gpus", minimum=1, maximum=MAX_WORKERS)
        if "gpu_request" in row:
            kw["gpu_request"] = integer(row["gpu_request"], "gpu_request", minimum=1, maximum=MAX_WORKERS)
        if "duration" in row:
            kw["duration"] = _duration(row["duration"], slot)
        for key in ("iterations", "predicted_iterations"):
            if key in row:
                kw[key] = integer(row[key], key, maximum=MAX_WORK)
        if "work" in row:
            kw["work"] = number(row["work"], "work", strict=True, maximum=MAX_WORK)
        if "stages" in row:
            kw["stages"] = _stages(row["stages"], slot)
        if "chunk_gb" in row:
            kw["chunk_gb"] = number(row["chunk_gb"], "chunk_gb", strict=True)
        if "upload_delay" in row:
            kw["upload_delay"] = _upload_delays(row["upload_delay"], names.delay_keys)
        if row.get("restart_seconds") not in (None, ""):  # the job's own restart cost (restart_costs)
            kw["restart_seconds"] = number(
                row["restart_seconds"], "restart_seconds", minimum=0, maximum=MAX_RESTART_SECONDS
            )
        if row.get("checkpoint_gb") not in (None, ""):  # a restart cost from the checkpoint size
            kw["checkpoint_gb"] = number(row["checkpoint_gb"], "checkpoint_gb")
        if "gpu_speed" in row:  # speed factors per GPU type (gpu_types)
            kw["gpu_speed"] = gpu_types.parse_job(row["gpu_speed"])
        for key in ("group", "user", "model"):
            if row.get(key) not in (None, ""):
                kw[key] = no_nul(str(row[key]), key)
    except InputError as exc:
        raise InputError(exc.problem, job=job_id, field=exc.field) from None
    if "duration" in kw and "gpus" not in kw:
        raise InputError("a job with a recorded duration also needs gpus", job=job_id, field="gpus")
    job = Job(**kw)
    if job.work_required > MAX_WORK:
        raise InputError(
            f"epochs x chunks x minibatches = {job.work_required:g} mini-batches, more than {MAX_WORK:g}",
            job=job_id,
            field="epochs",
        )
    return job


def _duration(value: Any, slot: float) -> int:
    """A recorded run time in seconds -> whole slots, rounded up (at least 1)."""
    slots = max(1, math.ceil(number(value, "duration", strict=True, maximum=math.inf) / slot - 1e-9))
    if slots > MAX_SLOTS:
        raise InputError(f"{shown(value)} s is more than {MAX_SLOTS:g} slots of {slot:g} s", field="duration")
    return slots


def _upload_delays(value: Any, known: frozenset[str]) -> Mapping[str, int]:
    """Delta_js in whole slots: one number for every server ("*"), or server id / site / "*" -> slots."""
    if not isinstance(value, Mapping):
        return MappingProxyType({"*": integer(value, "upload_delay", maximum=MAX_SLOTS)})
    out = {}
    for k, v in value.items():
        if k not in known:
            raise InputError(
                f"unknown server {k!r} (a server id of the cluster, a site {' or '.join(SITES)}, or *)",
                field=f"upload_delay.{k}",
            )
        out[str(k)] = integer(v, f"upload_delay.{k}", maximum=MAX_SLOTS)
    return MappingProxyType(out)


def _utility(row: Mapping[str, Any]) -> Utility:
    u = row.get("utility")
    src: Mapping[str, Any] = u if isinstance(u, Mapping) else row
    prefix = "utility." if isinstance(u, Mapping) else ""
    kw = {}
    for key in ("priority", "decay", "target"):
        if src.get(key) not in (None, ""):
            kw[key] = number(src[key], prefix + key)
    return Utility(**kw)


def _stages(value: Any, slot: float) -> tuple[Stage, ...]:
    if not isinstance(value, list):
        raise InputError("expected a list of stage objects", field="stages")
    out = []
    for i, s in enumerate(value):
        f = f"stages[{i}]"
        if not isinstance(s, Mapping):
            raise InputError("expected an object", field=f)
        out.append(
            Stage(
                replicas=integer(s.get("replicas", 1), f"{f}.replicas", minimum=1, maximum=MAX_WORKERS),
                forward=number(s.get("forward", 0), f"{f}.forward", maximum=STEP_SECONDS[1]) / slot,
                backward=number(s.get("backward", 0), f"{f}.backward", maximum=STEP_SECONDS[1]) / slot,
                activation_in=number(s.get("activation_in", 0), f"{f}.activation_in"),
                activation_out=number(s.get("activation_out", 0), f"{f}.activation_out"),
                params=number(s.get("params", 0), f"{f}.params"),
            )
        )
    return tuple(out)
