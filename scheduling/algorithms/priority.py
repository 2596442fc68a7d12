"""The list scheduler: jobs walked in the order of a sort key, each booked with its fixed
configuration all-or-nothing (fifo, srtf, tiresias order=start, tiresias-l, the A-SRPT baselines and
the plugins of scheduling/policy.py).

At every event the scheduler walks the jobs in key order. Non-preemptive walks first keep every
running job where it is; preemptive ones let a job that comes earlier in key order take the place
of a later one (the later one is suspended and later resumes from where it stopped, possibly
elsewhere).

The pieces live beside it, one idea each: each job's fixed configuration and the worker rules
(configs.py), evicting until a job fits (eviction.py), the change-based path (list_changes.py) and
the baselines' sort keys (sort_keys.py). Their names are importable from here too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from scheduling.algorithms.common import FitMemo, keep
from scheduling.algorithms.configs import WORKER_RULES, Configs, FixedConfigs, worker_gpus
from scheduling.algorithms.eviction import SLACK, evict_until_fit
from scheduling.algorithms.list_changes import UNCHANGED, Entry, _Queues
from scheduling.algorithms.placement import Placement, PlacementName, placement_of
from scheduling.algorithms.placement import check as check_placement
from scheduling.algorithms.sort_keys import MemoryOrder, SortKey, fifo_key, remaining_time, srtf_key
from scheduling.algorithms.ties import PreviousOrder
from scheduling.capacity import Ledger
from scheduling.engine import Decision, JobView, View
from scheduling.model import Instance, Job
from scheduling.speed import Allocation, gpus_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)

if TYPE_CHECKING:
    from typing import Any, Literal

__all__ = [
    "RUNNING_KEYS",
    "SLACK",
    "UNCHANGED",
    "WORKER_RULES",
    "Configs",
    "Entry",
    "FixedConfigs",
    "ListScheduler",
    "MemoryOrder",
    "RunningKey",
    "SortKey",
    "_Queues",
    "evict_until_fit",
    "fifo_key",
    "remaining_time",
    "srtf_key",
    "worker_gpus",
]

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
        memory: MemoryOrder | None = None,
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
        # An order with a memory (``memory``, the same object as ``key``: Tiresias' queues) is told
        # each decision's view before the walk and its allocations after; it has no change path.
        self.memory = memory
        self.incremental = incremental and declared and memory is None
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
        memory = self.memory
        if memory is not None:
            memory.observe(view, self.configs.__getitem__)
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
        if memory is not None:
            again = memory.decided(view, allocations)
            if again is not None:
                wake_at = again if wake_at is None else min(wake_at, again)
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
        if self.memory is not None:  # changes with the order's memory, not with the view
            return self.key(jv, self.configs[job.job_id])
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
