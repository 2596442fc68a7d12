"""List schedulers that differ only by a sort key: FIFO, SRTF and Tiresias (2D-LAS).

At every event the scheduler walks the jobs in key order and books each one's fixed
configuration all-or-nothing. Non-preemptive schedulers first keep every running job where it is;
preemptive ones let a job that comes earlier in key order take the place of a later one (the later
one is suspended and later resumes from where it stopped, possibly elsewhere).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from scheduling.algorithms.common import Config, FitMemo, ideal_config, keep, place, planned_rate
from scheduling.capacity import Ledger
from scheduling.engine import Decision, JobView, View
from scheduling.model import Instance, Job
from scheduling.speed import Allocation

SortKey = Callable[[JobView, Config], tuple[float, ...]]
"""A job's priority from its view and configuration (smaller first); not time-dependent, so a
key is computed once per job view."""


class FixedConfigs:
    """One configuration per job, fixed for its lifetime (the papers' FIFO/DRF setups).

    Rigid jobs get their requested GPUs. Elastic jobs get the ideal-case worker/PS types and a
    worker count drawn once per job, uniformly in [lo, hi] from the run's seeded generator, or,
    with ``request`` and a ``gpu_request`` in the trace, that many (the edge-cloud paper's
    baselines: "the worker requirement of each job is computed according to the number of GPUs of
    the real trace", Sec. V-A), capped by the job's worker limit D_j and by what an empty cluster
    can hold.
    """

    def __init__(
        self, instance: Instance, rng: np.random.Generator, lo: int, hi: int, ps: int, request: bool = True
    ) -> None:
        self.cluster = instance.cluster
        self.configs: dict[str, Config] = {}
        for job in instance.jobs:  # drawn in trace order so that the same seed gives the same counts
            workers = int(rng.integers(lo, hi + 1))  # drawn for every job: the others' draws never move
            if request and job.gpu_request is not None:
                workers = job.gpu_request
            self.configs[job.job_id] = self._feasible(job, ideal_config(self.cluster, job, workers, ps))

    def _feasible(self, job: Job, cfg: Config) -> Config:
        while cfg.workers > 1 and place(Ledger(self.cluster), job, cfg) is None:
            cfg = Config(cfg.worker_type, cfg.workers - 1, cfg.ps_type, cfg.ps)
        return cfg

    def __getitem__(self, job_id: str) -> Config:
        return self.configs[job_id]


class ListScheduler:
    def __init__(
        self,
        instance: Instance,
        configs: FixedConfigs,
        key: SortKey,
        *,
        preemptive: bool,
        backfill: bool,
        wake: Callable[[View, tuple[Allocation, ...]], int | None] | None = None,
    ) -> None:
        self.instance = instance
        self.configs = configs
        self.key = key
        self.preemptive = preemptive
        self.backfill = backfill
        self.wake = wake
        self._keys: dict[str, tuple[JobView, tuple[float, ...]]] = {}
        self.shapes: dict[str, tuple[object, ...]] = {}

    def decide(self, view: View) -> Decision:
        ledger = view.ledger()
        current: dict[str, list[Allocation]] = {}
        for a in view.allocations:
            current.setdefault(a.job_id, []).append(a)
        chosen: list[Allocation] = []
        jobs = list(view.jobs)
        if not self.preemptive:
            for jv in jobs:
                if jv.running and keep(ledger, jv.job, current[jv.job.job_id]):
                    chosen.extend(current[jv.job.job_id])
            jobs = [jv for jv in jobs if not jv.running]
        jobs.sort(key=self._key)
        memo = FitMemo(ledger, self.shapes)
        for jv in jobs:
            job_id = jv.job.job_id
            if jv.running and keep(ledger, jv.job, current[job_id]):
                chosen.extend(current[job_id])
                continue
            placed = memo.place(jv.job, self.configs[job_id])
            if placed is not None:
                chosen.extend(placed)
            elif not self.backfill:
                break
        allocations = tuple(chosen)
        wake_at = self.wake(view, allocations) if self.wake else None
        return Decision(allocations=allocations, wake_at=wake_at)

    def _key(self, jv: JobView) -> tuple[float, ...]:
        # The engine hands out the same JobView object until the job's state changes.
        cached = self._keys.get(jv.job.job_id)
        if cached is None or cached[0] is not jv:
            cached = (jv, self.key(jv, self.configs[jv.job.job_id]))
            self._keys[jv.job.job_id] = cached
        return cached[1]

    def report(self) -> Mapping[str, Any]:
        return {}


def fifo_key(jv: JobView, cfg: Config) -> tuple[float, ...]:
    return (jv.job.arrival,)


def srtf_key(cluster_rate: Callable[[Job, Config], float]) -> SortKey:
    def key(jv: JobView, cfg: Config) -> tuple[float, ...]:
        r = cluster_rate(jv.job, cfg)
        return (jv.remaining / r if r > 0 else math.inf, jv.job.arrival)

    return key


def remaining_time(instance: Instance) -> Callable[[Job, Config], float]:
    return lambda job, cfg: planned_rate(instance.cluster, job, cfg)
