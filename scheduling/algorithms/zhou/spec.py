"""What A_mincost1/2 and A_RAmincost1/2 need to know of one job (Zhou et al. Secs. 3.2, 5.2, 6.3).

A job's *options* are its (worker type m', PS type p') pairs in the order the pseudo-code loops
over them ("for m' = 1 to M, for p' = 1 to P"); the paper's type indices are arbitrary labels, so
the order here is worker types fastest first (smallest v_jm), then PS types fastest first
(smallest U_j^p), ties in cluster order. Processing capacities rho come from ``scheduling.speed``,
the same functions the engine runs the job with, so a planned duration is what the engine delivers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from scheduling.algorithms.common import OWN_DEMAND_TYPE, worker_types_for
from scheduling.model import Cluster, Job, gbps_to_mb_per_slot
from scheduling.speed import Allocation, demand_of, needs_ps, ps_bandwidth_of, rate

EPS = 1e-9  # as the engine's: a duration of x slots is ceil(x - EPS)


@dataclass(frozen=True)
class Option:
    """One (worker type m', PS type p') choice of a job."""

    worker_type: str
    ps_type: str | None  # None for all-reduce jobs
    e: np.ndarray  # e_m'^r: per-worker demand, one entry per cluster resource
    z: np.ndarray  # z_p'^r: per-PS demand (zeros without a PS)
    b: float  # b_m': worker bandwidth, MB per slot
    B: float  # B_p': PS bandwidth, MB per slot


@dataclass(frozen=True)
class JobSpec:
    job: Job
    cluster: Cluster
    options: tuple[Option, ...]
    allreduce: bool
    # rho per (worker type, PS type, workers, co-located): a pure function of the job and cluster,
    # asked for again in every sub-round and round the job waits through (not part of eq/hash).
    _rho: dict[tuple[str, str | None, int, bool], float] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    @property
    def work(self) -> float:
        return self.job.work_required  # E_j D_j K_j mini-batches

    def option(self, worker_type: str, ps_type: str | None) -> Option:
        """The option of this (worker type, PS type) pair, as a schedule names it."""
        return next(o for o in self.options if o.worker_type == worker_type and o.ps_type == ps_type)

    @property
    def chunks(self) -> int:
        return self.job.max_workers()  # D_j, the worker limit (2g)

    def rho(self, opt: Option, workers: int, colocated: bool) -> float:
        """Mini-batches one worker trains per slot: eq. (1) (PS) or eq. (14) (all-reduce, Phi = workers)."""
        key = (opt.worker_type, opt.ps_type, workers, colocated)
        got = self._rho.get(key)
        if got is None:
            got = self._rho[key] = self._rate(opt, workers, colocated)
        return got

    def _rate(self, opt: Option, workers: int, colocated: bool) -> float:
        # Two placeholder servers: "x" alone is q_j = 1, "x" and "y" is q_j = 0.
        jid, other = self.job.job_id, "x" if colocated else "y"
        if self.allreduce:
            allocs = [Allocation(jid, "x", "worker", opt.worker_type, workers)]
            if workers > 1 and not colocated:
                allocs = [
                    Allocation(jid, "x", "worker", opt.worker_type, workers - 1),
                    Allocation(jid, "y", "worker", opt.worker_type, 1),
                ]
        else:
            allocs = [Allocation(jid, "x", "worker", opt.worker_type, workers)]
            if opt.ps_type is not None:
                allocs.append(Allocation(jid, other, "ps", opt.ps_type, 1))
        return rate(self.cluster, self.job, allocs) / workers

    def duration(self, rho: float, workers: int) -> int:
        """Slots ``workers`` workers at ``rho`` each need for the whole job (as the engine counts)."""
        return max(1, math.ceil(self.work / (workers * rho) - EPS))

    def ps_lengths(self, rho: float, tau: int) -> list[tuple[int, int]]:
        """(L_j, N_j) of Alg. 4 lines 5-6 / Alg. 5 line 3, with L_j <= tau - 1 (line 7 needs t^- >= 1).

        The pseudo-code walks every L_j from ceil(E_j K_j / rho) to ceil(E_j D_j K_j / rho) with
        N_j = ceil(E_j D_j K_j / (L_j rho)). Only the shortest L_j of each N_j is kept: a longer
        window with the same workers costs at least as much (prices are >= 0) and needs more free
        capacity, so under Theorem 1 it never strictly beats the shorter one the loop meets first.
        """
        out: list[tuple[int, int]] = []
        for n in range(self.chunks, 0, -1):
            length = self.duration(rho, n)
            if length > tau - 1:
                break
            need = math.ceil(self.work / (length * rho) - EPS)
            if not out or out[-1][0] != length:
                out.append((length, max(1, need)))
        return out

    def longest(self) -> int:
        """The longest window any option may need: one worker, not co-located."""
        return max(self.duration(self.rho(o, 1, colocated=False), 1) for o in self.options)


def job_spec(cluster: Cluster, job: Job) -> JobSpec:
    names = cluster.resource_names()

    def vec(d: Mapping[str, float] | None) -> np.ndarray:
        amounts = dict(d or {})
        return np.array([float(amounts.get(r, 0.0)) for r in names])

    allreduce = job.arch == "allreduce"
    ps_types: list[str | None] = [None]
    if not allreduce and needs_ps(cluster, job):
        if job.ps_demand is not None:
            ps_types = [OWN_DEMAND_TYPE]
        else:
            ps_types = [*sorted((p.id for p in cluster.ps_types), key=job.ps_update_for)]
    options = []
    for m in worker_types_for(cluster, job):
        e = vec(demand_of(cluster, job, "worker", m))
        b = _worker_bw(cluster, job, m)
        for p in ps_types:
            z = vec(demand_of(cluster, job, "ps", p)) if p is not None else np.zeros(len(names))
            big_b = _ps_bw(cluster, job, p) if p is not None else 0.0
            options.append(Option(m, p, e, z, b, big_b))
    return JobSpec(job, cluster, tuple(options), allreduce)


def _worker_bw(cluster: Cluster, job: Job, type_id: str) -> float:
    if job.worker_demand is not None:
        return gbps_to_mb_per_slot(float(job.worker_demand.get("bw", 0.0)), cluster.slot_seconds)
    wt = cluster.worker_type(type_id)
    return wt.bandwidth if wt is not None else 0.0


def _ps_bw(cluster: Cluster, job: Job, type_id: str) -> float:
    if job.ps_demand is not None:
        return gbps_to_mb_per_slot(float(job.ps_demand.get("bw", 0.0)), cluster.slot_seconds)
    return ps_bandwidth_of(cluster, type_id)
