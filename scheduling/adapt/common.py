"""What every model's adaptation shares (docs/formats.md, "Adapting a rigid trace to a paper's model").

The input is a rigid GPU instance: a cluster whose servers offer ``gpu`` (optionally with a
``gpu_model``) and a trace of rigid jobs (``gpus``, ``duration``; optional ``group``, ``user``,
``model``), as ``import --format generic-gpu`` writes it. Each model module turns the servers into
its paper's cluster and each job into its paper's job, choosing the job's size (epochs, mini-batches,
work) so that its *ideal duration* (every worker it asked for, of its fastest type, placed as well as
the cluster allows, by the engine's own speed model, ``scheduling.speed``) equals its recorded run
time within one slot.

Every draw comes from ``numpy.random.default_rng([seed, sha256(what, key)])`` (``draw``), ``what``
naming the quantity and ``key`` its owner (a job id, a group, a server id), so a job's values do not
depend on which other jobs are in the window or in the history, and the same seed gives the same
files byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scheduling.errors import InputError
from scheduling.importers import PROFILES, Profile
from scheduling.importers import _profile as importers_profile
from scheduling.model import Cluster, Job, Server
from scheduling.speed import Allocation, rate

PAPER_SLOT_SECONDS = 3600.0
"""Zhou et al., OASiS and the edge-cloud paper count time in slots of one hour (their presets'
``slot_seconds``, docs/formats.md "Presets"); their models are adapted onto slots of at least that."""

GPU_SPEED: dict[str, float] = {
    "K80": 0.25,
    "M60": 0.35,
    "T4": 0.45,
    "P100": 0.6,
    "A10": 0.8,
    "V100": 1.0,
    "V100M16": 1.0,
    "V100M32": 1.0,
    "A100": 1.6,
}
"""Mini-batches per second of a GPU model relative to a V100 (the profiles' times are V100 times):
rough ratios of published training throughput (ResNet-50, fp32). A model not listed (Alibaba's
undisclosed G2, G3, or none given) is taken as a V100; adapt.json lists every such server model."""


@dataclass(frozen=True)
class Assumption:
    """One choice the adaptation made: what, its value, where it comes from."""

    name: str
    value: Any
    source: str


@dataclass
class Adapted:
    """What a model module returns: the new cluster spec, the adapted jobs and the record of it."""

    cluster: dict[str, Any]  # the cluster spec (JSON object) as written to cluster.json
    jobs: list[dict[str, Any]]  # trace rows (JSON objects), arrivals in the new cluster's slots
    assumptions: list[Assumption] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)  # {"job_id", "reason"}
    changed: list[dict[str, str]] = field(default_factory=list)  # {"job_id", "change"}
    # Called with the cluster spec and the evaluated jobs after the history is split off (OASiS's
    # horizon T is set from the evaluated jobs only).
    finish: Callable[[dict[str, Any], list[dict[str, Any]]], None] | None = None


def draw(seed: int, salt: str, key: str) -> np.random.Generator:
    """A generator for the values named ``salt`` of ``key`` (a job id, group, server id)."""
    digest = int(hashlib.sha256(f"{salt}\0{key}".encode()).hexdigest()[:16], 16)
    return np.random.default_rng([seed, digest])


def gpu_servers(cluster: Cluster, label: str) -> list[Server]:
    """The servers with GPUs that jobs can run on; InputError naming the cluster file if none."""
    if "gpu" not in cluster.resource_names():
        raise InputError(
            "the cluster declares no 'gpu' resource: adapt needs a GPU cluster", file=label, field="resources"
        )
    out = [s for s in cluster.servers if not s.unlimited and s.accepts("worker") and s.capacity.get("gpu", 0.0) >= 1]
    if not out:
        raise InputError("no server offers a whole GPU to workers", file=label, field="servers")
    return out


def gpus_of(server: Server) -> int:
    return int(server.capacity.get("gpu", 0.0))


def model_of(server: Server) -> str:
    return server.gpu_model or "gpu"


def speed_of(gpu_model: str) -> float:
    return GPU_SPEED.get(gpu_model.upper(), 1.0)


def type_id(gpu_model: str) -> str:
    """A worker type id for a GPU model: ``w-`` and the model in lower case, other characters ``-``."""
    return "w-" + (re.sub(r"[^a-z0-9]+", "-", gpu_model.lower()).strip("-") or "gpu")


def gpu_models(servers: Sequence[Server]) -> dict[str, int]:
    """GPU model -> GPUs of that model, in the order the models first appear."""
    out: dict[str, int] = {}
    for s in servers:
        out[model_of(s)] = out.get(model_of(s), 0) + gpus_of(s)
    return out


def speed_assumption(models: Mapping[str, int]) -> Assumption:
    table = {m: speed_of(m) for m in models}
    unknown = sorted(m for m in models if m.upper() not in GPU_SPEED)
    note = f"; not in the table, taken as a V100: {', '.join(unknown)}" if unknown else ""
    return Assumption(
        "gpu_speed",
        table,
        "mini-batch speed of each GPU model relative to a V100 (scheduling/adapt/common.py GPU_SPEED)" + note,
    )


def recorded_slots(job: Job, old_slot: float, new_slot: float) -> float:
    """The job's recorded run time in the new cluster's slots (its duration as loaded, in old slots)."""
    assert job.duration is not None
    return job.duration * old_slot / new_slot


def target_slots(job: Job, old_slot: float, new_slot: float) -> int:
    """The whole number of new slots the recorded run time occupies (rounded up, at least 1)."""
    return max(1, math.ceil(recorded_slots(job, old_slot, new_slot) - 1e-9))


def arrival_in(job: Job, old_slot: float, new_slot: float) -> int:
    """The arrival in new slots: floor(arrival x old / new), as ``--convert-slots`` converts it."""
    return int(job.arrival * old_slot // new_slot)


def base_row(job: Job, arrival: int) -> dict[str, Any]:
    row: dict[str, Any] = {"job_id": job.job_id, "arrival": arrival}
    for name in ("group", "user", "model"):
        value = getattr(job, name)
        if value is not None:
            row[name] = value
    return row


def rigid_or_refused(jobs: Sequence[Job]) -> tuple[list[Job], list[dict[str, str]]]:
    """The rigid jobs, and a refusal for every other job (a model adapts recorded GPU jobs only)."""
    kept, refused = [], []
    for job in jobs:
        if job.rigid:
            kept.append(job)
        else:
            refused.append({"job_id": job.job_id, "reason": "not a rigid GPU job (adapt needs gpus and duration)"})
    return kept, refused


def server_entry(server: Server, capacity: Mapping[str, float], **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": server.id, "capacity": {k: number(v) for k, v in capacity.items()}}
    if server.gpu_model is not None:
        entry["gpu_model"] = server.gpu_model
    entry.update(extra)
    return entry


def number(x: float) -> int | float:
    """Integers as integers, other values rounded to 9 significant digits (stable text)."""
    if float(x).is_integer():
        return int(x)
    return float(f"{float(x):.9g}")


# ---------------------------------------------------------------------------------------------
# Splitting off the history and writing the files


def split(jobs: Sequence[dict[str, Any]], history_ids: set[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(history, evaluated): the adapted jobs of ``history_ids`` (the leading input jobs by arrival)
    and the others, each sorted by (arrival, job id) and shifted so that its first job arrives at 0."""
    ordered = sorted(jobs, key=lambda j: (j["arrival"], j["job_id"]))
    history = [j for j in ordered if j["job_id"] in history_ids]
    evaluated = [j for j in ordered if j["job_id"] not in history_ids]
    return _rebased(history), _rebased(evaluated)


def _rebased(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not rows:
        return rows
    first = rows[0]["arrival"]
    return [{**r, "arrival": r["arrival"] - first} for r in rows]


def dumps(doc: Any) -> str:
    return json.dumps(doc, indent=1) + "\n"


def write(out: Path, name: str, doc: Any) -> Path:
    path = out / name
    try:
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps(doc), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror})", file=str(path), field="--out") from None
    return path


# ---------------------------------------------------------------------------------------------
# The ideal allocation of a job, by the engine's speed model


def servers_of_type(cluster: Cluster, worker_type: str) -> list[tuple[str, int]]:
    """(server id, instances of ``worker_type`` it holds alone) for every limited server, most first
    (ties in cluster order)."""
    wt = cluster.worker_type(worker_type)
    assert wt is not None, worker_type
    out = []
    for s in cluster.servers:
        if s.unlimited or not s.accepts("worker"):
            continue
        fits = min((s.capacity.get(r, 0.0) / a for r, a in wt.demand.items() if a > 0), default=0.0)
        if int(fits + 1e-9) >= 1:
            out.append((s.id, int(fits + 1e-9)))
    return sorted(out, key=lambda e: -e[1])


def ideal_allocations(
    cluster: Cluster, job: Job, worker_type: str, workers: int, ps_type: str | None
) -> list[Allocation]:
    """``workers`` workers of ``worker_type`` on the fewest servers (most instances first), and one
    PS of ``ps_type`` (if any) on the first of them, or on the first PS-pool server."""
    allocs: list[Allocation] = []
    left = workers
    for server, fits in servers_of_type(cluster, worker_type):
        take = min(left, fits)
        allocs.append(Allocation(job.job_id, server, "worker", worker_type, take))
        left -= take
        if left == 0:
            break
    if left:  # more workers than the cluster holds at once: the rest on the first server (a bound)
        allocs.append(Allocation(job.job_id, allocs[0].server if allocs else "", "worker", worker_type, left))
    if ps_type is not None:
        ps_server = allocs[0].server
        if not cluster.server(ps_server).accepts("ps"):
            ps_server = next(s.id for s in cluster.servers if s.accepts("ps"))
        allocs.append(Allocation(job.job_id, ps_server, "ps", ps_type, 1))
    return allocs


def ideal_step(cluster: Cluster, job: Job, worker_type: str, workers: int, ps_type: str | None) -> float:
    """Slots one worker takes per mini-batch on the ideal allocation (``scheduling.speed.rate``)."""
    return workers / rate(cluster, job, ideal_allocations(cluster, job, worker_type, workers, ps_type))


def size_for(target: int, step: float, most_per_chunk: int) -> tuple[int, int]:
    """(epochs E, mini-batches per chunk K) with E K ``step`` in (target - 1, target] slots: K
    ``step`` <= 1 slot (K = the profile's mini-batches per chunk, fewer if a mini-batch is long)
    and E = floor(target / (K step)), so the ideal duration ceil(E K step) is ``target``."""
    k = max(1, min(most_per_chunk, math.floor(1.0 / step + 1e-9)))
    e = max(1, math.floor(target / (k * step)))
    return e, k


def profile_for(job: Job, seed: int) -> Profile:
    """The job's model profile (``importers.PROFILES``): its own ``model`` when that names a profile
    (the generic-gpu import writes one per group), else one drawn per group as the importer draws it."""
    key = job.group or job.user or job.job_id
    return importers_profile(seed, key, job.model or "")


def profile_assumption() -> Assumption:
    return Assumption(
        "model_profile",
        {
            p.name: {
                "batch_seconds": p.batch_seconds,
                "minibatches": p.minibatches,
                "gradient_mb": p.gradient_mb,
                "update_seconds": p.update_seconds,
            }
            for p in PROFILES
        },
        "the job's model when it names a profile of the generic-gpu import (docs/formats.md, Imports), else one "
        "per group (else user, else job) drawn as that import draws it; times are V100 times",
    )
