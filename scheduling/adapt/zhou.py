"""Rigid GPU jobs as Zhou et al.'s elastic PS / Ring-AllReduce jobs on typed workers (seeds/002, Sec. 7).

The paper's jobs have E_j epochs of D_j chunks of K_j mini-batches, a time v_jm per mini-batch on
each worker type m and an update time U_j^p per PS type (PS) or U_j (all-reduce, eq. (14)); its
cluster has M worker types and P PS types of GPU/vCPU/bandwidth demands, with one-hour slots.
Here a job's D_j is its GPUs (each worker trains one chunk, Zhou (2g)); its model profile gives
v (on a V100), K, U and the gradient size; the worker types are the servers' GPU models, v_jm =
v / the model's speed; E_j makes the ideal duration (D_j workers of its fastest type on the fewest
servers, eq. (1) or (14)) the recorded one; w_j is drawn in Sec. 7's [200, 5000].
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from scheduling.adapt.common import (
    PAPER_SLOT_SECONDS,
    Adapted,
    Assumption,
    arrival_in,
    base_row,
    draw,
    gpu_models,
    gpu_servers,
    gpus_of,
    ideal_step,
    model_of,
    number,
    profile_assumption,
    profile_for,
    rigid_or_refused,
    server_entry,
    size_for,
    speed_assumption,
    speed_of,
    target_slots,
    type_id,
)
from scheduling.loaders import cluster_from_dict, job_from_row
from scheduling.model import Cluster, Job

WORKER_GBPS = 1.0  # b_m of every worker type: the preset's one-GPU V100 type (v100-1, 1 Gbps)
PS_GBPS = 5.0  # B_p of the PS type: the preset's smallest PS type (ps-1, 1 vCPU, 5 Gbps)
WEIGHTS = (200, 5000)  # w_j, Sec. 7 "Settings"


def server_gbps(gpus: int) -> float:
    """A server's bandwidth, Gbps: the EC2 shapes of Sec. 7 (p3.16xlarge: 8 GPUs, 25 Gbps; smaller: 10)."""
    return 25.0 if gpus >= 8 else 10.0


def model_resource(gpu_model: str) -> str:
    return "gpu-" + (re.sub(r"[^a-z0-9]+", "-", gpu_model.lower()).strip("-") or "gpu")


def slot_seconds(cluster: Cluster, jobs: Sequence[Job], cells_per_slot: int) -> float:
    """Whole hours, at least one (Sec. 7's slot), long enough that zhou's price table fits: A_online's
    doubling round at slot t has length tau = the largest power of 2 <= t, and a sub-round keeps a
    price per (resource, server, slot) of it, at most ``MAX_PRICE_CELLS``; the rounds reach the
    latest recorded end (arrival + duration) at least, so that end is kept within the budget."""
    from scheduling.algorithms.zhou.online import MAX_PRICE_CELLS

    old = cluster.slot_seconds
    latest = max(((j.arrival + (j.duration or 0)) * old for j in jobs), default=0.0)
    hours = 1
    while True:
        slot = max(old, PAPER_SLOT_SECONDS * hours)
        tau = 1 << max(0, math.ceil(latest / slot)).bit_length()  # the power of 2 above the latest end
        if cells_per_slot * tau <= MAX_PRICE_CELLS or tau <= 2:
            return slot
        hours = max(hours + 1, math.ceil(hours * cells_per_slot * tau / MAX_PRICE_CELLS))


def cluster_spec(cluster: Cluster, label: str, ps: bool, jobs: Sequence[Job]) -> dict[str, Any]:
    servers = gpu_servers(cluster, label)
    models = gpu_models(servers)
    typed = len(models) > 1  # one resource per GPU model keeps each type on its own servers
    resources = [{"name": "gpu", "unit": "GPU"}]
    resources += [{"name": model_resource(m), "unit": "GPU"} for m in models] if typed else []
    resources.append({"name": "bw", "unit": "Gbps"})
    entries = []
    for s in servers:
        g = gpus_of(s)
        capacity: dict[str, float] = {"gpu": g, **({model_resource(model_of(s)): g} if typed else {})}
        capacity["bw"] = server_gbps(g)
        entries.append(server_entry(s, capacity))
    worker_types = []
    for m in models:
        demand: dict[str, float] = {"gpu": 1, **({model_resource(m): 1} if typed else {}), "bw": WORKER_GBPS}
        worker_types.append({"id": type_id(m), "demand": demand, "bandwidth_gbps": WORKER_GBPS})
    doc: dict[str, Any] = {
        "slot_seconds": number(slot_seconds(cluster, jobs, len(resources) * len(entries))),
        "resources": resources,
        "servers": entries,
        "worker_types": worker_types,
    }
    if ps:
        doc["ps_types"] = [{"id": "ps", "demand": {"bw": PS_GBPS}, "bandwidth_gbps": PS_GBPS}]
    return doc


def adapt(cluster: Cluster, jobs: Sequence[Job], seed: int, label: str, arch: str) -> Adapted:
    """``arch``: "ps" (model zhou-ps) or "allreduce" (zhou-allreduce)."""
    ps = arch == "ps"
    kept, refused = rigid_or_refused(jobs)
    doc = cluster_spec(cluster, label, ps, kept)
    new = cluster_from_dict(doc)
    models = gpu_models(gpu_servers(cluster, label))
    rows = []
    for job in kept:
        assert job.gpus is not None
        profile = profile_for(job, seed)
        row = base_row(job, arrival_in(job, cluster.slot_seconds, new.slot_seconds))
        row.update(
            arch=arch,
            weight=int(draw(seed, "weight", job.job_id).integers(WEIGHTS[0], WEIGHTS[1] + 1)),
            chunks=job.gpus,
            gpu_request=job.gpus,
            batch_time={type_id(m): number(profile.batch_seconds / speed_of(m)) for m in models},
            ps_update=profile.update_seconds,
            gradient_mb=profile.gradient_mb,
        )
        probe = job_from_row(row, new)
        step = min(ideal_step(new, probe, type_id(m), job.gpus, "ps" if ps else None) for m in models)
        epochs, minibatches = size_for(
            target_slots(job, cluster.slot_seconds, new.slot_seconds), step, profile.minibatches
        )
        row.update(epochs=epochs, minibatches=minibatches)
        rows.append(row)
    assumptions = [
        Assumption(
            "slot_seconds",
            doc["slot_seconds"],
            "whole hours (Zhou et al. Sec. 7: one-hour slots; at least the cluster's), the fewest that keep zhou's "
            "price table (resources x servers x the doubling round that reaches the latest recorded end) within "
            "its 2,000,000 entries",
        ),
        Assumption("arch", arch, f"model zhou-{'ps' if ps else 'allreduce'} (Sec. 3 PS, Sec. 6 Ring-AllReduce)"),
        Assumption("chunks", "gpus", "D_j = the job's GPUs: each worker trains one chunk (Zhou (2g))"),
        Assumption("gpu_request", "gpus", "the fixed worker count of the fixed-configuration baselines"),
        Assumption(
            "epochs, minibatches",
            "E_j K_j step = recorded duration",
            "K_j = the profile's mini-batches per chunk (fewer if K step > 1 slot), "
            "E_j = floor(duration / (K_j step)); "
            "step = slots per mini-batch of one worker with D_j workers of the fastest type on the fewest servers "
            "(eq. (1) / (14), scheduling.speed)",
        ),
        Assumption("worker_types", [type_id(m) for m in models], "one per GPU model of the servers (M types)"),
        Assumption("worker_demand", {"gpu": 1, "bw": WORKER_GBPS}, "Sec. 7's one-GPU V100 type (1 GPU, 1 Gbps)"),
        Assumption("batch_time", "profile batch_seconds / gpu_speed", "v_jm per worker type"),
        speed_assumption(models),
        profile_assumption(),
        Assumption("server_bw_gbps", {"8+ GPUs": 25, "fewer": 10}, "EC2 P3 shapes of Sec. 7 (p3.16xlarge, p3.8xlarge)"),
        Assumption("weight", list(WEIGHTS), "w_j uniform integer in Sec. 7's [200, 5000], drawn per job id"),
        Assumption("horizon", None, "none: the objective is every job's weighted completion time"),
        Assumption(
            "network.ps_bandwidth_reservation",
            0,
            "not declared: constraint (2i) does not bind (the zhou-ps preset declares it; docs/formats.md)",
        ),
    ]
    if ps:
        assumptions.append(
            Assumption(
                "ps_types", {"ps": {"bw": PS_GBPS}}, "one PS type: Sec. 7's smallest (ps-1, 5 Gbps), on any server"
            )
        )
        assumptions.append(Assumption("ps_update", "profile update_seconds", "U_j^p on the one PS type"))
    else:
        assumptions.append(Assumption("ps_update", "profile update_seconds", "U_j of eq. (14)"))
    if len(models) > 1:
        assumptions.append(
            Assumption(
                "gpu_model_resources", [model_resource(m) for m in models], "keep each worker type on its GPU model"
            )
        )
    return Adapted(doc, rows, assumptions, refused)
