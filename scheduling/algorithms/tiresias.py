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

**Through the list scheduler's interface.** The queue discipline is an order with a memory
(scheduling/policy.py ``MemoryOrder``): ``DlasQueues`` keeps the queues and the executed and
waiting times, updates them before each walk (``observe``: arrivals, completions, demotion,
promotion), gives each job its place in Q0, Q1, ... as its sort key, and after the walk moves the
jobs left waiting behind the running ones and names the next "job jump" (``decided``). The walk is
the list scheduler's preemptive walk (scheduling/algorithms/priority.py, ``decide_full``), which on
the committed ledger is the walk described above. ``make_tiresias_dlas`` (baselines.py) builds it
with ``policy.list_scheduler``.

Two paths give the same schedule (tests/twins/lists.py): the list scheduler's full walk with
``DlasQueues``, the readable transcription, visits every active job at every decision and
returns the complete allocation; ``tiresias_changes.ChangePath`` (the default under the engine,
the engine's internal change-based form) keeps queues, executed and waiting times incrementally
and returns only the changes, so a decision costs in proportion to the jobs that arrive,
complete, change queue or are placed or evicted, not to the jobs that keep running.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any

from scheduling.algorithms.common import Config, FitMemo
from scheduling.algorithms.configs import FixedConfigs
from scheduling.algorithms.priority import ListScheduler
from scheduling.algorithms.tiresias_changes import ChangePath
from scheduling.capacity import Ledger
from scheduling.engine import Decision, JobView, View
from scheduling.errors import ScheduleError
from scheduling.model import Cluster, Instance, Job
from scheduling.records import record
from scheduling.speed import Allocation, demand_of


def config_gpus(cluster: Cluster, job: Job, cfg: Config) -> float:
    """GPUs a job holds when it runs with its fixed configuration (workers and PSs)."""
    w = (demand_of(cluster, job, "worker", cfg.worker_type) or {}).get("gpu", 0.0)
    p = (demand_of(cluster, job, "ps", cfg.ps_type) or {}).get("gpu", 0.0) if cfg.ps_type else 0.0
    return cfg.workers * w + cfg.ps * p


@record(frozen=False)
class _Entry:
    """The simulator's per-job bookkeeping (its job dict's ``q_id``/``executed_time``/... fields)."""

    queue: int = 0  # index of the job's queue, 0 = highest priority
    executed: int = 0  # slots run since arrival or the last promotion (``executed_time``)
    waited: int = 0  # slots waited since the first run or last promotion (``last_pending_time``)
    ran: bool = False  # has run at least once (``total_executed_time > 0``)


class DlasQueues:
    """The authors' queue discipline as an order with a memory (policy.MemoryOrder): the sort key
    of a job is its place in Q0, Q1, ... front to back (see the module docstring)."""

    def __init__(self, instance: Instance, thresholds: tuple[float, ...], promote_knob: float = 0.0) -> None:
        self.cluster = instance.cluster
        slot = instance.cluster.slot_seconds
        self.limits = tuple(x / slot for x in thresholds)  # GPU-slots at which each queue ends
        self.knob = promote_knob
        self.queues: list[list[str]] = [[] for _ in range(len(thresholds) + 1)]
        self.entries: dict[str, _Entry] = {}
        self.gpus: dict[str, float] = {}  # GPUs a job holds when it runs (its fixed configuration)
        self.last_t: int | None = None
        self.place: dict[str, int] = {}  # job id -> its place in the walk order

    def __call__(self, jv: JobView, cfg: Config) -> tuple[float, ...]:
        return (self.place[jv.job.job_id],)

    def observe(self, view: View, config: Callable[[str], Config]) -> None:
        """Before the walk: completions, arrivals, executed and waiting time, demotion and promotion."""
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
            job_id = jv.job.job_id
            if job_id not in self.entries:
                self.entries[job_id] = _Entry()
                self.queues[0].append(job_id)
                if job_id not in self.gpus:
                    self.gpus[job_id] = config_gpus(self.cluster, jv.job, config(job_id))
        # Executed time, demotion by one queue, waiting time and promotion, in arrival order (the
        # simulator's runnable_jobs order, lines 1034-1072).
        last = len(self.queues) - 1
        for jv in view.jobs:
            job_id = jv.job.job_id
            e = self.entries[job_id]
            if jv.running:
                e.executed += elapsed
                e.ran = True
                if e.queue < last and e.executed * self.gpus[job_id] >= self.limits[e.queue] - 1e-9:
                    self._move(job_id, e, e.queue + 1)  # lines 1046-1056
            elif e.executed > 0:
                e.waited += elapsed
                if self.knob > 0 and e.queue > 0 and e.ran and e.waited >= math.floor(e.executed * self.knob):
                    e.executed = e.waited = 0  # PromoteKnob, lines 1067-1072
                    self._move(job_id, e, 0)
        # The walk goes through Q0, Q1, ... front to back (lines 1103-1118).
        self.place = {job_id: i for i, job_id in enumerate(itertools.chain.from_iterable(self.queues))}

    def decided(self, view: View, allocations: tuple[Allocation, ...]) -> int | None:
        """After the walk: the jobs left waiting go behind the running ones of their queue, keeping
        their order (lines 1132-1143); the next decision is the simulator's next "job jump"."""
        running = {a.job_id for a in allocations}
        for q in self.queues:
            q[:] = [j for j in q if j in running] + [j for j in q if j not in running]
        return self._next_jump(view.t, running)

    def _move(self, job_id: str, e: _Entry, queue: int) -> None:
        self.queues[e.queue].remove(job_id)
        self.queues[queue].append(job_id)
        e.queue = queue

    def _next_jump(self, t: int, running: set[str]) -> int | None:
        """The simulator's next ``next_job_jump`` (lines 1218-1239): demotion checks of running jobs,
        promotions of waiting ones (see the module docstring for the formula and why it is kept)."""
        last = len(self.queues) - 1
        best: int | None = None
        for job_id, e in self.entries.items():
            if job_id in running:
                g = self.gpus[job_id]
                if e.queue < last and g > 0:
                    at = t + math.floor((self.limits[e.queue] - e.executed) / g + 1e-9)
                    best = at if best is None else min(best, at)
            elif self.knob > 0 and e.queue > 0 and e.ran and e.executed > 0:
                diff = math.floor(e.executed * self.knob - e.waited + 1e-9)
                if diff > 0:
                    best = t + diff if best is None else min(best, t + diff)
        return None if best is None else max(best, t + 1)


class Tiresias:
    """Discretised 2D-LAS with the authors' queue discipline (see the module docstring): the list
    scheduler ``walk`` ordered by ``DlasQueues``, or the change-based path ``ChangePath`` that keeps
    the same state incrementally (the default when the engine drives the scheduler directly; a
    repacking placement and a view filtered by a wrapper take the walk)."""

    def __init__(self, walk: ListScheduler, order: DlasQueues, incremental: bool = True) -> None:
        self.walk = walk
        self.order = order
        self.instance = walk.instance
        self.configs: FixedConfigs | Mapping[str, Config] = walk.configs
        self.placement = walk.placement
        self.memo: Callable[[Ledger], FitMemo] = walk.memo  # a FitMemo of the walk's placement on a ledger
        self.limits = order.limits
        self.knob = order.knob
        self.queues = order.queues
        self.jobs = {j.job_id: j for j in walk.instance.jobs}
        self.incremental = incremental
        self._fast: ChangePath | None = None
        self._path: str | None = None  # "fast" or "full", chosen at the first decision

    def _gpus(self, job_id: str) -> float:
        g = self.order.gpus.get(job_id)
        if g is None:
            job, cfg = self.jobs[job_id], self.configs[job_id]
            g = self.order.gpus[job_id] = config_gpus(self.instance.cluster, job, cfg)
        return g

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

    def decide_full(self, view: View) -> Decision:
        """The readable transcription: the list scheduler's full walk in DlasQueues' order."""
        return self.walk.decide_full(view)

    def report(self) -> Mapping[str, Any]:
        return {}
