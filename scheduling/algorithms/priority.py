"""List schedulers that differ only by a sort key: FIFO, SRTF and Tiresias (2D-LAS).

At every event the scheduler walks the jobs in key order and books each one's fixed
configuration all-or-nothing. Non-preemptive schedulers first keep every running job where it is;
preemptive ones let a job that comes earlier in key order take the place of a later one (the later
one is suspended and later resumes from where it stopped, possibly elsewhere).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from scheduling.algorithms.common import Config, FitMemo, ideal_config, keep, place, planned_rate
from scheduling.capacity import Ledger
from scheduling.engine import Decision, JobView, Lazy, View
from scheduling.model import Instance, Job
from scheduling.speed import Allocation, demand_of

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


RunningKey = str
"""How a job's key may change while it runs (it must never change while it waits):
``"fixed"`` never; ``"decreasing"`` it never increases (e.g. remaining time); ``"steps"`` it is
constant until the slot ``key_change`` names (e.g. Tiresias' queue). A preemptive scheduler that
does not declare it (None) always takes the full walk."""

Entry = tuple[tuple[float, ...], int, str]  # (key, arrival, job id): the walk's total order


class ListScheduler:
    """Walks the active jobs in key order and books each one's fixed configuration.

    Two paths give the same schedule (tests/test_priority_paths.py, tests/test_golden.py):

    * ``decide_full`` is the readable transcription: every event it re-books every running job
      in key order on an empty ledger and returns the complete allocation;
    * the change-based path (the default when the engine drives the scheduler directly) keeps the
      waiting jobs sorted by their key, which is fixed while a job waits, and the running jobs
      sorted by their key (or, for ``"decreasing"`` keys, by an upper bound of it). Running jobs
      whose key is below the first waiting job's come before every waiting job in the walk, so
      they keep their place and need no work; the walk starts from the committed ledger with only
      the running jobs after that point released, and stops once no waiting job can fit. It
      returns only the jobs whose allocation changes.
    """

    def __init__(
        self,
        instance: Instance,
        configs: FixedConfigs,
        key: SortKey,
        *,
        preemptive: bool,
        backfill: bool,
        wake: Callable[[View, tuple[Allocation, ...]], int | None] | None = None,
        running_key: RunningKey | None = None,
        key_change: Callable[[JobView, float, int], int | None] | None = None,
        incremental: bool = True,
    ) -> None:
        self.instance = instance
        self.configs = configs
        self.key = key
        self.preemptive = preemptive
        self.backfill = backfill
        self.wake = wake
        self.running_key = running_key
        self.key_change = key_change  # (view, GPUs held, t) -> slot a running job's key next changes, or None
        self.wake_on_key_change = wake is not None  # the change path wakes at the next key change
        # The change path needs the key's behaviour while running (preemptive walks only) and, to
        # wake as ``wake`` does, the slots keys change; without them the full walk runs.
        declared = (not preemptive or running_key is not None) and (wake is None or key_change is not None)
        self.incremental = incremental and declared
        self._keys: dict[str, tuple[JobView, tuple[float, ...]]] = {}
        self.shapes: dict[str, tuple[object, ...]] = {}
        self._state: _Queues | None = None

    def decide(self, view: View) -> Decision:
        if not self.incremental or view.engine is None or not isinstance(view.jobs, Lazy):
            self._state = None  # a wrapper filtered the jobs: only the full path sees that
            return self.decide_full(view)
        if self._state is None:
            self._state = _Queues(self, view)
        return self._state.decide(view)

    def decide_full(self, view: View) -> Decision:
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

    def entry(self, jv: JobView) -> Entry:
        return (self.key(jv, self.configs[jv.job.job_id]), jv.job.arrival, jv.job.job_id)

    def report(self) -> Mapping[str, Any]:
        return {}


class _Queues:
    """The change-based path's state: waiting and running jobs, each sorted by their walk entry."""

    def __init__(self, owner: ListScheduler, view: View) -> None:
        self.owner = owner
        self.cluster = view.cluster
        self.jobs = {j.job_id: j for j in owner.instance.jobs}
        self.waiting: list[Entry] = []  # sorted; keys are exact (fixed while waiting)
        self.running: list[Entry] = []  # sorted; exact keys, or upper bounds for "decreasing" keys
        self.entries: dict[str, Entry] = {}  # job id -> its entry in one of the two lists
        self.gpus: dict[str, float] = {}  # running job -> GPUs it holds
        self.change_at: dict[str, int] = {}  # running job -> slot its "steps" key changes next
        self.changes: list[tuple[int, str]] = []  # heap of change_at entries (stale ones skipped)
        self.counts: dict[tuple[object, ...], dict[int, int]] = {}  # shape -> workers -> waiting jobs
        self.recheck: list[str] = []  # jobs changed by the last decision: their key may change with it
        arrived = {j.job_id for j in view.arrived}  # added by the first decide
        for jv in view.jobs:  # jobs that arrived before the first change-based decision
            if jv.job.job_id in arrived:
                continue
            if jv.running:
                self._add_running(jv, view.running()[jv.job.job_id], view.t)
            else:
                self._add_waiting(jv)

    # -- bookkeeping ---------------------------------------------------------------------------
    def _shape(self, job: Job) -> tuple[tuple[object, ...], int]:
        cfg = self.owner.configs[job.job_id]
        shape = self.owner.shapes.get(job.job_id)
        if shape is None:
            shape = FitMemo(Ledger(self.cluster), self.owner.shapes).shape(job, cfg)
        return shape, cfg.workers

    def _add_waiting(self, jv: JobView) -> None:
        e = self.owner.entry(jv)
        bisect.insort(self.waiting, e)
        self.entries[jv.job.job_id] = e
        shape, n = self._shape(jv.job)
        counts = self.counts.setdefault(shape, {})
        counts[n] = counts.get(n, 0) + 1

    def _remove_waiting(self, job: Job) -> None:
        e = self.entries.pop(job.job_id)
        del self.waiting[bisect.bisect_left(self.waiting, e)]
        shape, n = self._shape(job)
        counts = self.counts[shape]
        counts[n] -= 1
        if not counts[n]:
            del counts[n]

    def _add_running(self, jv: JobView, allocs: tuple[Allocation, ...], t: int) -> None:
        job_id = jv.job.job_id
        e = self.owner.entry(jv)
        bisect.insort(self.running, e)
        self.entries[job_id] = e
        g = sum(a.count * (demand_of(self.cluster, jv.job, a.role, a.type) or {}).get("gpu", 0.0) for a in allocs)
        self.gpus[job_id] = g
        self._schedule_change(jv, t)

    def _schedule_change(self, jv: JobView, t: int) -> None:
        if self.owner.key_change is None:
            return
        job_id = jv.job.job_id
        at = self.owner.key_change(jv, self.gpus[job_id], t)
        if at is None:
            self.change_at.pop(job_id, None)
        else:
            self.change_at[job_id] = at
            heapq.heappush(self.changes, (at, job_id))

    def _remove_running(self, job_id: str) -> None:
        e = self.entries.pop(job_id)
        del self.running[bisect.bisect_left(self.running, e)]
        del self.gpus[job_id]
        self.change_at.pop(job_id, None)

    def _refresh(self, view: View, job_id: str) -> Entry:
        """Recompute a running job's exact entry and re-sort it."""
        old = self.entries[job_id]
        e = self.owner.entry(view.job(job_id))
        if e != old:
            del self.running[bisect.bisect_left(self.running, old)]
            bisect.insort(self.running, e)
            self.entries[job_id] = e
        return e

    def _next_change(self, t: int) -> int | None:
        """The earliest pending key change after ``t`` (stale heap entries dropped)."""
        heap = self.changes
        while heap and (self.change_at.get(heap[0][1]) != heap[0][0] or heap[0][0] <= t):
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    # -- one decision --------------------------------------------------------------------------
    def decide(self, view: View) -> Decision:
        t = view.t
        running = view.running()
        for job_id in view.completed:
            if job_id in self.gpus:
                self._remove_running(job_id)
        for job in view.arrived:
            self._add_waiting(view.job(job.job_id))
        # A key may depend on the committed state (Tiresias: the first start), which the previous
        # decision's own view did not show yet: re-sort the jobs it changed.
        for job_id in self.recheck:
            if job_id in self.gpus:
                self._refresh(view, job_id)
            elif job_id in self.entries:
                jv = view.job(job_id)
                self._remove_waiting(jv.job)
                self._add_waiting(jv)
        # "steps" keys: re-sort the running jobs whose key changes now (Tiresias: a queue threshold).
        heap = self.changes
        while heap and heap[0][0] <= t:
            at, job_id = heapq.heappop(heap)
            if self.change_at.get(job_id) == at:
                self._refresh(view, job_id)
                self._schedule_change(view.job(job_id), t)
        changes = self._walk(view, running) if self.waiting else {}
        for job_id, allocs in changes.items():
            if allocs and job_id not in running:
                jv = view.job(job_id)
                self._remove_waiting(jv.job)
                self._add_running(jv, allocs, t)
            elif not allocs:
                self._remove_running(job_id)
                self._add_waiting(view.job(job_id))
            # else moved to other servers: same configuration, same GPUs, same key
        self.recheck = list(changes)
        wake_at = self._next_change(t) if self.owner.wake_on_key_change else None
        return Decision(changes=changes, wake_at=wake_at)

    def _after(self, view: View, first: Entry) -> list[Entry]:
        """The running jobs that come after ``first`` in the walk, in walk order."""
        i = bisect.bisect_right(self.running, first)
        if self.owner.running_key != "decreasing":
            return self.running[i:]
        # Stored entries are upper bounds: only jobs stored above ``first`` may come after it.
        candidates = [e[2] for e in self.running[i:]]
        return sorted(e for job_id in candidates if (e := self._refresh(view, job_id)) > first)

    def _walk(self, view: View, running: Mapping[str, tuple[Allocation, ...]]) -> dict[str, tuple[Allocation, ...]]:
        """The list-scheduling walk from the first waiting job on (see ListScheduler)."""
        owner = self.owner
        ledger = view.committed_ledger()
        after = self._after(view, self.waiting[0]) if owner.preemptive else []
        for _key, _arrival, job_id in after:
            for a in running[job_id]:
                ledger.release(a.server, demand_of(self.cluster, self.jobs[job_id], a.role, a.type) or {}, a.count)
        memo = FitMemo(ledger, owner.shapes)
        changes: dict[str, tuple[Allocation, ...]] = {}
        r = 0
        stopped = False
        for w in self.waiting:
            while r < len(after) and after[r] < w:
                job_id = after[r][2]
                r += 1
                if keep(ledger, self.jobs[job_id], running[job_id]):
                    continue
                placed = memo.place(self.jobs[job_id], owner.configs[job_id])
                changes[job_id] = placed if placed is not None else ()
                if placed is None and not owner.backfill:
                    stopped = True
                    break
            if stopped:
                break
            placed = memo.place(self.jobs[w[2]], owner.configs[w[2]])
            if placed is not None:
                changes[w[2]] = placed
            elif not owner.backfill:
                stopped = True
                break
            if r >= len(after) and memo.hopeless(self._fewest()):
                break  # nothing waiting fits any more and no running job is left to re-book
        for _key, _arrival, job_id in after[r:]:
            if stopped:
                changes[job_id] = ()  # the walk stopped before re-booking them
            elif not keep(ledger, self.jobs[job_id], running[job_id]):
                placed = memo.place(self.jobs[job_id], owner.configs[job_id])
                changes[job_id] = placed if placed is not None else ()
                if placed is None and not owner.backfill:
                    stopped = True
        return changes

    def _fewest(self) -> dict[tuple[object, ...], int]:
        return {shape: min(counts) for shape, counts in self.counts.items() if counts}


def fifo_key(jv: JobView, cfg: Config) -> tuple[float, ...]:
    return (jv.job.arrival,)


def srtf_key(cluster_rate: Callable[[Job, Config], float]) -> SortKey:
    rates: dict[str, float] = {}  # a job's configuration is fixed, so is its planned rate

    def key(jv: JobView, cfg: Config) -> tuple[float, ...]:
        r = rates.get(jv.job.job_id)
        if r is None:
            r = rates[jv.job.job_id] = cluster_rate(jv.job, cfg)
        return (jv.remaining / r if r > 0 else math.inf, jv.job.arrival)

    return key


def remaining_time(instance: Instance) -> Callable[[Job, Config], float]:
    return lambda job, cfg: planned_rate(instance.cluster, job, cfg)
