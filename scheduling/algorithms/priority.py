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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType

from scheduling import gpu_types
from scheduling.algorithms.common import Config, FitMemo, ideal_config, job_shape, keep, place, planned_rate
from scheduling.algorithms.placement import Place, Placement, PlacementName, placement_of
from scheduling.algorithms.placement import check as check_placement
from scheduling.algorithms.ties import PreviousOrder
from scheduling.capacity import Ledger
from scheduling.engine import Decision, JobView, View, held_key
from scheduling.model import Cluster, Instance, Job
from scheduling.speed import SPREAD_SLOWDOWN, Allocation, demand_of, gpus_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)

if TYPE_CHECKING:
    from typing import Any, Literal

    import numpy as np

SortKey = Callable[[JobView, Config], tuple[float, ...]]
"""A job's priority from its view and configuration (smaller first); not time-dependent, so a
key is computed once per job view."""


WORKER_RULES = ("drawn", "most", "chunks", "request")
"""How a fixed-size baseline chooses an elastic job's worker count (parameter ``worker_rule``, one
value for every fixed-size baseline of a comparison, DESIGN section 9): ``drawn`` uniformly in
[lo, hi] per job (Zhou et al. Sec. 7 and OASiS Sec. V-A: "fixed to a number within [1, 30]");
``most`` hi; ``chunks`` D_j, one worker per data chunk (the most an elastic algorithm may use);
``request`` the trace's ``gpu_request`` where it states one (else drawn). Each is capped at D_j
and at what an empty cluster holds."""


class FixedConfigs:
    """One configuration per job, fixed for its lifetime (the papers' FIFO/DRF setups).

    Rigid jobs get their requested GPUs. Elastic jobs get the ideal-case worker/PS types and a
    worker count by ``rule`` (WORKER_RULES), capped by the job's worker limit D_j and by what an
    empty cluster can hold. A count is drawn for every job whatever the rule, so the run's
    generator is left in the same state.
    """

    def __init__(
        self, instance: Instance, rng: np.random.Generator, lo: int, hi: int, ps: int, rule: str = "drawn"
    ) -> None:
        if rule not in WORKER_RULES:
            raise ValueError(f"unknown worker rule {rule!r}")
        self.cluster = instance.cluster
        self.rule = rule
        self.configs: dict[str, Config] = {}
        # A rigid job's configuration is its GPUs: a trace of rigid jobs only needs no draw (and so
        # no numpy, whose import alone takes longer than a short run of fifo).
        draw = not all(job.rigid for job in instance.jobs)
        for job in instance.jobs:  # drawn in trace order so that the same seed gives the same counts
            workers = int(rng.integers(lo, hi + 1)) if draw else 1  # drawn for every job: the others' draws never move
            if rule == "request" and job.gpu_request is not None:
                workers = job.gpu_request
            elif rule == "most":
                workers = hi
            elif rule == "chunks":
                workers = job.max_workers()
            self.configs[job.job_id] = self._feasible(job, ideal_config(self.cluster, job, workers, ps))

    def _feasible(self, job: Job, cfg: Config) -> Config:
        if cfg.workers > 32 and place(Ledger(self.cluster), job, cfg) is None:
            # Many workers (worker_rule=chunks): the largest count an empty cluster holds, by
            # bisection (the placeable counts are downward closed, as common._most_on_empty assumes).
            lo, hi = 1, cfg.workers
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if place(Ledger(self.cluster), job, _sized(cfg, mid)) is not None else (lo, mid)
            return _sized(cfg, lo)
        while cfg.workers > 1 and place(Ledger(self.cluster), job, cfg) is None:
            cfg = Config(cfg.worker_type, cfg.workers - 1, cfg.ps_type, cfg.ps)
        return cfg

    def __getitem__(self, job_id: str) -> Config:
        return self.configs[job_id]


def _sized(cfg: Config, workers: int) -> Config:
    return Config(cfg.worker_type, workers, cfg.ps_type, cfg.ps)


if TYPE_CHECKING:
    RunningKey = Literal["fixed", "decreasing", "remaining", "steps"]  # RUNNING_KEYS
else:
    RunningKey = str  # (the Literal of RUNNING_KEYS, for the type checker)
"""How a job's key may change while it runs (it must never change while it waits):
``"fixed"`` never; ``"decreasing"`` it never increases (e.g. remaining time); ``"remaining"`` its
first component is the remaining time in slots at the job's planned rate, so it falls by exactly
one per slot while the job progresses at that rate (srtf); ``"steps"`` it is constant until the
slot ``key_change`` names (e.g. Tiresias' queue). A preemptive scheduler that does not declare it
(None) always takes the full walk."""
RUNNING_KEYS: tuple[RunningKey, ...] = ("fixed", "decreasing", "remaining", "steps")

Configs = FixedConfigs | Mapping[str, Config]
"""Each job's fixed configuration by job id."""

Entry = tuple[tuple[float, ...], int, str]  # (key, arrival, job id): the walk's total order

UNCHANGED = Decision(changes=MappingProxyType({}))
"""A change-based decision that changes nothing (one shared, read-only object)."""

SLACK = 1e-6
"""Margin of the necessary GPU check before an eviction: it only skips a job that is short of GPUs
by more than this (place() itself decides with the ledger's 1e-9 tolerance)."""


def worker_gpus(cluster: Cluster, job: Job, cfg: Config) -> float:
    """GPUs the workers of ``cfg`` need: a job cannot fit while the servers accepting workers have
    fewer free GPUs than this."""
    return (demand_of(cluster, job, "worker", cfg.worker_type) or {}).get("gpu", 0.0) * cfg.workers


def evict_until_fit(
    ledger: Ledger,
    job: Job,
    cfg: Config,
    victims: Iterable[tuple[Job, Sequence[Allocation]]],
    placement: Place = place,
) -> tuple[Ledger, tuple[Allocation, ...], int] | None:
    """Release ``victims`` one at a time, in the order given, on a copy of ``ledger`` until ``cfg``
    fits (by ``placement``, first-fit by default); return the copy with the job booked, its
    allocation and how many victims were released, or None (``ledger`` is untouched either way, so
    a failure restores every victim)."""
    trial = ledger.copy()
    cluster = ledger.cluster
    for n, (vjob, allocs) in enumerate(victims, 1):
        for a in allocs:
            trial.release(a.server, demand_of(cluster, vjob, a.role, a.type) or {}, a.count)
        placed = placement(trial, job, cfg)
        if placed is not None:
            return trial, placed, n
    return None


class ListScheduler:
    """Walks the active jobs in key order and books each one's fixed configuration.

    Preemptive walk (srtf, tiresias order=start, tiresias-l), on the committed ledger, where every
    running job stays booked:

    1. a running job still booked keeps its allocation (never moved by the walk);
    2. a waiting job is placed first-fit in free capacity; a job evicted earlier in this walk
       first takes back its own allocation if that is free again (no move), else first-fit;
    3. if it does not fit, the booked running jobs that come after it in key order are evicted one
       at a time, the last in key order first, until it fits; it is then booked and the evicted
       jobs wait (they are retried at their own place later in the same walk, and are suspended,
       a preemption, if they do not fit then). If evicting every later running job would not make
       it fit, none is evicted and the job is skipped (backfill). A cheap necessary check comes
       first: the free GPUs of the servers that accept workers plus the GPUs the later running
       jobs hold must reach what its workers need.

    Under GPU counting (one pool of C GPUs; rigid jobs of 1-GPU workers on N x G servers are
    placed whenever enough GPUs are free) this starts exactly the jobs of the Tiresias authors'
    loop "sort every job, place in order, skip what does not fit" (SymbioticLab/Tiresias at
    959f9b0, simulator/run_sim.py, ``shortest_first_sim_jobs`` lines 669-700, the same pass as in
    ``dlas_sim_jobs``; bench/tiresias_crosscheck.py checks srtf against it): by induction over the walk, when
    job j is reached the booked jobs before j in key order are the chosen ones before j, and
    evicting the later ones until j fits succeeds iff C - usage(chosen before j) >= g_j, the
    greedy's test (docs/architecture.md). It differs from re-booking every job on an empty ledger
    only in where jobs go: free capacity is used before anything is evicted, so the walk never
    migrates a running job to make room.

    Non-preemptive walk (fifo): running jobs keep their place, waiting jobs are placed in key
    order; without backfill the first that does not fit blocks the rest.

    Two paths give the same schedule (tests/test_fast_twins.py, tests/test_golden.py):

    * ``decide_full`` is the readable transcription: every event it walks every active job in key
      order and returns the complete allocation;
    * the change-based path (the default when the engine drives the scheduler directly) keeps the
      waiting jobs sorted by their key, which is fixed while a job waits, and the running jobs
      sorted by their key (``"remaining"`` keys on rigid jobs: by expected finish slot, an upper
      bound of t + key at every later slot t, exact outside restart periods; see _Queues). It walks only
      the waiting jobs (and the jobs it evicts), reads the running jobs from the lowest priority up
      only as far as an eviction or the GPU check needs, and stops once no waiting job can fit,
      with or without evictions. It returns only the jobs whose allocation changes. A
      non-preemptive walk without backfill is skipped when it cannot start anything (no job
      completed and the queue's head is the job the previous walk stopped at; see _Queues.decide).
    """

    def __init__(
        self,
        instance: Instance,
        configs: Configs,
        key: SortKey,
        *,
        preemptive: bool,
        backfill: bool,
        wake: Callable[[View, tuple[Allocation, ...]], int | None] | None = None,
        running_key: RunningKey | None = None,
        key_change: Callable[[JobView, float, int], int | None] | None = None,
        incremental: bool = True,
        ready: Mapping[str, int] | None = None,
        ties: PreviousOrder | None = None,
        placement: PlacementName | Placement = "pool",
    ) -> None:
        if running_key is not None and running_key not in RUNNING_KEYS:  # a typo once ran the full walk silently
            raise ValueError(f"running_key {running_key!r}: one of {', '.join(RUNNING_KEYS)} or None")
        self.instance = instance
        # Where a job's configuration goes (placement.py); under a placement that repacks, a
        # preemptive walk re-places every active job on an empty cluster (_walk_repack).
        self.placement = placement_of(placement) if isinstance(placement, str) else placement
        check_placement(self.placement, instance.cluster, ((j, configs[j.job_id]) for j in instance.jobs))
        self._remember = self.placement.monotone(instance.cluster)  # FitMemo may skip failed shapes
        self.repack = preemptive and self.placement.repack
        # Ties of ``key``: by (arrival, job id) when None; else the key is extended by
        # ``ties.tie`` (the previous decision's order, PreviousOrder), then (arrival, job id).
        self.ties = ties
        # Job id -> first slot the job may be scheduled (tiresias-l: once its data can be on the
        # nearest server); before it the walk does not see the job, and a decision wakes the run
        # then. None: from its arrival.
        self.ready = ready
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
        # A repacking walk re-places every job at every decision: it has no change-based form (decide).
        self.incremental = incremental and declared
        self._keys: dict[str, tuple[JobView, tuple[float, ...]]] = {}
        self._needs: dict[str, float] = {}
        self.shapes: dict[str, tuple[object, ...]] = {}
        self._state: _Queues | None = None

    def decide(self, view: View) -> Decision:
        ties = self.ties
        if ties is not None:
            ties.t = view.t
            for job_id in view.completed:
                ties.forget(job_id)
            for job in view.arrived:
                ties.record(job.job_id, view.t)
        if not self.incremental or self.repack or not view.direct:
            # A wrapper filtered the jobs (only the full path sees that), or a repacking walk.
            self._state = None
            decision = self.decide_full(view)
            if ties is not None:  # the starts and stops of this decision (_Queues records its own)
                now = {a.job_id for a in decision.allocations}
                for jv in view.jobs:
                    job_id = jv.job.job_id
                    if ties.running(job_id) != (job_id in now):
                        ties.record(job_id, view.t)
            return decision
        if self._state is None:
            self._state = _Queues(self, view)
        return self._state.decide(view)

    def memo(self, ledger: Ledger) -> FitMemo:
        """A FitMemo of this scheduler's placement on ``ledger``."""
        return FitMemo(ledger, self.shapes, self.placement.place, self._remember)

    def need(self, job: Job) -> float:
        """GPUs the job's workers need (see worker_gpus)."""
        g = self._needs.get(job.job_id)
        if g is None:
            g = self._needs[job.job_id] = worker_gpus(self.instance.cluster, job, self.configs[job.job_id])
        return g

    def decide_full(self, view: View) -> Decision:
        ledger = view.ledger()
        current: dict[str, list[Allocation]] = {}
        for a in view.allocations:
            current.setdefault(a.job_id, []).append(a)
        jobs = list(view.jobs)
        hidden: list[int] = []  # ready slots of the active jobs the walk does not see yet
        if self.ready is not None:
            ready, t = self.ready, view.t
            hidden = [ready[jv.job.job_id] for jv in jobs if ready[jv.job.job_id] > t]
            jobs = [jv for jv in jobs if ready[jv.job.job_id] <= t]  # never running: hidden until ready
        if self.repack:
            allocations = self._walk_repack(ledger, jobs)
        elif self.preemptive:
            allocations = self._walk_preemptive(view, ledger, current, jobs)
        else:
            chosen: list[Allocation] = []
            for jv in jobs:
                if jv.running and keep(ledger, jv.job, current[jv.job.job_id]):
                    chosen.extend(current[jv.job.job_id])
            jobs = [jv for jv in jobs if not jv.running]
            jobs.sort(key=self._key)
            memo = self.memo(ledger)
            for jv in jobs:
                placed = memo.place(jv.job, self.configs[jv.job.job_id])
                if placed is not None:
                    chosen.extend(placed)
                elif not self.backfill:
                    break
            allocations = tuple(chosen)
        wake_at = self.wake(view, allocations) if self.wake else None
        if hidden:
            wake_at = min(hidden) if wake_at is None else min(wake_at, *hidden)
        return Decision(allocations=allocations, wake_at=wake_at)

    def _walk_preemptive(
        self, view: View, ledger: Ledger, current: Mapping[str, Sequence[Allocation]], jobs: list[JobView]
    ) -> tuple[Allocation, ...]:
        """Rules 1-3 of the class docstring over every active job."""
        jobs.sort(key=self._key)  # stable: ties by (arrival, job id), the order of view.jobs
        booked: dict[str, Sequence[Allocation]] = {}
        held: dict[str, float] = {}
        for jv in jobs:  # the committed ledger: every running job booked where it is
            if jv.running:
                job_id = jv.job.job_id
                kept = keep(ledger, jv.job, current[job_id])
                assert kept, f"committed allocation of {job_id} does not fit"
                booked[job_id] = current[job_id]
                held[job_id] = gpus_of(view.cluster, jv.job, current[job_id])
        memo = self.memo(ledger)
        for i, jv in enumerate(jobs):
            job_id = jv.job.job_id
            if job_id in booked:
                continue  # rule 1
            cfg = self.configs[job_id]
            placed: Sequence[Allocation] | None = None
            if jv.running and keep(ledger, jv.job, current[job_id]):
                placed = current[job_id]  # rule 2: evicted earlier in this walk, back where it was
            if placed is None:
                placed = memo.place(jv.job, cfg)  # rule 2
            if placed is None:  # rule 3: the booked running jobs after it, last in key order first
                later = [j for j in reversed(jobs[i + 1 :]) if j.job.job_id in booked]
                reach = ledger.role_free("worker", "gpu") + sum(held[j.job.job_id] for j in later)
                if reach >= self.need(jv.job) - SLACK:
                    victims = ((j.job, booked[j.job.job_id]) for j in later)
                    fit = evict_until_fit(ledger, jv.job, cfg, victims, self.placement.place)
                    if fit is not None:
                        ledger, placed, n = fit
                        memo = self.memo(ledger)  # capacity was freed: forget the failures
                        for j in later[:n]:
                            del booked[j.job.job_id]
            if placed is not None:
                booked[job_id] = placed
                held[job_id] = gpus_of(view.cluster, jv.job, placed)
            elif not self.backfill:
                break
        return tuple(a for jv in jobs if jv.job.job_id in booked for a in booked[jv.job.job_id])

    def _walk_repack(self, ledger: Ledger, jobs: list[JobView]) -> tuple[Allocation, ...]:
        """A repacking placement's preemptive walk: every active job in key order placed on the
        empty ``ledger``, running or not, skipping what does not fit (without backfill: stopping);
        a running job placed elsewhere moves, one not placed is suspended. The Tiresias
        simulator's preemptive loops under ``--scheme=yarn`` (run_sim.py lines 678-697:
        ``CLUSTER.empty_infra()``, then ``try_get_job_res`` for each job in order)."""
        jobs.sort(key=self._key)
        memo = self.memo(ledger)
        chosen: list[Allocation] = []
        for jv in jobs:
            placed = memo.place(jv.job, self.configs[jv.job.job_id])
            if placed is not None:
                chosen.extend(placed)
            elif not self.backfill:
                break
        return tuple(chosen)

    def _key(self, jv: JobView) -> tuple[float, ...]:
        # The engine hands out the same JobView object until the job's state changes.
        job = jv.job
        cached = self._keys.get(job.job_id)
        if cached is None or cached[0] is not jv:
            cached = (jv, self.key(jv, self.configs[job.job_id]))
            self._keys[job.job_id] = cached
        if self.ties is not None:  # may change without the view (a job's first decision ended)
            return cached[1] + self.ties.tie(job.job_id, job.arrival)
        return cached[1]

    def entry(self, jv: JobView) -> Entry:
        job = jv.job
        key = self.key(jv, self.configs[job.job_id])
        if self.ties is not None:
            key = key + self.ties.tie(job.job_id, job.arrival)
        return (key, job.arrival, job.job_id)

    def report(self) -> Mapping[str, Any]:
        return {}


class _Queues:
    """The change-based path's state: waiting and running jobs, each sorted by their walk entry.

    Running entries are exact walk entries, except in ``anchored`` mode (``"remaining"`` keys on
    rigid jobs, which progress one work unit per slot while they run), where the first key
    component is the expected finish slot F = t + k + remaining time of the slot t the job was
    booked, k the restart time if the engine charges one for that booking (a resume or a move, not
    a first start) else 0. At any later slot u its key is F - max(u, t + k) <= F - u, equal once
    the restart period is over, so the stored order bounds the keys from above and no running
    entry needs refreshing: a walk computes exact entries only for the running jobs it reads,
    pulling stored entries until the next one's bound is below the largest exact entry pulled.
    ``"remaining"`` keys on other jobs, and ``"decreasing"`` ones, are refreshed for every running
    job before a walk.
    """

    def __init__(self, owner: ListScheduler, view: View) -> None:
        self.owner = owner
        self.cluster = view.cluster
        self.jobs = {j.job_id: j for j in owner.instance.jobs}
        assert view.engine is not None
        # (A rigid job spread over servers under network.spread_slowdown, or on a GPU type with a
        # speed factor, progresses at another rate; a job with its own restart cost pauses for its own.)
        self.anchored = (
            owner.running_key == "remaining"
            and all(j.rigid and not gpu_types.declared(view.cluster, j) for j in owner.instance.jobs)
            and not view.cluster.network.get(SPREAD_SLOWDOWN, 0.0)
            and not view.per_job_restarts()
        )
        self.pause = view.restart_slots() if self.anchored else 0  # restart time charged to a resume or move
        self.refresh = owner.running_key in ("decreasing", "remaining") and not self.anchored
        self.waiting: list[Entry] = []  # sorted; keys are exact (fixed while waiting)
        self.running: list[Entry] = []  # sorted; stored entries (see the class docstring)
        self.entries: dict[str, Entry] = {}  # job id -> its entry in one of the two lists
        self.gpus: dict[str, float] = {}  # running job -> GPUs it holds
        self.change_at: dict[str, int] = {}  # running job -> slot its "steps" key changes next
        self.changes: list[tuple[int, str]] = []  # heap of change_at entries (stale ones skipped)
        # shape -> workers -> waiting jobs (not kept when the walk blocks: see _add_waiting)
        self.counts: dict[tuple[object, ...], dict[int, int]] = {}
        self.recheck: list[str] = []  # jobs changed by the last decision: their key may change with it
        # Within one walk: running jobs evicted so far, and the booked running jobs read from the
        # lowest priority up (exact entries) with the GPUs they hold, summed.
        self.out: set[str] = set()
        self.tail: list[Entry] = []
        self.held: list[float] = []
        self.source: Iterator[Entry] = iter(())
        self.running_now: Mapping[str, tuple[Allocation, ...]] = {}
        # A non-preemptive walk without backfill stops at the first waiting job that does not fit:
        # that job's entry once a walk stopped there, else None (see decide).
        self.blocks = not owner.preemptive and not owner.backfill
        self.blocked: Entry | None = None
        # Only a preemptive walk reads the running jobs' order, and only key changes need their
        # GPUs: a non-preemptive walk without them (fifo) keeps no running entries.
        self.track = owner.preemptive or owner.key_change is not None
        self.pending: list[tuple[int, str]] = []  # heap of (ready slot, job id): arrived, not ready yet
        arrived = {j.job_id for j in view.arrived}  # added by the first decide
        for jv in view.jobs:  # jobs that arrived before the first change-based decision
            if jv.job.job_id in arrived:
                continue
            if jv.running:  # it may be in a restart period: the bound with a full one holds
                if self.track:
                    self._add_running(jv, view.running()[jv.job.job_id], view.t, self.pause)
            else:
                self._arrive(jv, view.t)

    # -- bookkeeping ---------------------------------------------------------------------------
    def _shape(self, job: Job) -> tuple[tuple[object, ...], int]:
        cfg = self.owner.configs[job.job_id]
        return job_shape(self.cluster, job, cfg, self.owner.shapes), cfg.workers

    def _arrive(self, jv: JobView, t: int) -> None:
        """A new waiting job joins the walk, or waits in ``pending`` until its ready slot."""
        ready = self.owner.ready
        if ready is not None and ready[jv.job.job_id] > t:
            heapq.heappush(self.pending, (ready[jv.job.job_id], jv.job.job_id))
        else:
            self._add_waiting(jv)

    def _add_waiting(self, jv: JobView) -> None:
        e = self.owner.entry(jv)
        bisect.insort(self.waiting, e)
        self.entries[jv.job.job_id] = e
        if self.blocks:
            return  # a walk that stops at its first failure never asks what else could fit (counts)
        shape, n = self._shape(jv.job)
        counts = self.counts.setdefault(shape, {})
        counts[n] = counts.get(n, 0) + 1

    def _remove_waiting(self, job: Job) -> None:
        e = self.entries.pop(job.job_id)
        del self.waiting[bisect.bisect_left(self.waiting, e)]
        if self.blocks:
            return
        shape, n = self._shape(job)
        counts = self.counts[shape]
        counts[n] -= 1
        if not counts[n]:
            del counts[n]

    def _stored(self, jv: JobView, t: int, pause: int = 0) -> Entry:
        e = self.owner.entry(jv)
        if self.anchored:
            key, arrival, job_id = e
            return ((t + pause + key[0], *key[1:]), arrival, job_id)
        return e

    def _add_running(self, jv: JobView, allocs: Sequence[Allocation], t: int, pause: int = 0) -> None:
        job_id = jv.job.job_id
        e = self._stored(jv, t, pause)
        bisect.insort(self.running, e)
        self.entries[job_id] = e
        self.gpus[job_id] = gpus_of(self.cluster, jv.job, allocs)
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

    def _refresh(self, view: View, job_id: str) -> None:
        """Recompute a running job's stored entry and re-sort it."""
        old = self.entries[job_id]
        e = self._stored(view.job(job_id), view.t)
        if e != old:
            del self.running[bisect.bisect_left(self.running, old)]
            bisect.insort(self.running, e)
            self.entries[job_id] = e

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
            self._arrive(view.job(job.job_id), t)
        pending = self.pending
        while pending and pending[0][0] <= t:  # never started, so still active and waiting
            self._add_waiting(view.job(heapq.heappop(pending)[1]))
        # A key may depend on the committed state (Tiresias: the first start), which the previous
        # decision's own view did not show yet: re-sort the jobs it changed.
        for job_id in self.recheck:
            if job_id in self.gpus:
                if not self.anchored:  # an anchored entry does not depend on the slot it is read
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
        if not self.waiting or (self.blocked is not None and not view.completed and self.waiting[0] == self.blocked):
            # The previous walk stopped at ``blocked``, the head of the waiting list, because it
            # did not fit on the ledger the walk ended on. The engine has since booked exactly the
            # changes that walk returned (the same takes in the same order), and the committed
            # ledger changes otherwise only when a job completes (reported in view.completed) or
            # an algorithm decision stops, moves or resizes a job, which a non-preemptive walk
            # never does. So with no completion the committed ledger is that ledger; with the same
            # head (every arrival and re-sorted job comes after it), a walk would try the same job
            # on the same ledger first, fail again and stop: nothing changes.
            changes = {}
        elif self.owner.preemptive:
            changes = self._walk(view, running)
        else:
            changes = self._walk_in_order(view)
        ties = self.owner.ties
        for job_id, allocs in changes.items():
            if ties is not None and bool(allocs) != (job_id in running):
                ties.record(job_id, t)  # started or stopped: its tie changes with its new entry
            if allocs and job_id not in running and not self.track:
                self._remove_waiting(self.jobs[job_id])  # started (a non-preemptive walk only starts jobs)
            elif allocs and job_id not in running:
                jv = view.job(job_id)
                self._remove_waiting(jv.job)
                # The engine charges the restart time to a resume, not to a first start.
                self._add_running(jv, allocs, t, self.pause if jv.start is not None else 0)
            elif not allocs:
                self._remove_running(job_id)
                self._add_waiting(view.job(job_id))
            elif self.pause and held_key(allocs) != held_key(running[job_id]):
                # Evicted and placed elsewhere in the same walk: a move, which pauses it.
                self._remove_running(job_id)
                self._add_running(view.job(job_id), allocs, t, self.pause)
            # else evicted and placed again where it was: same configuration, GPUs and key
        self.recheck = list(changes)
        if ties is not None:  # their tie changes once their first decision is over (PreviousOrder)
            self.recheck += (job.job_id for job in view.arrived if job.job_id not in changes)
        self.blocked = self.waiting[0] if self.blocks and self.waiting else None
        wake_at = self._next_change(t) if self.owner.wake_on_key_change else None
        if pending:
            wake_at = pending[0][0] if wake_at is None else min(wake_at, pending[0][0])
        if not changes and wake_at is None:
            return UNCHANGED  # most events of a blocked queue
        return Decision(changes=changes, wake_at=wake_at)

    # -- the running jobs from the lowest priority up ------------------------------------------
    def _descending(self, view: View) -> Iterator[Entry]:
        """Exact entries of the booked running jobs, last in walk order first."""
        out = self.out
        if not self.anchored:
            for e in reversed(self.running):
                if e[2] not in out:
                    yield e
            return
        # A stored first component s bounds t + key(t) from above (within rounding): pull stored
        # entries until the next one cannot be above the largest exact entry pulled.
        t = view.t
        run = self.running
        i = len(run) - 1
        pulled: list[Entry] = []  # exact entries, ascending
        while True:
            while i >= 0:
                s = run[i][0][0]
                if pulled and s - t + 1e-9 * (abs(s) + 1.0) < pulled[-1][0][0]:
                    break
                job_id = run[i][2]
                i -= 1
                if job_id not in out:
                    bisect.insort(pulled, self.owner.entry(view.job(job_id)))
            if not pulled:
                return
            yield pulled.pop()

    def _read(self, k: int) -> bool:
        """Read the tail up to index ``k``; whether it has that many entries."""
        while len(self.tail) <= k:
            e = next(self.source, None)
            if e is None:
                return False
            self.tail.append(e)
            self.held.append((self.held[-1] if self.held else 0.0) + self.gpus[e[2]])
        return True

    def _reaches(self, x: Entry, gpus: float) -> bool:
        """Whether the booked running jobs after ``x`` hold at least ``gpus`` GPUs (- SLACK)."""
        if gpus <= SLACK:
            return True
        need = gpus - SLACK
        tail, held = self.tail, self.held
        while (not held or (held[-1] < need and tail[-1] > x)) and self._read(len(tail)):
            pass
        k = bisect.bisect_left(held, need)  # the first entry whose suffix sum reaches it
        return k < len(tail) and tail[k] > x

    def _victims(self, x: Entry) -> Iterator[tuple[Job, Sequence[Allocation]]]:
        k = 0
        while self._read(k) and self.tail[k] > x:
            job_id = self.tail[k][2]
            yield self.jobs[job_id], self.running_now[job_id]
            k += 1

    # -- the walk ------------------------------------------------------------------------------
    def _walk(self, view: View, running: Mapping[str, tuple[Allocation, ...]]) -> dict[str, tuple[Allocation, ...]]:
        """The preemptive list-scheduling walk over the waiting jobs (see ListScheduler; a
        non-preemptive walk is _walk_in_order)."""
        owner = self.owner
        if self.refresh:
            for job_id in list(self.gpus):
                self._refresh(view, job_id)
        ledger = view.committed_ledger()
        memo = owner.memo(ledger)
        self.running_now = running
        self.out = set()
        self.tail, self.held = [], []
        self.source = self._descending(view)
        fewest = self._fewest()
        least = min((self._need_of(shape, n) for shape, n in fewest.items()), default=0.0)
        changes: dict[str, tuple[Allocation, ...]] = {}
        evicted: list[Entry] = []  # heap: jobs evicted in this walk, retried at their place
        waiting = self.waiting
        w = 0
        while w < len(waiting) or evicted:
            # Stop once nothing waiting fits in free capacity and no eviction can make room.
            if (
                not evicted
                and memo.hopeless(fewest)
                and not self._reaches(waiting[w], least - ledger.role_free("worker", "gpu"))
            ):
                break
            if evicted and (w >= len(waiting) or evicted[0] < waiting[w]):
                x = heapq.heappop(evicted)
                job_id = x[2]
                if keep(ledger, self.jobs[job_id], running[job_id]):
                    del changes[job_id]  # back where it was: no change
                    continue
            else:
                x = waiting[w]
                w += 1
            job_id = x[2]
            job, cfg = self.jobs[job_id], owner.configs[job_id]
            placed = memo.place(job, cfg)
            fit = None
            if placed is None and self._reaches(x, owner.need(job) - ledger.role_free("worker", "gpu")):
                fit = evict_until_fit(ledger, job, cfg, self._victims(x), owner.placement.place)
            if fit is not None:
                ledger, placed, n = fit
                memo = owner.memo(ledger)  # capacity was freed: forget the failures
                for e in self.tail[:n]:
                    self.out.add(e[2])
                    changes[e[2]] = ()  # suspended unless placed again later in the walk
                    heapq.heappush(evicted, e)
                base = self.held[n - 1]
                self.tail, self.held = self.tail[n:], [h - base for h in self.held[n:]]
            if placed is not None:
                changes[job_id] = placed
            elif not owner.backfill:
                break
        return changes

    def _walk_in_order(self, view: View) -> dict[str, tuple[Allocation, ...]]:
        """_walk without evictions (a non-preemptive walk: fifo): the waiting jobs are placed in
        key order on the committed ledger; without backfill the first that does not fit stops the
        walk, with backfill it stops once no waiting job can fit (as _walk's stopping test)."""
        owner = self.owner
        configs = owner.configs
        ledger = view.committed_ledger()
        changes: dict[str, tuple[Allocation, ...]] = {}
        if not owner.backfill:  # stops at the first failure, so no failure needs remembering
            put = owner.placement.place
            for _key, _arrival, job_id in self.waiting:
                placed = put(ledger, self.jobs[job_id], configs[job_id])
                if placed is None:
                    break
                changes[job_id] = placed
            return changes
        memo = owner.memo(ledger)
        fewest = self._fewest()
        for _key, _arrival, job_id in self.waiting:
            if memo.hopeless(fewest):
                break
            placed = memo.place(self.jobs[job_id], configs[job_id])
            if placed is not None:
                changes[job_id] = placed
        return changes

    def _need_of(self, shape: tuple[object, ...], workers: int) -> float:
        worker = dict(shape[0])  # type: ignore[call-overload]
        return float(worker.get("gpu", 0.0)) * workers

    def _fewest(self) -> dict[tuple[object, ...], int]:
        return {shape: min(counts) for shape, counts in self.counts.items() if counts}


def fifo_key(jv: JobView, cfg: Config) -> tuple[float, ...]:
    return (jv.job.arrival,)


def srtf_key(cluster_rate: Callable[[Job, Config], float]) -> SortKey:
    """Remaining time at the planned rate; ties are the scheduler's (arrival and job id, or
    PreviousOrder)."""
    rates: dict[str, float] = {}  # a job's configuration is fixed, so is its planned rate

    def key(jv: JobView, cfg: Config) -> tuple[float, ...]:
        r = rates.get(jv.job.job_id)
        if r is None:
            r = rates[jv.job.job_id] = cluster_rate(jv.job, cfg)
        return (jv.remaining / r if r > 0 else math.inf,)

    return key


def remaining_time(instance: Instance) -> Callable[[Job, Config], float]:
    return lambda job, cfg: planned_rate(instance.cluster, job, cfg)
