"""Pieces the algorithms share: a job's worker/PS configuration and all-or-nothing placement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduling.capacity import Ledger
from scheduling.model import RIGID_WORKER_TYPE, Cluster, Job
from scheduling.speed import Allocation, demand_of, needs_ps, rate

OWN_DEMAND_TYPE = "job"
"""Type id used for workers/PSs whose demand is the job's own (OASiS-style per-job demands)."""


@dataclass(frozen=True)
class Config:
    """How many workers and PSs of which type a job runs with."""

    worker_type: str
    workers: int
    ps_type: str | None = None
    ps: int = 0


def worker_types_for(cluster: Cluster, job: Job) -> list[str]:
    """Worker types the job can run on, fastest (smallest v_jm) first; ties keep cluster order."""
    if job.rigid:
        return [RIGID_WORKER_TYPE]
    if job.worker_demand is not None:
        return [OWN_DEMAND_TYPE]
    named = [t for t in job.batch_time if t != "*"]
    types = [t.id for t in cluster.worker_types if "*" in job.batch_time or not named or t.id in named]
    return sorted(types, key=job.batch_time_for)


def ps_type_for(cluster: Cluster, job: Job) -> str | None:
    """The PS type with the smallest update time U_j^p (ties keep cluster order), or None."""
    if not needs_ps(cluster, job):
        return None
    if job.ps_demand is not None:
        return OWN_DEMAND_TYPE
    return min((p.id for p in cluster.ps_types), key=job.ps_update_for)


def ideal_config(cluster: Cluster, job: Job, workers: int, ps: int = 1) -> Config:
    """The "ideal case" configuration (Zhou et al. Sec. 7): the fastest worker type and the fastest
    PS type that an empty cluster can hold, ``workers`` workers (at most D_j) and ``ps`` PSs.

    Rigid jobs get exactly their requested GPUs as one-GPU workers and no PS; other jobs that
    state their GPUs (pipeline jobs) get that many workers instead of ``workers``.
    """
    if job.rigid:
        assert job.gpus is not None
        return Config(RIGID_WORKER_TYPE, job.gpus)
    if job.gpus is not None:
        workers = job.gpus
    workers = max(1, min(workers, job.max_workers()))
    ps_type = ps_type_for(cluster, job)
    ps_count = ps if ps_type is not None else 0
    candidates = [Config(t, 1, p, ps_count) for t in worker_types_for(cluster, job) for p in _ps_options(cluster, job)]
    fitting = next((c for c in candidates if place(Ledger(cluster), job, c) is not None), candidates[0])
    return Config(fitting.worker_type, workers, fitting.ps_type, fitting.ps)


def _ps_options(cluster: Cluster, job: Job) -> list[str | None]:
    """PS types fastest first (None when the job needs no PS)."""
    first = ps_type_for(cluster, job)
    if first is None or first == OWN_DEMAND_TYPE:
        return [first]
    return [*sorted((p.id for p in cluster.ps_types), key=job.ps_update_for)]


def planned_rate(cluster: Cluster, job: Job, cfg: Config) -> float:
    """Work per slot of ``cfg`` when workers and PSs are not co-located (the slower case)."""
    allocs = [Allocation(job.job_id, "a", "worker", cfg.worker_type, cfg.workers)]
    if cfg.ps_type is not None and cfg.ps > 0:
        allocs.append(Allocation(job.job_id, "b", "ps", cfg.ps_type, cfg.ps))
    return rate(cluster, job, allocs)


def place(ledger: Ledger, job: Job, cfg: Config) -> tuple[Allocation, ...] | None:
    """Book ``cfg`` for ``job`` all-or-nothing; None (and nothing booked) if it does not fit.

    Tries one server for everything first (co-location avoids gradient traffic, Zhou et al.
    eq. (1)), then first-fit over servers in cluster order: workers on servers that accept workers,
    PSs on servers that accept PSs.
    """
    cluster = ledger.cluster
    w_demand = demand_of(cluster, job, "worker", cfg.worker_type)
    p_demand = demand_of(cluster, job, "ps", cfg.ps_type) if cfg.ps_type is not None and cfg.ps else None
    if w_demand is None:
        return None
    parts: list[tuple[str, str, dict[str, float], int]] = [("worker", cfg.worker_type, dict(w_demand), cfg.workers)]
    if p_demand is not None and cfg.ps_type is not None:
        parts.append(("ps", cfg.ps_type, dict(p_demand), cfg.ps))
    if not all(ledger.could_fit(role, demand, n) for role, _t, demand, n in parts):
        return None
    for server in cluster.servers:
        booked = _book_all(ledger, job.job_id, server.id, parts)
        if booked is not None:
            return booked
    return _spread(ledger, job.job_id, parts)


class FitMemo:
    """Remembers, within one decision, the smallest worker count of each shape that did not fit.

    The ledger only fills up during a decision, so a job with the same per-instance demands and at
    least as many workers cannot fit either: ``place`` is skipped for it. This turns a long queue
    of similar waiting jobs from a placement attempt each into a dictionary look-up each.
    """

    def __init__(self, ledger: Ledger, shapes: dict[str, tuple[object, ...]] | None = None) -> None:
        self.ledger = ledger
        self.failed: dict[tuple[object, ...], int] = {}
        self.shapes = shapes if shapes is not None else {}  # job id -> shape, may outlive the memo

    def hopeless(self, fewest: Mapping[tuple[object, ...], int]) -> bool:
        """Whether no job can fit any more, given the fewest workers waiting jobs need per shape."""
        return all(self.failed.get(shape, 1 << 30) <= n for shape, n in fewest.items())

    def place(self, job: Job, cfg: Config) -> tuple[Allocation, ...] | None:
        shape = self.shape(job, cfg)
        if cfg.workers >= self.failed.get(shape, 1 << 30):
            return None
        placed = place(self.ledger, job, cfg)
        if placed is None:
            self.failed[shape] = min(cfg.workers, self.failed.get(shape, 1 << 30))
        return placed

    def shape(self, job: Job, cfg: Config) -> tuple[object, ...]:
        cached = self.shapes.get(job.job_id)
        if cached is None:
            cached = self.shapes[job.job_id] = self._shape(job, cfg)
        return cached

    def _shape(self, job: Job, cfg: Config) -> tuple[object, ...]:
        cluster = self.ledger.cluster
        w = demand_of(cluster, job, "worker", cfg.worker_type) or {}
        p = demand_of(cluster, job, "ps", cfg.ps_type) if cfg.ps_type is not None else None
        return (tuple(sorted(w.items())), tuple(sorted((p or {}).items())), cfg.ps)


def keep(ledger: Ledger, job: Job, allocations: Sequence[Allocation]) -> bool:
    """Re-book a running job's current allocations (no migration); all-or-nothing."""
    cluster = ledger.cluster
    done: list[tuple[str, dict[str, float], int]] = []
    for a in allocations:
        demand = dict(demand_of(cluster, job, a.role, a.type) or {})
        if not ledger.take(a.server, a.role, demand, a.count):
            for server, d, n in done:
                ledger.release(server, d, n)
            return False
        done.append((a.server, demand, a.count))
    return True


def _book_all(
    ledger: Ledger, job_id: str, server: str, parts: list[tuple[str, str, dict[str, float], int]]
) -> tuple[Allocation, ...] | None:
    # Put every part on one server: check the combined demand so parts cannot overbook together.
    combined: dict[str, float] = {}
    for _role, _type, demand, n in parts:
        for r, a in demand.items():
            combined[r] = combined.get(r, 0.0) + a * n
    if any(not ledger.fits(server, role, {}, 1) for role, *_ in parts):
        return None
    if not ledger.fits(server, parts[0][0], combined, 1):
        return None
    for role, _type, demand, n in parts:
        ledger.take(server, role, demand, n)
    return tuple(Allocation(job_id, server, role, t, n) for role, t, _d, n in parts)


def _spread(
    ledger: Ledger, job_id: str, parts: list[tuple[str, str, dict[str, float], int]]
) -> tuple[Allocation, ...] | None:
    booked: list[tuple[Allocation, dict[str, float]]] = []
    for role, type_id, demand, n in parts:
        left = n
        for server in ledger.cluster.servers:
            if left == 0:
                break
            k = min(left, ledger.max_count(server.id, role, demand))
            if k > 0:
                ledger.take(server.id, role, demand, k)
                booked.append((Allocation(job_id, server.id, role, type_id, k), demand))
                left -= k
        if left > 0:
            for a, d in booked:
                ledger.release(a.server, d, a.count)
            return None
    return tuple(a for a, _ in booked)
