"""Tiresias' discretised 2D-LAS as the authors' simulator runs it (`dlas-gpu`).

Gu et al., Tiresias, NSDI'19, Discretized 2D-LAS (Sec. 4.2 as cited in the registry; the paper is
not among ../shared/seeds, so the transcription follows the authors' public code). The reference
is SymbioticLab/Tiresias at commit 959f9b0, simulator/run_sim.py, ``dlas_sim_jobs(gputime=True)``
(``--schedule=dlas-gpu``); line numbers below are of that file. Cross-checked job by job with 1-s
slots in bench/tiresias_crosscheck.py. What that simulator does, and so this module:

* **Queues are ordered lists, not sort keys.** An arriving job goes to the tail of Q0 (lines
  1025-1030); a demoted job to the tail of the next queue (1050-1054). After every decision the
  jobs left waiting move to the tail of their queue in their previous relative order (1132-1143),
  so running jobs stay ahead of waiting ones.
* **Scheduling walks Q0, Q1, ... and each queue front to back** (1103-1118), starting every job
  whose GPUs still fit and skipping those that do not; a running job that no longer fits is
  suspended, a preemption (1120-1124). The simulator counts GPUs (``--scheme=count``); we place
  on the *committed* ledger: a running job still booked keeps its allocation (the walk never
  migrates it); a waiting job goes first-fit into free capacity, and if it does not fit, booked
  running jobs after it in walk order are evicted, last first, until it fits (an evicted job is
  retried at its own place later in the walk: where it was, else first fit, else it is suspended,
  a preemption). If evicting every later running job would not make it fit, nothing is evicted
  and it is skipped (free GPUs + GPUs of the later running jobs < its GPUs rules that out at
  once). Under GPU counting this selects the simulator's set: at job j evicting until it fits
  succeeds iff C - (GPUs of the jobs chosen before j) >= its GPUs, the simulator's test.
* **Demotion is checked at decisions only**, one queue per decision (1036-1056): each job that ran
  since the previous decision adds the elapsed slots to its executed time, and moves down one queue
  if executed time x GPUs >= that queue's limit (GPU-seconds).
* **The extra decision points ("job jumps", 1218-1239)**: for each running job not in the last
  queue, now + floor((limit - executed time) / GPUs). The simulator subtracts executed *time*, not
  executed GPU-time, from the GPU-time limit (and Python 2's integer division floors before its
  ``math.ceil``), so a multi-GPU job is usually checked just before it reaches the limit and then
  about limit / GPUs slots later: unless another event intervenes, it is demoted at up to about
  twice the nominal GPU-time. This is reproduced on purpose: it decides when jobs are demoted, and
  so the schedule. A jump that would not lie in the future is taken at the next slot (the engine
  only wakes forward).
* **Limits** default to 3250 and 7200 GPU-seconds: jobs.py's ``queue_limit`` with ``num_queue = 3``
  (only the first two limits are used).
* **Starvation** (PromoteKnob): `dlas-gpu` runs without it (``solve_starvation=0``), as does this
  default. With ``promote_knob`` = K > 0, as the simulator's ``dlas-gpu-K`` schemes (1058-1072, and
  1233-1238 for the decision time): a waiting job in a lower queue that has run before, whose
  waiting time since its first run or last promotion reaches floor(K x executed time), goes to the
  tail of Q0 with executed time 0.

Time is the engine's: slots of ``slot_seconds``; thresholds are converted to GPU-slots once.

Two paths give the same schedule (tests/test_fast_twins.py): ``Tiresias.decide_full``, the
readable transcription, visits every active job at every decision and returns the complete
allocation; ``tiresias_changes.ChangePath`` (the default under the engine) keeps queues, executed and waiting times
incrementally and returns only the changes, so a decision costs in proportion to the jobs that
arrive, complete, change queue or are placed or evicted, not to the jobs that keep running.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

from scheduling.algorithms.common import FitMemo, keep
from scheduling.algorithms.configs import FixedConfigs
from scheduling.algorithms.placement import PlacementName, placement_of
from scheduling.algorithms.placement import check as check_placement
from scheduling.algorithms.tiresias_changes import ChangePath, total_gpus
from scheduling.capacity import Ledger
from scheduling.engine import Decision, View
from scheduling.errors import ScheduleError
from scheduling.model import Instance
from scheduling.records import record
from scheduling.speed import Allocation, demand_of


@record(frozen=False)
class _Entry:
    """The simulator's per-job bookkeeping (its job dict's ``q_id``/``executed_time``/... fields)."""

    queue: int = 0  # index of the job's queue, 0 = highest priority
    executed: int = 0  # slots run since arrival or the last promotion (``executed_time``)
    waited: int = 0  # slots waited since the first run or last promotion (``last_pending_time``)
    ran: bool = False  # has run at least once (``total_executed_time > 0``)


class Tiresias:
    """Discretised 2D-LAS with the authors' queue discipline (see the module docstring).

    Two paths give the same schedule (tests/test_fast_twins.py): ``decide_full`` is the
    readable transcription (every decision visits every active job and returns the complete
    allocation); the change-based path (``ChangePath``, the default when the engine drives the
    scheduler directly) keeps the same state incrementally and returns only the changes."""

    def __init__(
        self,
        instance: Instance,
        configs: FixedConfigs,
        thresholds: tuple[float, ...],
        promote_knob: float = 0.0,
        incremental: bool = True,
        placement: PlacementName = "pool",
    ) -> None:
        self.instance = instance
        self.configs = configs
        # Where a job goes (placement.py). The authors' dlas-gpu counts GPUs whatever --scheme says
        # (lines 1103-1118 use CLUSTER.free_gpu only); a repacking placement (consolidated) walks as
        # their commented-out placement pass would (1169-1182): every job in walk order placed on
        # an empty cluster (the full path only).
        self.placement = placement_of(placement)
        check_placement(self.placement, instance.cluster, ((j, configs[j.job_id]) for j in instance.jobs))
        self._remember = self.placement.monotone(instance.cluster)
        slot = instance.cluster.slot_seconds
        self.limits = tuple(x / slot for x in thresholds)  # GPU-slots at which each queue ends
        self.knob = promote_knob
        self.queues: list[list[str]] = [[] for _ in range(len(thresholds) + 1)]
        self.entries: dict[str, _Entry] = {}
        self.jobs = {j.job_id: j for j in instance.jobs}
        self.gpus: dict[str, float] = {}  # GPUs a job holds when it runs (its fixed configuration)
        self.last_t: int | None = None
        self.shapes: dict[str, tuple[object, ...]] = {}
        self.incremental = incremental
        self._fast: ChangePath | None = None
        self._path: str | None = None  # "fast" or "full", chosen at the first decision

    def _gpus(self, job_id: str) -> float:
        g = self.gpus.get(job_id)
        if g is None:
            job = self.jobs[job_id]
            cfg = self.configs[job_id]
            cluster = self.instance.cluster
            w = (demand_of(cluster, job, "worker", cfg.worker_type) or {}).get("gpu", 0.0)
            p = (demand_of(cluster, job, "ps", cfg.ps_type) or {}).get("gpu", 0.0) if cfg.ps_type else 0.0
            g = self.gpus[job_id] = cfg.workers * w + cfg.ps * p
        return g

    def memo(self, ledger: Ledger) -> FitMemo:
        """A FitMemo of this scheduler's placement on ``ledger``."""
        return FitMemo(ledger, self.shapes, self.placement.place, self._remember)

    def decide(self, view: View) -> Decision:
        direct = view.direct
        if self._path is None:
            # The change-based path needs the engine's accessors from the first decision on (a
            # wrapper that filters the jobs hands over a plain tuple: only the full path sees that).
            fresh = direct and len(view.jobs) == len(view.arrived)
            fast = self.incremental and fresh and not self.placement.repack  # a repacking walk: full only
            self._path = "fast" if fast else "full"
        if self._path == "full":
            return self.decide_full(view)
        if not direct:
            raise ScheduleError(f"slot {view.t}: tiresias' change-based path lost the engine's view")
        if self._fast is None:
            self._fast = ChangePath(self)
        return self._fast.decide(view)

    # -- the readable transcription ------------------------------------------------------------
    def decide_full(self, view: View) -> Decision:
        elapsed = 0 if self.last_t is None else view.t - self.last_t
        self.last_t = view.t
        present = {jv.job.job_id for jv in view.jobs}
        # Completed jobs leave their queue (run_sim.py lines 1018-1022).
        for q in self.queues:
            q[:] = [j for j in q if j in present]
        for job_id in [j for j in self.entries if j not in present]:
            del self.entries[job_id]
        # New jobs go to the tail of Q0, in arrival order (lines 1025-1030).
        for jv in view.jobs:
            if jv.job.job_id not in self.entries:
                self.entries[jv.job.job_id] = _Entry()
                self.queues[0].append(jv.job.job_id)
        # Executed time, demotion by one queue, waiting time and promotion, in arrival order (the
        # simulator's runnable_jobs order, lines 1034-1072).
        last = len(self.queues) - 1
        for jv in view.jobs:
            job_id = jv.job.job_id
            e = self.entries[job_id]
            if jv.running:
                e.executed += elapsed
                e.ran = True
                if e.queue < last and e.executed * self._gpus(job_id) >= self.limits[e.queue] - 1e-9:
                    self._move(job_id, e, e.queue + 1)  # lines 1046-1056
            elif e.executed > 0:
                e.waited += elapsed
                if self.knob > 0 and e.queue > 0 and e.ran and e.waited >= math.floor(e.executed * self.knob):
                    e.executed = e.waited = 0  # PromoteKnob, lines 1067-1072
                    self._move(job_id, e, 0)
        allocations, waiting = self._schedule(view)
        # Jobs left waiting go behind the running ones of their queue, keeping their order (1132-1143).
        for q in self.queues:
            q[:] = [j for j in q if j not in waiting] + [j for j in q if j in waiting]
        return Decision(allocations=allocations, wake_at=self._next_jump(view.t, allocations))

    def _move(self, job_id: str, e: _Entry, queue: int) -> None:
        self.queues[e.queue].remove(job_id)
        self.queues[queue].append(job_id)
        e.queue = queue

    def _schedule(self, view: View) -> tuple[tuple[Allocation, ...], set[str]]:
        """Walk the queues in order on the committed ledger (run_sim.py lines 1103-1124; the
        module docstring says how evictions reproduce the simulator's GPU counting)."""
        cluster = self.instance.cluster
        current: dict[str, list[Allocation]] = {}
        for a in view.allocations:
            current.setdefault(a.job_id, []).append(a)
        ledger = view.ledger()
        order = list(itertools.chain.from_iterable(self.queues))
        if self.placement.repack:
            return self._repack(ledger, order)
        for job_id, allocs in current.items():
            booked = keep(ledger, self.jobs[job_id], allocs)
            assert booked, f"committed allocation of {job_id!r} does not fit"
        memo = self.memo(ledger)
        booked_jobs = set(current)  # running jobs whose allocation is still booked
        new: dict[str, tuple[Allocation, ...]] = {}  # jobs placed anew (started, or evicted and moved)
        free = total_gpus(cluster) - sum(self._gpus(j) for j in current)
        for i, job_id in enumerate(order):
            if job_id in booked_jobs:
                continue  # a running job still booked keeps its allocation
            job, g = self.jobs[job_id], self._gpus(job_id)
            if job_id in current and keep(ledger, job, current[job_id]):
                booked_jobs.add(job_id)  # evicted earlier in this walk, back where it was
                new.pop(job_id, None)
                free -= g
                continue
            placed = memo.place(job, self.configs[job_id])
            if placed is None:
                later = [j for j in order[i + 1 :] if j in booked_jobs and j in current]
                if free + sum(self._gpus(j) for j in later) < g - 1e-9:
                    continue  # even evicting every later running job would not make room: skip it
                evicted: list[str] = []
                while placed is None and later:
                    victim = later.pop()  # the last running job in walk order first
                    for a in current[victim]:
                        ledger.release(a.server, demand_of(cluster, self.jobs[victim], a.role, a.type) or {}, a.count)
                    booked_jobs.discard(victim)
                    evicted.append(victim)
                    free += self._gpus(victim)
                    memo.failed.clear()  # the ledger has more room now
                    placed = memo.place(job, self.configs[job_id])
                if placed is None:  # it does not fit even so: evict nothing
                    for victim in evicted:
                        assert keep(ledger, self.jobs[victim], current[victim])
                        booked_jobs.add(victim)
                        free -= self._gpus(victim)
                    continue
            new[job_id] = placed
            booked_jobs.add(job_id)
            free -= g
        chosen: list[Allocation] = []
        for job_id in order:
            if job_id in booked_jobs:
                chosen.extend(new.get(job_id) or current[job_id])
        waiting = {j for j in order if j not in booked_jobs}  # running ones among these are suspended
        return tuple(chosen), waiting

    def _repack(self, ledger: Ledger, order: list[str]) -> tuple[tuple[Allocation, ...], set[str]]:
        """_schedule under a repacking placement: each job in walk order placed on the empty
        ``ledger``, skipped if it does not fit (a running job placed elsewhere moves)."""
        memo = self.memo(ledger)
        chosen: list[Allocation] = []
        waiting: set[str] = set()
        for job_id in order:
            placed = memo.place(self.jobs[job_id], self.configs[job_id])
            if placed is None:
                waiting.add(job_id)
            else:
                chosen.extend(placed)
        return tuple(chosen), waiting

    def _next_jump(self, t: int, allocations: tuple[Allocation, ...]) -> int | None:
        """The simulator's next ``next_job_jump`` (lines 1218-1239): demotion checks of running jobs,
        promotions of waiting ones (see the module docstring for the formula and why it is kept)."""
        running = {a.job_id for a in allocations}
        last = len(self.queues) - 1
        best: int | None = None
        for job_id, e in self.entries.items():
            if job_id in running:
                g = self._gpus(job_id)
                if e.queue < last and g > 0:
                    at = t + math.floor((self.limits[e.queue] - e.executed) / g + 1e-9)
                    best = at if best is None else min(best, at)
            elif self.knob > 0 and e.queue > 0 and e.ran and e.executed > 0:
                diff = math.floor(e.executed * self.knob - e.waited + 1e-9)
                if diff > 0:
                    best = t + diff if best is None else min(best, t + diff)
        return None if best is None else max(best, t + 1)

    def report(self) -> Mapping[str, Any]:
        return {}
