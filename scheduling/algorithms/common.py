"""Pieces the algorithms share: a job's worker/PS configuration and all-or-nothing placement."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from scheduling.capacity import Ledger
from scheduling.model import RIGID_WORKER_TYPE, Cluster, Job
from scheduling.records import record
from scheduling.speed import (
    Allocation,
    demand_of,
    needs_ps,
    ps_bandwidth_of,
    rate,
    reserves_ps_bandwidth,
    worker_bandwidth,
)

OWN_DEMAND_TYPE = "job"
"""Type id used for workers/PSs whose demand is the job's own (OASiS-style per-job demands)."""


@record
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
    if reserves_ps_bandwidth(cluster, job):
        return _ideal_reserved(cluster, job, workers, candidates)
    fitting = next((c for c in candidates if place(Ledger(cluster), job, c) is not None), candidates[0])
    return Config(fitting.worker_type, workers, fitting.ps_type, fitting.ps)


def _ideal_reserved(cluster: Cluster, job: Job, workers: int, candidates: list[Config]) -> Config:
    """The ideal case under Zhou et al.'s (2i) ("the most expedited single-job training"): the fastest
    type is no longer always the quickest, since one server's PSs must carry the bandwidth of every
    remote worker. For each worker type (with the first PS type, fastest first, that fits), as many
    of the ``workers`` as an empty cluster holds under (2i); the pair with the highest rate wins
    (ties: the faster type)."""
    best: tuple[float, Config] | None = None
    seen: set[str] = set()
    for c in candidates:
        if c.worker_type in seen:
            continue
        k = min(workers, _most_on_empty(cluster, job, c))
        if k == 0:
            continue
        seen.add(c.worker_type)
        cfg = Config(c.worker_type, k, c.ps_type, c.ps)
        speed = planned_rate(cluster, job, cfg)
        if best is None or speed > best[0] * (1 + 1e-12):
            best = (speed, cfg)
    if best is None:
        return Config(candidates[0].worker_type, workers, candidates[0].ps_type, candidates[0].ps)
    return best[1]


_EMPTY_MOST: dict[int, tuple[Cluster, dict[tuple[object, ...], int]]] = {}


def _most_on_empty(cluster: Cluster, job: Job, cfg: Config, limit: int = 1024) -> int:
    """The most workers of ``cfg``'s shape that ``place`` puts on an empty cluster (at most
    ``limit``); typed demands and bandwidths are the same for every job, so it is cached per shape
    (a job's own worker demand, if it has one, is part of the shape)."""
    entry = _EMPTY_MOST.get(id(cluster))
    if entry is None or entry[0] is not cluster:
        if len(_EMPTY_MOST) > 64:
            _EMPTY_MOST.clear()
        entry = _EMPTY_MOST[id(cluster)] = (cluster, {})
    own = tuple(sorted(job.worker_demand.items())) if job.worker_demand is not None else None
    key = (cfg.worker_type, cfg.ps_type, cfg.ps, own)
    if key not in entry[1]:

        def fits(n: int) -> bool:
            return place(Ledger(cluster), job, Config(cfg.worker_type, n, cfg.ps_type, cfg.ps)) is not None

        lo, hi = 0, limit  # fits(lo) (vacuously for 0); the placeable counts are downward closed
        if fits(hi):
            lo = hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        entry[1][key] = lo
    return entry[1][key]


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


WORKER_ONLY = ("worker",)


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
    if p_demand is None:  # workers only (every rigid job): the steps below for one part
        n = cfg.workers
        if not ledger.could_fit("worker", w_demand, n):
            return None
        home = ledger.first_fit(WORKER_ONLY, {r: 0.0 + a * n for r, a in w_demand.items()})
        if home is not None:
            ledger.book(home, w_demand, n)
            return (Allocation(job.job_id, home, "worker", cfg.worker_type, n),)
        return _spread(ledger, job.job_id, [("worker", cfg.worker_type, dict(w_demand), n)])
    parts: list[tuple[str, str, dict[str, float], int]] = [("worker", cfg.worker_type, dict(w_demand), cfg.workers)]
    if p_demand is not None and cfg.ps_type is not None:
        parts.append(("ps", cfg.ps_type, dict(p_demand), cfg.ps))
    for role, _type, demand, n in parts:
        if not ledger.could_fit(role, demand, n):
            return None
    # The first server that accepts every part's role and holds their combined demand.
    combined: dict[str, float] = {}
    for _role, _type, demand, n in parts:
        for r, a in demand.items():
            combined[r] = combined.get(r, 0.0) + a * n
    home = ledger.first_fit(tuple(part[0] for part in parts), combined)
    if home is not None:
        # first_fit checked that ``home`` accepts every role and holds the combined demand
        # (fits(home, role, combined) on each server), so each part is booked without a check.
        for _role, _type, demand, n in parts:
            ledger.book(home, demand, n)
        return tuple(Allocation(job.job_id, home, role, t, n) for role, t, _d, n in parts)
    if p_demand is not None and cfg.ps_type is not None and reserves_ps_bandwidth(cluster, job):
        return _spread_reserved(ledger, job, cfg, dict(w_demand), dict(p_demand))
    return _spread(ledger, job.job_id, parts)


def _spread_reserved(
    ledger: Ledger, job: Job, cfg: Config, w_demand: dict[str, float], p_demand: dict[str, float]
) -> tuple[Allocation, ...] | None:
    """Spread ``cfg`` under Zhou et al.'s (2i): every PS on one server h, and enough of them (at
    least ``cfg.ps``) that their bandwidth covers the workers on the other servers. h is the first
    server, in cluster order, where that works, with as many workers beside the PSs as fit there
    (fewest PSs); the other workers go first-fit over the remaining servers."""
    cluster = ledger.cluster
    assert cfg.ps_type is not None
    b = worker_bandwidth(cluster, job, cfg.worker_type)
    big_b = ps_bandwidth_of(cluster, cfg.ps_type)
    n = cfg.workers
    room = {server_id: min(n, k) for server_id, k in ledger.room("worker", w_demand)}  # absent: 0
    total = sum(room.values())
    if total < n:
        return None
    # The servers that hold the PSs, in cluster order (nothing is booked until one is chosen).
    for h, _k in (part for part in ledger.room("ps", p_demand) if part[1] >= cfg.ps):
        server = ledger.server(h)
        assert server is not None
        others = total - room.get(h, 0)
        for g in range(room.get(h, 0), -1, -1):  # workers beside the PSs on h
            remote = n - g
            if others < remote:
                break  # fewer workers on h only needs more elsewhere
            if remote and b > 0 and big_b <= 0:
                continue
            s = max(cfg.ps, math.ceil(remote * b / big_b - 1e-9) if remote and b > 0 else 0)
            combined = {r: p_demand.get(r, 0.0) * s + w_demand.get(r, 0.0) * g for r in {*p_demand, *w_demand}}
            if not ledger.fits(h, "ps", combined, 1) or (g and not server.accepts("worker")):
                continue
            ledger.take(h, "ps", p_demand, s)
            booked = [Allocation(job.job_id, h, "ps", cfg.ps_type, s)]
            if g:
                ledger.take(h, "worker", w_demand, g)
                booked.append(Allocation(job.job_id, h, "worker", cfg.worker_type, g))
            # The rest first-fit; h has no room left for one more (g was the most that fit beside
            # the PSs), and the other servers hold at least ``remote`` (checked above).
            rest = _spread(ledger, job.job_id, [("worker", cfg.worker_type, w_demand, remote)]) if remote else ()
            assert rest is not None
            return (*booked, *rest)
    return None


class FitMemo:
    """Remembers, within one decision, the smallest worker count of each shape that did not fit.

    The ledger only fills up during a decision, so a job with the same per-instance demands and at
    least as many workers cannot fit either: ``place`` is skipped for it. This turns a long queue
    of similar waiting jobs from a placement attempt each into a dictionary look-up each.
    """

    def __init__(
        self,
        ledger: Ledger,
        shapes: dict[str, tuple[object, ...]] | None = None,
        placement: Callable[[Ledger, Job, Config], tuple[Allocation, ...] | None] | None = None,
        remember: bool = True,
    ) -> None:
        self.ledger = ledger
        self.failed: dict[tuple[object, ...], int] = {}
        self.shapes = shapes if shapes is not None else {}  # job id -> shape, may outlive the memo
        # The placement (``place`` when None; see placement.py) and whether its failures may be
        # remembered (false for a placement for which more workers can fit where fewer did not).
        self.placement = placement if placement is not None else place
        self.remember = remember

    def hopeless(self, fewest: Mapping[tuple[object, ...], int]) -> bool:
        """Whether no job can fit any more, given the fewest workers waiting jobs need per shape."""
        return all(self.failed.get(shape, 1 << 30) <= n for shape, n in fewest.items())

    def skips(self, shape: tuple[object, ...], workers: int) -> bool:
        """Whether ``place`` passes over a job of this shape and worker count: the shape already
        failed with as few workers."""
        return workers >= self.failed.get(shape, 1 << 30)

    def place(self, job: Job, cfg: Config) -> tuple[Allocation, ...] | None:
        shape = self.shape(job, cfg)
        if self.skips(shape, cfg.workers):
            return None
        placed = self.placement(self.ledger, job, cfg)
        if placed is None and self.remember:
            self.failed[shape] = min(cfg.workers, self.failed.get(shape, 1 << 30))
        return placed

    def shape(self, job: Job, cfg: Config) -> tuple[object, ...]:
        return job_shape(self.ledger.cluster, job, cfg, self.shapes)


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


def _spread(
    ledger: Ledger, job_id: str, parts: list[tuple[str, str, dict[str, float], int]]
) -> tuple[Allocation, ...] | None:
    """Each part first-fit over the servers in cluster order, as many instances on each as fit;
    all-or-nothing (None, and nothing booked, if a part does not fit)."""
    booked: list[tuple[Allocation, dict[str, float]]] = []
    for role, type_id, demand, n in parts:
        rooms = ledger.room(role, demand)  # counts before this part's bookings
        if sum(room for _server, room in rooms) < n:
            for a, d in booked:
                ledger.release(a.server, d, a.count)
            return None
        left = n
        for server_id, room in rooms:
            k = min(left, room)
            ledger.book(server_id, demand, k)  # fits: a booking elsewhere left this server's room as it was
            booked.append((Allocation(job_id, server_id, role, type_id, k), demand))
            left -= k
            if left == 0:
                break
    return tuple(a for a, _ in booked)


def job_shape(cluster: Cluster, job: Job, cfg: Config, shapes: dict[str, tuple[object, ...]]) -> tuple[object, ...]:
    """What decides whether ``cfg`` of ``job`` fits (its worker and PS demands and PS count), cached
    by job id in ``shapes``: jobs of one shape fit or fail alike (FitMemo)."""
    cached = shapes.get(job.job_id)
    if cached is None:
        w = demand_of(cluster, job, "worker", cfg.worker_type) or {}
        p = demand_of(cluster, job, "ps", cfg.ps_type) if cfg.ps_type is not None else None
        cached = shapes[job.job_id] = (tuple(sorted(w.items())), tuple(sorted((p or {}).items())), cfg.ps)
    return cached
