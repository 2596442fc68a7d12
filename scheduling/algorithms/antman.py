"""AntMan (Xiao et al., OSDI'20) as Zhou et al.'s baseline (iii) (seeds/002 Sec. 7).

Two classes of jobs: *resource-guarantee* jobs, admitted in arrival order while their GPUs stay
within a guaranteed quota of the cluster, and *opportunistic* jobs, which run best-effort on what
the guaranteed jobs leave and are suspended when a guaranteed job needs their place. A guaranteed
job that has waited ``max_wait`` slots without starting runs as an opportunistic one. Without
GPU memory sharing (the model has none) "opportunistic" means preemptible and backfilled.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Mapping
from heapq import heapify, heappop, heapreplace
from typing import TYPE_CHECKING, Any

from scheduling.algorithms.baselines import WORKER_PARAMS, check_worker_range, fixed_configs
from scheduling.algorithms.common import FitMemo, job_shape, keep
from scheduling.algorithms.configs import FixedConfigs, worker_gpus
from scheduling.engine import Decision, JobView, View
from scheduling.model import Instance, Job
from scheduling.registry import AlgorithmSpec, Param, register
from scheduling.speed import Allocation, demand_of

if TYPE_CHECKING:
    import numpy as np


class AntMan:
    def __init__(self, instance: Instance, configs: FixedConfigs, quota: float, max_wait: int) -> None:
        self.cluster = instance.cluster
        self.configs = configs
        self.quota = quota * self.cluster.total_capacity("gpu")  # guaranteed GPUs
        self.max_wait = max_wait
        self.opportunistic_runs = 0  # decisions that started or kept a job as opportunistic
        self.shapes: dict[str, tuple[object, ...]] = {}
        self.incremental = True  # the change path when the engine drives it directly (see decide)
        self._state: _Changes | None = None
        self._gpus: dict[str, float] = {}

    def gpus(self, jv: JobView) -> float:
        return self.job_gpus(jv.job)

    def job_gpus(self, job: Job) -> float:
        """GPUs of the job's fixed configuration (its workers'), computed once per job."""
        g = self._gpus.get(job.job_id)
        if g is None:
            g = self._gpus[job.job_id] = worker_gpus(self.cluster, job, self.configs[job.job_id])
        return g

    def decide(self, view: View) -> Decision:
        if not self.incremental or not view.direct:
            self._state = None  # a wrapper filtered the jobs: only the full walk sees that
            return self.decide_full(view)
        if self._state is None:
            self._state = _Changes(self, view)
        return self._state.decide(view)

    def decide_full(self, view: View) -> Decision:
        ledger = view.ledger()
        current: dict[str, list[Allocation]] = {}
        for a in view.allocations:
            current.setdefault(a.job_id, []).append(a)
        guaranteed, opportunistic, used = [], [], 0.0
        for jv in view.jobs:  # arrival order
            waited = view.t - jv.job.arrival
            starved = jv.start is None and waited >= self.max_wait
            if not starved and used + self.gpus(jv) <= self.quota + 1e-9:
                guaranteed.append(jv)
                used += self.gpus(jv)
            else:
                opportunistic.append(jv)
        chosen: list[Allocation] = []
        memo = FitMemo(ledger, self.shapes)  # the ledger only fills below: a shape that failed stays failed
        for jv in guaranteed + opportunistic:  # guaranteed first: they displace opportunistic jobs
            job_id = jv.job.job_id
            if jv.running and keep(ledger, jv.job, current[job_id]):
                chosen.extend(current[job_id])
                continue
            placed = memo.place(jv.job, self.configs[job_id])
            if placed is not None:
                chosen.extend(placed)
        self.opportunistic_runs += sum(1 for jv in opportunistic if any(a.job_id == jv.job.job_id for a in chosen))
        wake = [
            jv.job.arrival + self.max_wait
            for jv in guaranteed
            if jv.start is None and jv.job.arrival + self.max_wait > view.t
        ]
        return Decision(allocations=tuple(chosen), wake_at=min(wake, default=None))

    def report(self) -> Mapping[str, Any]:
        return {"antman": {"opportunistic_runs": self.opportunistic_runs}}


class _Changes:
    """AntMan.decide_full's walk, answered in proportion to what it can change.

    The full walk classifies the active jobs (arrival order: not starved and within the quota so
    far -> guaranteed, else opportunistic) and books, on an empty ledger, the guaranteed jobs and
    then the opportunistic ones, each in arrival order: a running job keeps its allocation if it
    fits, else it is placed afresh (FitMemo), possibly elsewhere (a move) or not at all (a
    suspension); a waiting job is placed (FitMemo). Call the first job of that walk order that
    does not run now w. Every job before w runs, and its committed allocation is booked on a
    ledger holding only committed allocations of other running jobs: all of them fit together on
    the engine's ledger, so each of them fits and is kept where it is, and FitMemo has not been
    asked anything yet. So the walk reaches w with the ledger "committed allocations minus those
    of the running jobs from w on" and an empty FitMemo, and only the walk from w on can change
    anything: this class walks just that suffix, the same way, on ``view.committed_ledger()``
    with that suffix's running jobs released. (The engine's ledger sums the same bookings in
    another order, after others were released: equal within the ledger's 1e-9 tolerance, as for
    ListScheduler's change path.) Only a waiting job (an arrival, a suspended or a starved job)
    starts a suffix; while the cluster keeps up it is usually one of the newest arrivals at the
    end of the walk, so a decision costs the classification (one pass of additions, up to where
    not even the smallest active job fits the quota left) plus the jobs after w. When thousands
    wait, most of them cannot fit: FitMemo passes over a waiting job whose shape already failed
    with as few workers (the ledger only fills during the walk). The opportunistic part of the
    walk therefore does not read the waiting jobs one by one: they are kept in queues per (shape,
    workers) in arrival order, merged with the suffix's running jobs, and a queue leaves the
    merge once its shape failed with as few workers. The jobs the walk visits, and the order it
    visits them in, are those of the full walk less the ones it would pass over.
    tests/test_fast_twins.py compares both paths.

    The classification is redone every decision with the same sums in the same order as
    decide_full, so it is the same. What it needs besides each job's arrival and GPUs is kept
    here from this scheduler's own decisions, which the engine commits exactly: which jobs never
    held resources (the engine sets a job's start when it first commits an allocation for it) and
    which jobs wait (not running: arrivals not placed yet, and suspended jobs).
    """

    def __init__(self, owner: AntMan, view: View) -> None:
        self.owner = owner
        # The active jobs in arrival order (the engine's order) with their GPUs, for the
        # classification pass; and each one's job and rank in that order.
        self.gpus: dict[str, float] = {}
        self.jobs: dict[str, Job] = {}
        self.rank: dict[str, int] = {}
        self.added = 0
        self.unstarted: set[str] = set()  # active jobs that never held resources (start is None)
        self.fresh: list[int] = []  # their ranks, in order
        self.started: list[int] = []  # the ranks of the other active jobs, in order
        self.waiting: set[str] = set()  # active jobs that hold nothing
        # (shape, workers) -> the ranks of the waiting jobs with that need, in arrival order
        self.queues: dict[tuple[tuple[object, ...], int], list[int]] = {}
        self.ids: dict[int, str] = {}  # rank -> active job
        self.gpu_counts: dict[float, int] = {}  # GPUs -> active jobs with that many
        self.need: dict[str, tuple[tuple[object, ...], int]] = {}  # active job -> (shape, workers)
        arrived = {j.job_id for j in view.arrived}  # added by decide
        for jv in view.jobs:
            if jv.job.job_id not in arrived:
                self._add(jv.job)
                if jv.start is not None:
                    self._start(jv.job.job_id)
                if jv.running:
                    self._hold(jv.job.job_id)

    def _add(self, job: Job) -> None:
        job_id = job.job_id
        g = self.gpus[job_id] = self.owner.job_gpus(job)
        self.gpu_counts[g] = self.gpu_counts.get(g, 0) + 1
        self.jobs[job_id] = job
        cfg = self.owner.configs[job_id]  # its shape and workers, fixed for its lifetime
        self.need[job_id] = (job_shape(self.owner.cluster, job, cfg, self.owner.shapes), cfg.workers)
        self.rank[job_id] = self.added
        self.ids[self.added] = job_id
        self.fresh.append(self.added)  # (the largest rank yet)
        self.added += 1
        self.unstarted.add(job_id)
        self._wait(job_id)

    def _start(self, job_id: str) -> None:
        """The job holds resources for the first time (or had before this state was made)."""
        if job_id in self.unstarted:
            self.unstarted.remove(job_id)
            r = self.rank[job_id]
            del self.fresh[bisect_left(self.fresh, r)]
            insort(self.started, r)

    def _forget_gpus(self, g: float) -> None:
        """A job of ``g`` GPUs is no longer active."""
        self.gpu_counts[g] -= 1
        if not self.gpu_counts[g]:
            del self.gpu_counts[g]

    def _wait(self, job_id: str) -> None:
        """The job holds nothing now (arrived or suspended)."""
        self.waiting.add(job_id)
        insort(self.queues.setdefault(self.need[job_id], []), self.rank[job_id])

    def _hold(self, job_id: str) -> None:
        """The waiting job holds resources now."""
        self.waiting.remove(job_id)
        key = self.need[job_id]
        ranks = self.queues[key]
        del ranks[bisect_left(ranks, self.rank[job_id])]
        if not ranks:  # (with a shape per job, as OASiS's, the map would grow with the trace)
            del self.queues[key]

    def decide(self, view: View) -> Decision:
        owner = self.owner
        gpus, jobs, unstarted, waiting = self.gpus, self.jobs, self.unstarted, self.waiting
        for job_id in view.completed:  # (absent if this state was made at this event, from view.jobs)
            g = gpus.pop(job_id, None)
            if g is not None:
                r = self.rank.pop(job_id)
                del jobs[job_id], self.ids[r], self.need[job_id]
                self._forget_gpus(g)
                of = self.fresh if job_id in unstarted else self.started
                del of[bisect_left(of, r)]
                unstarted.discard(job_id)
        for job in view.arrived:
            self._add(job)
        max_wait, limit = owner.max_wait, owner.quota + 1e-9
        starving = view.t - max_wait  # a job that never started is starved if it arrived by then
        # The classification of decide_full: the same sums in the same order. A job is starved if
        # it never started and arrived by ``starving``; the others, in arrival order, are the jobs
        # that started merged with the never-started ones that arrived after ``starving`` (the
        # newest of those: ranks follow arrivals). Once not even the smallest job of all fits the
        # quota left, every later job is opportunistic: the pass stops there (float addition is
        # monotone).
        ids, fresh = self.ids, self.fresh
        recent = bisect_right(fresh, starving, key=lambda r: jobs[ids[r]].arrival)
        guaranteed: list[str] = []
        used = 0.0
        smallest = min(self.gpu_counts, default=0.0)
        for r in sorted(self.started + fresh[recent:]):  # (two sorted runs: merged in one pass)
            if used + smallest > limit:
                break
            job_id = ids[r]
            g = gpus[job_id]
            if used + g <= limit:
                guaranteed.append(job_id)
                used += g
        in_g = set(guaranteed)
        # Where the waiting jobs are in either class (both are in arrival order); decide_full's
        # wake-up is the first guaranteed job that never started (every guaranteed job is
        # unstarved, so it waits less than max_wait, and the first has the earliest limit).
        first_g = _first_in(guaranteed, waiting, 0, len(guaranteed))
        first_never = _first_in(guaranteed, unstarted, first_g, len(guaranteed))  # (never-started jobs wait)
        wake = jobs[guaranteed[first_never]].arrival + max_wait if first_never < len(guaranteed) else None
        # The suffix of the walk from its first waiting job (see the class docstring): the
        # guaranteed jobs from the first waiting one, then every opportunistic job; or, if no
        # guaranteed job waits, the opportunistic jobs from the first waiting one, those before it
        # running and keeping their allocations. The opportunistic jobs are the active jobs not
        # guaranteed, in arrival order, read only as far as the walk goes.
        # (first_o: the rank the opportunistic part of the suffix starts from; None: it is empty)
        first_o: int | None
        if first_g < len(guaranteed):
            head, first_o, runs = guaranteed[first_g:], self.rank[next(iter(gpus))], 0
        else:
            head, first_o, runs = [], None, 0  # (no waiting opportunistic job: an empty suffix)
            for job_id in gpus:
                if job_id in in_g:
                    continue
                if job_id in waiting:
                    first_o = self.rank[job_id]
                    break
                runs += 1  # an opportunistic job before the first waiting one: it runs
        changes: dict[str, tuple[Allocation, ...]] = {}
        if head or first_o is not None:
            runs += self._walk(view, head, in_g, first_o, changes)
        owner.opportunistic_runs += runs
        return Decision(changes=changes, wake_at=wake)

    def _walk(
        self,
        view: View,
        head: list[str],
        in_g: set[str],
        first_o: int | None,
        changes: dict[str, tuple[Allocation, ...]],
    ) -> int:
        """The walk over the suffix ``head`` (guaranteed jobs) + the opportunistic jobs from rank
        ``first_o`` on (none if None), filling ``changes``; returns how many of its opportunistic
        jobs run after it."""
        owner, jobs, rank, need = self.owner, self.jobs, self.rank, self.need
        running = view.running()

        def where(job_id: str) -> tuple[int, int] | None:  # a running job's place in the suffix
            if job_id in in_g:
                return (0, rank[job_id]) if job_id in head_set else None
            return (1, rank[job_id]) if first_o is not None and rank[job_id] >= first_o else None

        head_set = set(head)
        placed_in: list[tuple[tuple[int, int], str]] = []  # the suffix's running jobs, in its order
        for job_id in running:
            at = where(job_id)
            if at is not None:
                placed_in.append((at, job_id))
        placed_in.sort()
        ledger = view.committed_ledger()
        cluster = owner.cluster
        for _, job_id in placed_in:
            job = jobs[job_id]
            for a in running[job_id]:
                ledger.release(a.server, demand_of(cluster, job, a.role, a.type) or {}, a.count)
        memo = FitMemo(ledger, owner.shapes)
        configs = owner.configs
        runs = 0

        def visit(job_id: str, allocs: tuple[Allocation, ...] | None, part: int) -> None:
            """decide_full's step for one job: keep it, place it (a start or a move) or suspend it."""
            nonlocal runs
            job = jobs[job_id]
            if allocs is not None and keep(ledger, job, allocs):
                runs += part
                return
            placed = memo.place(job, configs[job_id])
            if placed is not None:
                changes[job_id] = placed
                self._start(job_id)
                if allocs is None:
                    self._hold(job_id)
                runs += part
            elif allocs is not None:
                changes[job_id] = ()  # suspended
                self._wait(job_id)

        # The guaranteed part, job by job (it is small: its GPUs are within the quota). A waiting
        # job is passed over if its shape failed with as few workers (memo.place's own test).
        for job_id in head:
            allocs = running.get(job_id)
            if allocs is None and memo.skips(*need[job_id]):
                continue
            visit(job_id, allocs, 0)
        if first_o is None:
            return runs
        # The opportunistic part: its running jobs (placed_in's second part) and its waiting jobs
        # merged in arrival order. The waiting jobs come from the queues of waiting jobs per
        # (shape, workers) in arrival order, one heap entry per queue, and a queue is dropped
        # once its shape failed with as few workers: the ledger only fills, so every job left in
        # it would be passed over (memo.place's test), and the walk does not read them at all.
        later = [job_id for (part, _), job_id in placed_in if part]
        queues, ids = self.queues, self.ids
        heap: list[tuple[int, tuple[tuple[object, ...], int]]] = []
        for key, ranks in queues.items():
            i = bisect_left(ranks, first_o)
            if i < len(ranks):
                heap.append((ranks[i], key))
        heapify(heap)
        k = 0
        while True:
            while heap and memo.skips(*heap[0][1]):  # to the next waiting job that could still fit
                heappop(heap)
            if k < len(later) and (not heap or rank[later[k]] < heap[0][0]):
                job_id = later[k]
                k += 1
                visit(job_id, running[job_id], 1)
                continue
            if not heap:
                return runs
            r, key = heap[0]
            ranks = queues[key]
            nxt = bisect_right(ranks, r)  # (before the visit, which may take r out of its queue)
            if nxt < len(ranks):
                heapreplace(heap, (ranks[nxt], key))
            else:
                heappop(heap)
            job_id = ids[r]
            if job_id not in in_g:  # (a guaranteed job waits in the queues too: walked in head)
                visit(job_id, None, 1)


def _first_in(order: list[str], members: set[str], start: int, default: int) -> int:
    """The first index from ``start`` of ``order`` whose job is in ``members``, else ``default``."""
    for i in range(start, len(order)):
        if order[i] in members:
            return i
    return default


def make_antman(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> AntMan:
    return AntMan(instance, fixed_configs(instance, params, rng), params["quota"], params["max_wait"])


register(
    AlgorithmSpec(
        name="antman",
        summary="AntMan: resource-guarantee jobs within a GPU quota first, opportunistic jobs on the rest.",
        semantics=(
            "At every arrival, completion and waiting-limit event, jobs are walked in arrival order; a job is "
            "resource-guarantee while the GPUs of the guarantee jobs before it plus its own stay within "
            "`quota` x the cluster's GPUs, and has not waited `max_wait` slots without starting; every other "
            "job is opportunistic. Guarantee jobs are booked first (keeping their servers), then opportunistic "
            "ones on what is left; an opportunistic job that no longer fits is suspended (a preemption) and "
            "resumes later, possibly elsewhere. Configurations are fixed per job as in fifo (ideal-case types, "
            "a worker count drawn in [workers_min, workers_max]). No GPU sharing (the model has none)."
        ),
        reference="Xiao et al., AntMan, OSDI'20; Zhou et al. (TCC'23) Sec. 7 baseline (iii)",
        factory=make_antman,
        check=check_worker_range,
        params=(
            *WORKER_PARAMS,
            Param(
                "quota",
                float,
                0.5,
                "Share of the cluster's GPUs guaranteed to resource-guarantee jobs.",
                min=0.0,
                max=1.0,
            ),
            Param("max_wait", int, 24, "Slots a guarantee job may wait before it runs as opportunistic.", min=1),
        ),
    )
)
