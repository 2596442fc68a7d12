"""Rigid GPU jobs as OASiS jobs (Bao et al., INFOCOM'18, seeds/001, Sec. III and V-A).

OASiS keeps workers and PSs on separate server sets (H worker servers, K PS servers), prices
resources over a horizon of T slots and earns a sigmoid utility per completed job. Here the GPU
servers are the worker pool and as many PS servers are added (H = K, as Sec. V-A's 50 + 50);
each job is a PS job with per-job demands drawn in Sec. V-A's ranges (b_i, B_i, PS vCPUs), a
worker limit N_i = its GPUs and a workload (mini-batches) whose ideal duration (all its workers,
eq. (1) with the communication term, since a PS is never on a worker server) is its recorded one;
utilities follow Sec. V-A's classes with the target counted from the job's ideal duration.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from scheduling.adapt.common import (
    PAPER_SLOT_SECONDS,
    Adapted,
    Assumption,
    arrival_in,
    base_row,
    draw,
    gpu_servers,
    gpus_of,
    number,
    profile_assumption,
    profile_for,
    rigid_or_refused,
    server_entry,
    target_slots,
)
from scheduling.algorithms.common import OWN_DEMAND_TYPE
from scheduling.loaders import cluster_from_dict, job_from_row
from scheduling.model import Cluster, Job
from scheduling.speed import Allocation, rate

WORKER_BW = (0.1, 5.0)  # b_i, Gbps (Sec. V-A)
PS_BW = (5.0, 20.0)  # B_i, Gbps
PS_CPU = (1, 10)  # PS vCPUs
PS_SERVER = {"cpu": 64, "bw": 50}  # a p2.16xlarge-shaped PS server (Sec. V-A's P2/G3 shapes), bw at [20, 50]'s top
GBPS_PER_GPU = 5.0  # worker-server bandwidth per GPU: Sec. V-A's largest b_i, so bandwidth never strands a GPU
PRIORITY = (1.0, 100.0)
CLASSES = (
    (0.10, None),
    (0.55, (0.01, 1.0)),
    (0.35, (4.0, 6.0)),
)  # (share, decay range): insensitive/sensitive/critical
TARGET_SLACK = (1.0, 15.0)  # Sec. V-A's targets in [1, 15] slots, here slots beyond the ideal duration
HORIZON_FACTOR = 1.5
PAPER_T = 300  # "T = 100-300 time slots"; Figs. 3 and 6 use T = 300


def slot_seconds(cluster: Cluster, jobs: Sequence[Job]) -> float:
    """Whole hours, at least one, long enough that HORIZON_FACTOR x the latest recorded end
    (arrival + duration) of the trace spans at most T = 300 slots: Alg. 2's dynamic programme
    keeps a table over the workload for every slot up to T, so T and the workload stay near the
    paper's sizes."""
    old = cluster.slot_seconds
    latest = max(((j.arrival + (j.duration or 0)) * old for j in jobs), default=0.0)
    hours = math.ceil(HORIZON_FACTOR * latest / PAPER_T / PAPER_SLOT_SECONDS - 1e-9)
    return max(old, PAPER_SLOT_SECONDS * max(1, hours))


def cluster_spec(cluster: Cluster, label: str, slot: float) -> dict[str, Any]:
    servers = gpu_servers(cluster, label)
    entries = [server_entry(s, {"gpu": gpus_of(s), "bw": GBPS_PER_GPU * gpus_of(s)}, pool="worker") for s in servers]
    entries += [{"id": f"ps-{k:04d}", "pool": "ps", "capacity": dict(PS_SERVER)} for k in range(len(servers))]
    return {
        "slot_seconds": number(slot),
        "resources": [{"name": "gpu", "unit": "GPU"}, {"name": "cpu", "unit": "vCPU"}, {"name": "bw", "unit": "Gbps"}],
        "servers": entries,
    }


def _utility(seed: int, job_id: str, ideal: int) -> dict[str, float]:
    rng = draw(seed, "utility", job_id)
    priority = round(float(rng.uniform(*PRIORITY)), 2)
    u = float(rng.uniform())
    decay = 0.0
    edge = 0.0
    for share, span in CLASSES:
        edge += share
        if u < edge:
            decay = 0.0 if span is None else round(float(rng.uniform(*span)), 3)
            break
    target = round(ideal + float(rng.uniform(*TARGET_SLACK)), 2)
    return {"priority": priority, "decay": decay, "target": target}


def adapt(cluster: Cluster, jobs: Sequence[Job], seed: int, label: str) -> Adapted:
    kept, refused = rigid_or_refused(jobs)
    doc = cluster_spec(cluster, label, slot_seconds(cluster, kept))
    new = cluster_from_dict(doc)
    worker_server = next(s.id for s in new.servers if s.pool == "worker")
    ps_server = next(s.id for s in new.servers if s.pool == "ps")
    rows = []
    ideal: dict[str, int] = {}
    for job in kept:
        assert job.gpus is not None
        profile = profile_for(job, seed)
        rng = draw(seed, "demand", job.job_id)
        b = round(float(rng.uniform(*WORKER_BW)), 3)
        big_b = round(float(rng.uniform(*PS_BW)), 3)
        # A work unit is M mini-batches, each with its gradient exchange (2 e_i / b_i, eq. (1)), M
        # the most that one worker trains in one slot: the workload stays near the paper's sizes.
        seconds = profile.batch_seconds + 2 * profile.gradient_mb / (b * 125.0)
        per_unit = max(1, math.floor(new.slot_seconds / seconds))
        row = base_row(job, arrival_in(job, cluster.slot_seconds, new.slot_seconds))
        row.update(
            arch="ps",
            chunks=job.gpus,
            gpu_request=job.gpus,
            worker_demand={"gpu": 1, "bw": b},
            ps_demand={"cpu": int(rng.integers(PS_CPU[0], PS_CPU[1] + 1)), "bw": big_b},
            batch_time=number(per_unit * profile.batch_seconds),
            gradient_mb=number(per_unit * profile.gradient_mb),
        )
        probe = job_from_row(row, new)
        allocs = [
            Allocation(job.job_id, worker_server, "worker", OWN_DEMAND_TYPE, job.gpus),
            Allocation(job.job_id, ps_server, "ps", OWN_DEMAND_TYPE, math.ceil(job.gpus * b / big_b)),
        ]
        step = job.gpus / rate(new, probe, allocs)  # slots per mini-batch of one worker
        target = target_slots(job, cluster.slot_seconds, new.slot_seconds)
        work = max(1, math.floor(target * job.gpus / step))
        row["work"] = work
        ideal[job.job_id] = max(1, math.ceil(work * step / job.gpus - 1e-9))
        row.update(_utility(seed, job.job_id, ideal[job.job_id]))
        rows.append(row)

    def finish(spec: dict[str, Any], evaluated: list[dict[str, Any]]) -> None:
        latest = max(r["arrival"] + ideal[r["job_id"]] for r in evaluated)
        spec["horizon"] = max(1, math.ceil(HORIZON_FACTOR * latest))

    assumptions = [
        Assumption(
            "slot_seconds",
            doc["slot_seconds"],
            f"whole hours (the oasis preset's one-hour slot at least) so that {HORIZON_FACTOR:g} x the latest recorded "
            f"end spans at most T = {PAPER_T} slots (Sec. V-A, Figs. 3 and 6)",
        ),
        Assumption("worker_servers", "the cluster's GPU servers, pool worker", "H worker servers (Sec. III-A)"),
        Assumption("ps_servers", {"count": "H", "capacity": PS_SERVER}, "K = H PS servers (Sec. V-A: 50 + 50)"),
        Assumption("worker_server_bw_gbps", f"{GBPS_PER_GPU:g} x GPUs", "Sec. V-A's largest b_i per GPU"),
        Assumption("arch", "ps", "OASiS jobs are PS jobs (Sec. III)"),
        Assumption("chunks", "gpus", "N_i, the worker limit of constraint (3) = the job's GPUs"),
        Assumption("gpu_request", "gpus", "the fixed worker count of the fixed-configuration baselines"),
        Assumption(
            "worker_demand", {"gpu": 1, "bw": list(WORKER_BW)}, "one GPU per worker; b_i uniform in Sec. V-A's range"
        ),
        Assumption("ps_demand", {"cpu": list(PS_CPU), "bw": list(PS_BW)}, "Sec. V-A's PS ranges, per job"),
        Assumption(
            "batch_time, gradient_mb",
            "M x profile batch_seconds, M x gradient_mb",
            "tau_i and e_i of a work unit of M mini-batches of the job's profile, M = the mini-batches one worker "
            "trains in one slot (floor(slot / (tau + 2 e / b_i)), at least 1)",
        ),
        profile_assumption(),
        Assumption(
            "work",
            "floor(duration x gpus / step), step = slots per work unit of one worker",
            "mini-batches whose ideal duration (gpus workers, eq. (1) with 2 e_i / b_i: a PS is never on a worker "
            "server) is the recorded one",
        ),
        Assumption("priority", list(PRIORITY), "gamma_1 uniform (Sec. V-A)"),
        Assumption(
            "decay",
            {"time-insensitive": [0.10, 0], "time-sensitive": [0.55, [0.01, 1]], "time-critical": [0.35, [4, 6]]},
            "gamma_2 classes of Sec. V-A (share, range)",
        ),
        Assumption("target", f"ideal duration + {list(TARGET_SLACK)}", "gamma_3: Sec. V-A's [1, 15] slots as slack"),
        Assumption(
            "horizon",
            f"ceil({HORIZON_FACTOR:g} x latest (arrival + ideal duration)) of the evaluated jobs",
            "T (Sec. III): every job can finish by T even if it waits",
        ),
    ]
    return Adapted(doc, rows, assumptions, refused, finish=finish)
