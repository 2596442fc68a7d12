"""How fast a job trains on a given allocation: the single source of per-slot work rates.

The engine uses these functions to turn committed placements into work progress, and the validator
uses them again to check that a result's progress is what its placements allow. Algorithms call
them too, so that what they plan is what the engine executes.

Work units: mini-batches for elastic jobs (E_j * D_j * K_j in total), slots for rigid jobs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from scheduling import gpu_types
from scheduling.model import RIGID_WORKER_TYPE, Amounts, Cluster, Job, frozen_amounts, gbps_to_mb_per_slot
from scheduling.pipeline import alpha, counts_from_allocations, links, stage_index
from scheduling.records import record


@record
class Allocation:
    """``count`` instances of one role and type for one job on one server, for the current slot."""

    job_id: str
    server: str
    role: str  # "worker" | "ps"
    type: str  # worker type id, PS type id, or "gpu" for rigid jobs' one-GPU workers
    count: int


_ONE_GPU = frozen_amounts({"gpu": 1.0})


def demand_of(cluster: Cluster, job: Job, role: str, type_id: str) -> Amounts | None:
    """Per-instance demand of one worker/PS of ``job``; None if the type is unknown.

    A job's own demand (OASiS's per-job worker/PS demands) wins over the type's. Rigid jobs run on
    one-GPU workers of type "gpu" unless the cluster defines a worker type of that name.
    """
    if role == "worker":
        if job.worker_demand is not None:
            return job.worker_demand
        if job.stages and stage_index(type_id) is not None:
            return _ONE_GPU  # a replica of a pipeline stage (A-SRPT): one GPU
        wt = cluster.worker_type(type_id)
        if wt is not None:
            return wt.demand
        if type_id == RIGID_WORKER_TYPE:
            return _ONE_GPU
        return None
    if role == "ps":
        if job.ps_demand is not None:
            return job.ps_demand
        pt = cluster.ps_type(type_id)
        return pt.demand if pt is not None else None
    return None


def typed_demand(job: Job) -> bool:
    """Whether ``demand_of`` gives ``job`` its types' demands, the same as for every such job: it has
    no demand of its own and no pipeline stages (the job-specific branches above)."""
    return job.worker_demand is None and job.ps_demand is None and not job.stages


def gpus_of(cluster: Cluster, job: Job, allocs: Iterable[Allocation]) -> float:
    """GPUs an allocation of ``job`` holds (all roles)."""
    return sum(a.count * (demand_of(cluster, job, a.role, a.type) or {}).get("gpu", 0.0) for a in allocs)


def needs_ps(cluster: Cluster, job: Job) -> bool:
    """A PS job needs at least one PS when the cluster offers PS types or the job has a PS demand."""
    return job.arch == "ps" and not job.rigid and (bool(cluster.ps_types) or job.ps_demand is not None)


PS_RESERVATION = "ps_bandwidth_reservation"
"""Cluster ``network`` key: when non-zero, Zhou et al.'s (2i) binds every PS job on typed PSs."""

SPREAD_SLOWDOWN = "spread_slowdown"
"""Cluster ``network`` key s >= 0 (default 0, off): a rigid job whose workers are on k servers runs
at 1 / (1 + s (k - 1)) of its recorded speed (docs/formats.md, "Cluster spec")."""


def on_typed_ps(cluster: Cluster, job: Job) -> bool:
    """A PS job whose PSs are the cluster's PS types (not a per-job PS demand)."""
    return needs_ps(cluster, job) and job.ps_demand is None


def reserves_ps_bandwidth(cluster: Cluster, job: Job) -> bool:
    """Whether Zhou et al.'s constraint (2i) binds ``job``: the cluster declares it (``network``
    key ``ps_bandwidth_reservation``) and the job is a PS job on the cluster's typed PSs."""
    return bool(cluster.network.get(PS_RESERVATION, 0.0)) and on_typed_ps(cluster, job)


def ps_bandwidth_of(cluster: Cluster, type_id: str) -> float:
    """B_p in MB per slot of a PS type (0 if unknown)."""
    pt = cluster.ps_type(type_id)
    return pt.bandwidth if pt is not None else 0.0


def reservation_shortfall(cluster: Cluster, job: Job, allocations: Iterable[Allocation]) -> tuple[str, float] | None:
    """Zhou et al. (2i): for every server h holding PSs of ``job``, the bandwidth of its workers on
    the other servers must not exceed the bandwidth of its PSs on h. Returns the first server that
    breaks it and by how much (MB per slot), or None if (2i) holds."""
    remote_total = 0.0
    local: dict[str, float] = {}
    ps_bw: dict[str, float] = {}
    for a in allocations:
        if a.role == "worker":
            bw = worker_bandwidth(cluster, job, a.type) * a.count
            remote_total += bw
            local[a.server] = local.get(a.server, 0.0) + bw
        else:
            ps_bw[a.server] = ps_bw.get(a.server, 0.0) + ps_bandwidth_of(cluster, a.type) * a.count
    for server, reserved in ps_bw.items():
        excess = remote_total - local.get(server, 0.0) - reserved
        if excess > 1e-9 * max(1.0, remote_total):
            return server, excess
    return None


def worker_bandwidth(cluster: Cluster, job: Job, type_id: str) -> float:
    """b_m in MB per slot: the job's own worker demand of "bw" (Gbps), else the worker type's."""
    if job.worker_demand is not None and "bw" in job.worker_demand:
        return gbps_to_mb_per_slot(float(job.worker_demand["bw"]), cluster.slot_seconds)
    wt = cluster.worker_type(type_id)
    return wt.bandwidth if wt is not None else 0.0


def rate(cluster: Cluster, job: Job, allocations: Iterable[Allocation]) -> float:
    """Work units per slot that ``job`` makes on ``allocations`` (all of them the job's own).

    * rigid jobs: 1 per slot once they hold their requested GPUs, else 0; on a cluster that declares
      ``network.spread_slowdown`` s, 1 / (1 + s (k - 1)) with the workers on k servers; times the
      speed factor of the slowest GPU type it holds when the cluster or job declares GPU-type
      speeds (``scheduling.gpu_types``);
    * PS jobs: Zhou et al. eq. (1), W * rho_jm^p with rho = 1/(v_jm + U_j^p) when every worker and
      PS is on one server (q_j = 1), else 1/(v_jm + U_j^p + 2 pi_j / b_m);
    * all-reduce jobs: Zhou et al. eq. (14), W * 1/(v_jm + U_j (W-1)/W + 2 pi_j (W-1)/(W b_m)),
      with no communication term when every worker is on one server;
    * PS jobs on an edge-cloud cluster (one with an ``edge``-site server; the edge-cloud paper): each
      worker trains one data chunk at a time at n_j of eq. (1), with zeta_j = 1 only when every
      worker and PS is on a cloud-site server (constraints (2g)/(2h)), and a chunk holds its worker
      for whole slots (constraint (4a) with binary y_jdsw(t)): ``chunk_slots`` = ceil(E_j B_j / n_j)
      slots, spread evenly so that a worker delivers E_j B_j / chunk_slots mini-batches per slot;
    * pipeline jobs with ``stages``: 1/alpha_i iterations per slot once every stage replica is
      placed (else 0), alpha_i by A-SRPT eqs. (4)-(7) from the replicas' servers
      (``scheduling.pipeline``: stage-typed allocations, or a canonical mapping for other types);
    * other pipeline jobs: v_jm is the time of one training iteration of the whole job; with its
      ``gpus`` given the job makes 1/v_jm iterations per slot once it holds them all (else 0);
      without, W / v_jm.

    With workers of several types, synchronous training runs at the slowest type's pace.
    """
    workers = [a for a in allocations if a.role == "worker" and a.count > 0]
    n_workers = sum(a.count for a in workers)
    if n_workers == 0:
        return 0.0
    if job.rigid:
        gpus = 0.0
        for a in workers:
            demand = demand_of(cluster, job, "worker", a.type) or _ONE_GPU
            gpus += a.count * float(demand.get("gpu", 0.0))
        assert job.gpus is not None
        if gpus + 1e-9 < job.gpus:
            return 0.0
        speed = 1.0
        spread = cluster.network.get(SPREAD_SLOWDOWN, 0.0)
        if spread and len(workers) > 1:
            speed = 1.0 / (1.0 + spread * (len({a.server for a in workers}) - 1))
        if cluster.gpu_speeds or job.gpu_speed:  # gpu_types.declared: the slowest GPU type's factor
            speed *= gpu_types.factor(cluster, job, (a.server for a in workers))
        return speed
    pss = [a for a in allocations if a.role == "ps" and a.count > 0]
    if needs_ps(cluster, job) and not pss:
        return 0.0
    if job.arch == "pipeline" and job.stages:
        return _stage_rate(cluster, job, workers)
    if job.arch == "ps" and is_edge_cloud(cluster):
        on_cloud = all(_site(cluster, a.server) == "cloud" for a in (*workers, *pss))
        return n_workers * chunk_rate(cluster, job, min(a.type for a in workers), on_cloud)
    if job.arch == "pipeline" and job.gpus is not None:
        full = n_workers >= job.gpus
        return 1.0 / min(job.batch_time_for(a.type) for a in workers) if full else 0.0
    servers = {a.server for a in workers} | {a.server for a in pss}
    colocated = len(servers) == 1
    per_worker = min(_per_worker_rate(cluster, job, a.type, pss, n_workers, colocated) for a in workers)
    return n_workers * per_worker


def _stage_rate(cluster: Cluster, job: Job, workers: list[Allocation]) -> float:
    server_links, order = links(cluster)
    counts = counts_from_allocations(job.stages, ((a.server, a.type, a.count) for a in workers), order)
    if counts is None:
        return 0.0
    a = alpha(job.stages, counts, server_links)
    return 1.0 / a if a > 0 else 1.0 / job.batch_time_for("*")


def _per_worker_rate(
    cluster: Cluster,
    job: Job,
    worker_type: str,
    pss: list[Allocation],
    n_workers: int,
    colocated: bool,
) -> float:
    v = job.batch_time_for(worker_type)
    b = worker_bandwidth(cluster, job, worker_type)
    comm = 0.0 if colocated or b <= 0 else 2.0 * job.gradient_mb / b
    if job.arch == "ps":
        update = max((job.ps_update_for(p.type) for p in pss), default=job.ps_update_for("*"))
        step = v + update + comm
    elif job.arch == "allreduce":
        share = (n_workers - 1) / n_workers
        step = v + job.ps_update_for("*") * share + comm * share
    else:
        step = v
    return 1.0 / step  # the loaders reject non-positive mini-batch times


_EDGE_CLOUD: dict[int, tuple[Cluster, bool, dict[str, str]]] = {}


def _edge_index(cluster: Cluster) -> tuple[bool, dict[str, str]]:
    entry = _EDGE_CLOUD.get(id(cluster))
    if entry is None or entry[0] is not cluster:
        if len(_EDGE_CLOUD) > 64:
            _EDGE_CLOUD.clear()
        edge = any(s.site == "edge" for s in cluster.servers)
        entry = _EDGE_CLOUD[id(cluster)] = (cluster, edge, {s.id: s.site for s in cluster.servers})
    return entry[1], entry[2]


def is_edge_cloud(cluster: Cluster) -> bool:
    """Whether the cluster follows the edge-cloud paper's model (it has an ``edge``-site server)."""
    return _edge_index(cluster)[0]


def _site(cluster: Cluster, server_id: str) -> str:
    return _edge_index(cluster)[1].get(server_id, "cloud")


def processing_capacity(cluster: Cluster, job: Job, worker_type: str, colocated: bool) -> float:
    """n_j of the edge-cloud paper's eq. (1): mini-batches one worker trains per slot.

    1/(m_j + G_j + 2 q_j/b_j) when zeta_j = 0, 1/(m_j + G_j) when zeta_j = 1 (job wholly in the cloud).
    m_j = v_jm (``batch_time``), G_j = the PS update time, q_j = ``gradient_mb``, b_j = the worker
    type's bandwidth (MB per slot).
    """
    m = job.batch_time_for(worker_type)
    g = job.ps_update_for("*") if not cluster.ps_types else min(job.ps_update_for(p.id) for p in cluster.ps_types)
    b = worker_bandwidth(cluster, job, worker_type)
    comm = 0.0 if colocated or b <= 0 else 2.0 * job.gradient_mb / b
    return 1.0 / (m + g + comm)


def chunk_slots(cluster: Cluster, job: Job, worker_type: str, colocated: bool) -> int:
    """Whole slots one worker needs for one data chunk: ceil(E_j B_j / n_j) (constraint (4a))."""
    n = processing_capacity(cluster, job, worker_type, colocated)
    return max(1, math.ceil(job.epochs * job.minibatches / n - 1e-9))


def chunk_rate(cluster: Cluster, job: Job, worker_type: str, colocated: bool) -> float:
    """Mini-batches per slot of one worker of the edge-cloud model: E_j B_j / chunk_slots."""
    return job.epochs * job.minibatches / chunk_slots(cluster, job, worker_type, colocated)
