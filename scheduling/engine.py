"""The simulation engine: one clock; algorithms propose, the engine commits.

Time is slotted, but the engine only wakes at *events*: a job arrival, a job completion (computed
from its current rate) or a slot an algorithm asked to be woken at. Between two events every
allocation stays as committed, so work progresses linearly and is recorded as one segment.

At each event the engine shows the algorithm a read-only ``View`` and receives a ``Decision``: the
complete set of allocations for the slots from now until the next event, plus admissions,
rejections and an optional wake-up slot. The engine checks the decision (capacity per server and
resource, pools, worker limits; a violation is a bug in the algorithm and raises ScheduleError),
then commits it: placement segments, progress segments, starts, completions and preemptions.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from scheduling.capacity import Ledger
from scheduling.errors import ScheduleError
from scheduling.model import Cluster, Instance, Job
from scheduling.speed import Allocation, demand_of, rate

EPS = 1e-9


@dataclass(frozen=True)
class JobView:
    """What an algorithm may know of an arrived, unfinished, non-rejected job at slot ``t``."""

    job: Job
    work_done: float  # work units done so far
    attained_gpu_slots: float  # GPUs held x slots so far (Tiresias' attained service)
    admitted: bool
    start: int | None  # first slot the job held resources
    running: bool  # holds resources under the previous decision

    @property
    def remaining(self) -> float:
        return max(0.0, self.job.work_required - self.work_done)


@dataclass(frozen=True)
class View:
    t: int  # the current slot
    cluster: Cluster
    jobs: tuple[JobView, ...]  # arrived, unfinished, not rejected; by (arrival, job_id)
    allocations: tuple[Allocation, ...]  # what is committed now (the previous decision)
    horizon: int | None  # last slot + 1, or None when the run ends once every job is done
    arrived: tuple[Job, ...]  # the jobs that arrive exactly at ``t``

    def ledger(self) -> Ledger:
        """An empty capacity ledger of the cluster to build the next decision on."""
        return Ledger(self.cluster)


@dataclass(frozen=True)
class Decision:
    allocations: tuple[Allocation, ...] = ()  # the complete allocation from now on
    admit: tuple[str, ...] = ()  # jobs admitted now (they may still wait for resources)
    reject: tuple[str, ...] = ()  # jobs rejected now: they never run
    wake_at: int | None = None  # ask to decide again at this slot even if nothing happens
    preempted: tuple[str, ...] = ()  # partial (worker-level) preemptions done by this decision


class Algorithm(Protocol):
    def decide(self, view: View) -> Decision: ...

    def report(self) -> Mapping[str, Any]:
        """Extra result fields (e.g. ``prices``) once the run is over."""
        ...


@dataclass
class _JobState:
    job: Job
    work_done: float = 0.0
    attained: float = 0.0
    admitted: bool = False
    rejected: bool = False
    start: int | None = None
    completion: int | None = None
    preemptions: int = 0
    rate: float = 0.0
    gpus: float = 0.0
    allocs: tuple[Allocation, ...] = ()
    progress_start: int | None = None
    view: JobView | None = None  # cached until the state changes

    def as_view(self) -> JobView:
        if self.view is None:
            self.view = JobView(self.job, self.work_done, self.attained, self.admitted, self.start, bool(self.allocs))
        return self.view


@dataclass(frozen=True)
class PlacementSegment:
    job_id: str
    server: str
    role: str
    type: str
    count: int
    start: int
    end: int


@dataclass(frozen=True)
class ProgressSegment:
    job_id: str
    start: int
    end: int
    rate: float


@dataclass(frozen=True)
class JobRecord:
    job_id: str
    arrival: int
    admitted: bool
    start: int | None
    completion: int | None
    weight: float
    utility: float  # utility earned: the job's sigmoid at its JCT if completed, else 0
    work_required: float
    work_done: float
    preemptions: int


@dataclass(frozen=True)
class Run:
    """The raw outcome of one simulation, before metrics and serialisation."""

    horizon: int  # the slot the run ended at
    jobs: tuple[JobRecord, ...]
    placements: tuple[PlacementSegment, ...]
    progress: tuple[ProgressSegment, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)


def simulate(instance: Instance, algorithm: Algorithm, horizon: int | None = None) -> Run:
    """Run ``algorithm`` on ``instance`` until every job is done or rejected, or ``horizon``."""
    cluster = instance.cluster
    horizon = horizon if horizon is not None else cluster.horizon
    jobs = sorted(instance.jobs, key=lambda j: (j.arrival, j.job_id))
    states = {j.job_id: _JobState(j) for j in jobs}
    active: dict[str, _JobState] = {}  # arrived, not completed, not rejected; in arrival order
    running: dict[str, _JobState] = {}  # the active jobs that hold resources
    log = _Log()
    committed: tuple[Allocation, ...] = ()
    next_arrival = 0
    t = jobs[0].arrival if jobs else 0

    while horizon is None or t < horizon:
        arrived = []
        while next_arrival < len(jobs) and jobs[next_arrival].arrival <= t:
            arrived.append(jobs[next_arrival])
            active[jobs[next_arrival].job_id] = states[jobs[next_arrival].job_id]
            next_arrival += 1
        if not active and next_arrival >= len(jobs):
            break
        view = View(t, cluster, tuple(s.as_view() for s in active.values()), committed, horizon, tuple(arrived))
        decision = algorithm.decide(view) if active else Decision()
        _check(cluster, active, decision, t)
        committed = _commit(decision, active, running, cluster, t, log)
        for job_id in decision.reject:
            del active[job_id]
        nxt = _next_event(running, jobs, next_arrival, decision, t, horizon)
        if nxt is None:
            break  # nothing runs, nothing arrives, nobody asked to wake: the rest never runs
        done = _advance(running, t, nxt)
        t = nxt
        for st in done:
            log.close_progress(st, t)
            st.allocs, st.rate = (), 0.0
            del active[st.job.job_id], running[st.job.job_id]
        if done:
            committed = tuple(a for a in committed if states[a.job_id].completion is None)

    for st in running.values():
        log.close_progress(st, t)
    log.close_all(t)
    records = tuple(_record(st) for st in states.values())
    return Run(t, records, log.sorted_placements(), log.sorted_progress(), dict(algorithm.report()))


class _Log:
    """Placement and progress segments as the run commits them."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, str, str, str], tuple[int, int]] = {}  # key -> (count, start)
        self.placements: list[PlacementSegment] = []
        self.progress: list[ProgressSegment] = []

    def close(self, key: tuple[str, str, str, str], t: int) -> None:
        count, start = self.open.pop(key)
        if t > start:
            self.placements.append(PlacementSegment(*key, count=count, start=start, end=t))

    def close_all(self, t: int) -> None:
        for key in list(self.open):
            self.close(key, t)

    def close_progress(self, st: _JobState, t: int) -> None:
        if st.progress_start is not None and t > st.progress_start:
            self.progress.append(ProgressSegment(st.job.job_id, st.progress_start, t, st.rate))
        st.progress_start = None

    def sorted_placements(self) -> tuple[PlacementSegment, ...]:
        return tuple(sorted(self.placements, key=lambda p: (p.start, p.job_id, p.server, p.role, p.type)))

    def sorted_progress(self) -> tuple[ProgressSegment, ...]:
        return tuple(sorted(self.progress, key=lambda p: (p.job_id, p.start)))


def _check(cluster: Cluster, active: Mapping[str, _JobState], d: Decision, t: int) -> None:
    """Reject a decision that overbooks a server or breaks the model (ScheduleError)."""
    ledger = Ledger(cluster)
    workers: dict[str, int] = defaultdict(int)
    for job_id in (*d.admit, *d.reject, *d.preempted):
        if job_id not in active:
            raise ScheduleError(f"slot {t}: decision names job {job_id!r}, which is not waiting or running")
    rejected = set(d.reject)
    for a in d.allocations:
        s = active.get(a.job_id)
        if s is None or s.rejected or a.job_id in rejected:
            raise ScheduleError(f"slot {t}: allocation for job {a.job_id!r}, which may not run now")
        if a.count <= 0:
            raise ScheduleError(f"slot {t}: allocation for job {a.job_id!r} has count {a.count}")
        demand = demand_of(cluster, s.job, a.role, a.type)
        if demand is None:
            raise ScheduleError(f"slot {t}: job {a.job_id!r} uses unknown {a.role} type {a.type!r}")
        if not ledger.take(a.server, a.role, demand, a.count):
            raise ScheduleError(
                f"slot {t}: {a.count} {a.role}(s) of job {a.job_id!r} do not fit on server {a.server!r}"
            )
        if a.role == "worker":
            workers[a.job_id] += a.count
    for job_id, n in workers.items():
        limit = active[job_id].job.max_workers()
        if n > limit:
            raise ScheduleError(f"slot {t}: job {job_id!r} gets {n} workers, more than its limit {limit}")


def _commit(
    d: Decision,
    active: Mapping[str, _JobState],
    running: dict[str, _JobState],
    cluster: Cluster,
    t: int,
    log: _Log,
) -> tuple[Allocation, ...]:
    for job_id in d.admit:
        active[job_id].admitted = True
        active[job_id].view = None
    for job_id in d.reject:
        active[job_id].rejected = True
    for job_id in d.preempted:
        active[job_id].preemptions += 1
    # Merge allocations per (job, server, role, type) so that segments are canonical.
    merged: dict[tuple[str, str, str, str], int] = defaultdict(int)
    for a in d.allocations:
        merged[(a.job_id, a.server, a.role, a.type)] += a.count
    for key in [k for k, (count, _) in log.open.items() if merged.get(k) != count]:
        log.close(key, t)
    for key, count in merged.items():
        if key not in log.open:
            log.open[key] = (count, t)
    allocs = tuple(Allocation(*k, count=c) for k, c in merged.items())
    by_job: dict[str, list[Allocation]] = defaultdict(list)
    for a in allocs:
        by_job[a.job_id].append(a)
    for job_id in [*running, *(j for j in by_job if j not in running)]:
        st = active[job_id]
        new = tuple(by_job.get(job_id, ()))
        if new == st.allocs:
            continue
        if st.allocs and not new:
            st.preemptions += 1  # suspended before completion
        log.close_progress(st, t)
        st.allocs, st.view = new, None
        st.rate = rate(cluster, st.job, new) if new else 0.0
        st.gpus = sum(a.count * (demand_of(cluster, st.job, a.role, a.type) or {}).get("gpu", 0.0) for a in new)
        if new:
            running[job_id] = st
            st.admitted = True
            if st.start is None:
                st.start = t
        else:
            del running[job_id]
        if st.rate > 0:
            st.progress_start = t
    return allocs


def _completion_slot(st: _JobState, t: int) -> int | None:
    if st.rate <= 0:
        return None
    remaining = st.job.work_required - st.work_done
    return t + max(1, math.ceil(remaining / st.rate - EPS))


def _next_event(
    running: Mapping[str, _JobState],
    jobs: list[Job],
    next_arrival: int,
    d: Decision,
    t: int,
    horizon: int | None,
) -> int | None:
    candidates = [c for st in running.values() if (c := _completion_slot(st, t)) is not None]
    if next_arrival < len(jobs):
        candidates.append(jobs[next_arrival].arrival)
    if d.wake_at is not None:
        if d.wake_at <= t:
            raise ScheduleError(f"slot {t}: wake_at {d.wake_at} is not in the future")
        candidates.append(d.wake_at)
    if not candidates:
        return None
    nxt = min(candidates)
    return min(nxt, horizon) if horizon is not None else nxt


def _advance(running: Mapping[str, _JobState], t: int, nxt: int) -> list[_JobState]:
    """Progress every running job from slot ``t`` to ``nxt``; return the ones that complete."""
    span = nxt - t
    done = []
    for st in running.values():
        st.view = None
        st.attained += st.gpus * span
        done_at = _completion_slot(st, t)
        st.work_done += st.rate * span
        if done_at is not None and done_at <= nxt:
            st.completion = done_at
            done.append(st)
    return done


def _record(s: _JobState) -> JobRecord:
    job = s.job
    jct = None if s.completion is None else s.completion - job.arrival
    return JobRecord(
        job_id=job.job_id,
        arrival=job.arrival,
        admitted=s.admitted,
        start=s.start,
        completion=s.completion,
        weight=job.weight,
        utility=0.0 if jct is None else job.utility.value(jct),
        work_required=job.work_required,
        work_done=s.work_done,
        preemptions=s.preemptions,
    )
