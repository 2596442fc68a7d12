"""Rigid GPU jobs as the edge-cloud paper's PS jobs (seeds/003, Sec. III and V-A "Simulator").

The paper's edge servers hold pre-deployed unit workers (of 8-10 types) and PSs; a cloud with
unlimited workers is further away (a larger upload delay); a job has D_j data chunks, E_j epochs
of B_j mini-batches per chunk, one worker type, m_j per mini-batch, G_j per PS update and q_j MB of
gradients. Here every GPU server is an edge server whose GPUs are its pre-deployed workers, typed
by its GPU model; a job's chunks are its GPUs (its recorded workers each trained one share of the
data), its type is drawn per group among the GPU models (weighted by their GPUs), its profile gives
m_j (on a V100, divided by the type's speed), G_j and q_j, and E_j makes one chunk's processing time
ceil(E_j B_j / n_j) (eq. (1), constraint (4a)) on an edge worker its recorded duration.
"""

from __future__ import annotations

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
from scheduling.speed import processing_capacity

WORKER_MBPS = (100.0, 5 * 1024.0)  # b_j of a worker type, Mbps (Sec. V-A)
EDGE_DELAY = (1, 4)  # upload delay to an edge server, slots (Sec. V-A)
CLOUD_DELAY = (10, 15)  # to the cloud
GPUS_PER_PS = 2  # pre-deployed PSs per edge server: one per 2 GPUs (the preset: one per 8 vCPUs)


def resource(gpu_model: str) -> str:
    return "worker_slot_" + type_id(gpu_model)[2:]


def cluster_spec(cluster: Cluster, label: str, seed: int) -> dict[str, Any]:
    servers = gpu_servers(cluster, label)
    models = gpu_models(servers)
    entries = []
    for s in servers:
        g = gpus_of(s)
        capacity = {"gpu": g, "worker_slot": g, resource(model_of(s)): g, "ps_slot": max(1, g // GPUS_PER_PS)}
        delay = int(draw(seed, "upload_delay", s.id).integers(EDGE_DELAY[0], EDGE_DELAY[1] + 1))
        entries.append(server_entry(s, capacity, site="edge", upload_delay=delay))
    cloud_delay = int(draw(seed, "upload_delay", "cloud").integers(CLOUD_DELAY[0], CLOUD_DELAY[1] + 1))
    entries.append({"id": "cloud", "site": "cloud", "unlimited": True, "capacity": {}, "upload_delay": cloud_delay})
    worker_types = []
    for m in models:
        gbps = round(float(draw(seed, "bandwidth", m).uniform(*WORKER_MBPS)) / 1024.0, 4)
        demand = {"gpu": 1, "worker_slot": 1, resource(m): 1}
        worker_types.append({"id": type_id(m), "demand": demand, "bandwidth_gbps": gbps})
    resources = [
        {"name": "gpu", "unit": "GPU"},
        {"name": "worker_slot", "unit": "workers"},
        {"name": "ps_slot", "unit": "PSs"},
        *({"name": resource(m), "unit": "workers"} for m in models),
    ]
    return {
        "slot_seconds": number(max(cluster.slot_seconds, PAPER_SLOT_SECONDS)),
        "resources": resources,
        "servers": entries,
        "worker_types": worker_types,
        "ps_types": [{"id": "ps", "demand": {"ps_slot": 1}}],
    }


def _worker_type(seed: int, key: str, models: dict[str, int]) -> str:
    """A GPU model drawn per group with probability proportional to its GPUs."""
    names = list(models)
    weights = [models[m] for m in names]
    total = sum(weights)
    u = float(draw(seed, "worker_type", key).uniform()) * total
    acc = 0.0
    for name, w in zip(names, weights, strict=True):
        acc += w
        if u < acc:
            return name
    return names[-1]


def adapt(cluster: Cluster, jobs: Sequence[Job], seed: int, label: str) -> Adapted:
    doc = cluster_spec(cluster, label, seed)
    new = cluster_from_dict(doc)
    models = gpu_models(gpu_servers(cluster, label))
    kept, refused = rigid_or_refused(jobs)
    rows = []
    for job in kept:
        assert job.gpus is not None
        profile = profile_for(job, seed)
        model = _worker_type(seed, job.group or job.user or job.job_id, models)
        row = base_row(job, arrival_in(job, cluster.slot_seconds, new.slot_seconds))
        row.update(
            arch="ps",
            chunks=job.gpus,
            gpu_request=job.gpus,
            batch_time={type_id(model): number(profile.batch_seconds / speed_of(model))},
            ps_update=profile.update_seconds,
            gradient_mb=profile.gradient_mb,
        )
        probe = job_from_row(row, new)
        step = 1.0 / processing_capacity(new, probe, type_id(model), colocated=False)  # slots per mini-batch
        target = target_slots(job, cluster.slot_seconds, new.slot_seconds)
        epochs, minibatches = size_for(target, step, profile.minibatches)
        row.update(epochs=epochs, minibatches=minibatches)
        rows.append(row)
    assumptions = [
        Assumption(
            "slot_seconds", doc["slot_seconds"], "one-hour slots (the edge-cloud preset's; at least the cluster's)"
        ),
        Assumption("edge_servers", "every GPU server, site edge", "edge servers with pre-deployed workers (Sec. III)"),
        Assumption("worker_slot", "the server's GPUs", "one pre-deployed unit worker per GPU"),
        Assumption("ps_slot", f"max(1, GPUs // {GPUS_PER_PS})", "pre-deployed unit PSs per edge server (not given)"),
        Assumption("worker_types", [type_id(m) for m in models], "one per GPU model (the paper's 8-10 types)"),
        Assumption("worker_bandwidth", [w / 1024 for w in WORKER_MBPS], "b_j per type, Gbps, uniform (Sec. V-A)"),
        Assumption("ps_types", {"ps": {"ps_slot": 1}}, "untyped PSs, as the edge-cloud preset"),
        Assumption("cloud", {"unlimited": True, "upload_delay": list(CLOUD_DELAY)}, "one unlimited cloud (Sec. V-A)"),
        Assumption("edge_upload_delay", list(EDGE_DELAY), "slots per edge server, uniform (Sec. V-A)"),
        Assumption("arch", "ps", "PS jobs (Sec. III)"),
        Assumption("chunks", "gpus", "D_j = the job's GPUs: its recorded workers each trained one chunk"),
        Assumption("gpu_request", "gpus", "the fixed worker count of the fixed-configuration baselines"),
        Assumption(
            "worker_type", "drawn per group, weighted by GPUs of each model", "a job names one type (v_jsw = 1 on it)"
        ),
        Assumption("batch_time", "profile batch_seconds / gpu_speed of the job's type", "m_j"),
        Assumption("ps_update, gradient_mb", "profile update_seconds, gradient_mb", "G_j and q_j"),
        speed_assumption(models),
        profile_assumption(),
        Assumption(
            "epochs, minibatches",
            "ceil(E_j B_j / n_j) = recorded duration",
            "B_j = the profile's mini-batches per chunk (fewer if B_j / n_j > 1 slot), "
            "E_j = floor(duration n_j / B_j), "
            "n_j of eq. (1) on an edge worker (zeta_j = 0); in the cloud (zeta_j = 1) a chunk is faster, after the "
            "cloud's upload delay",
        ),
        Assumption("horizon", None, "none: T is large enough to complete all jobs (Sec. V-A)"),
    ]
    return Adapted(doc, rows, assumptions, refused)
