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
    active: dict[str, _JobState] = {}
    open_segments: dict[tuple[str, str, str, str], tuple[int, int]] = {}
    placements: list[PlacementSegment] = []
    progress: list[ProgressSegment] = []
    committed: tuple[Allocation, ...] = ()
    next_arrival = 0
    t = jobs[0].arrival if jobs else 0

    while True:
        if horizon is not None and t >= horizon:
            break
        arrived = []
        while next_arrival < len(jobs) and jobs[next_arrival].arrival <= t:
            arrived.append(jobs[next_arrival])
            active[jobs[next_arrival].job_id] = states[jobs[next_arrival].job_id]
            next_arrival += 1
        if not active and next_arrival >= len(jobs):
            break
        view = View(
            t=t,
            cluster=cluster,
            jobs=tuple(_view(s) for s in active.values()),
            allocations=committed,
            horizon=horizon,
            arrived=tuple(arrived),
        )
        decision = algorithm.decide(view) if active else Decision()
        _check(cluster, active, decision, t)
        committed = _commit(decision, active, states, cluster, t, open_segments, placements, progress)
        nxt = _next_event(active, jobs, next_arrival, decision, t, horizon)
        if nxt is None:
            break  # nothing runs, nothing arrives, nobody asked to wake: the rest never runs
        _advance(active, t, nxt)
        t = nxt
        done = [s for s in active.values() if s.completion is not None]
        for s in done:
            _close_progress(s, t, progress)
            s.allocs, s.rate = (), 0.0
            del active[s.job.job_id]
        if done:
            committed = tuple(a for a in committed if states[a.job_id].completion is None)

    end = t
    for s in active.values():
        _close_progress(s, end, progress)
    for key, (count, start) in open_segments.items():
        if end > start:
            placements.append(PlacementSegment(*key, count=count, start=start, end=end))
    records = tuple(_record(s) for s in states.values())
    placements.sort(key=lambda p: (p.start, p.job_id, p.server, p.role, p.type))
    progress.sort(key=lambda p: (p.job_id, p.start))
    return Run(end, records, tuple(placements), tuple(progress), dict(algorithm.report()))


def _view(s: _JobState) -> JobView:
    return JobView(s.job, s.work_done, s.attained, s.admitted, s.start, bool(s.allocs))


def _check(cluster: Cluster, active: Mapping[str, _JobState], d: Decision, t: int) -> None:
    """Reject a decision that overbooks a server or breaks the model (ScheduleError)."""
    ledger = Ledger(cluster)
    workers: dict[str, int] = defaultdict(int)
    for job_id in (*d.admit, *d.reject):
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
    states: Mapping[str, _JobState],
    cluster: Cluster,
    t: int,
    open_segments: dict[tuple[str, str, str, str], tuple[int, int]],
    placements: list[PlacementSegment],
    progress: list[ProgressSegment],
) -> tuple[Allocation, ...]:
    for job_id in d.admit:
        active[job_id].admitted = True
    for job_id in d.reject:
        active[job_id].rejected = True
    for job_id in d.preempted:
        if job_id in states:
            states[job_id].preemptions += 1
    # Merge allocations per (job, server, role, type) so that segments are canonical.
    merged: dict[tuple[str, str, str, str], int] = defaultdict(int)
    for a in d.allocations:
        merged[(a.job_id, a.server, a.role, a.type)] += a.count
    for key in [k for k in open_segments if merged.get(k) != open_segments[k][0]]:
        count, start = open_segments.pop(key)
        if t > start:
            placements.append(PlacementSegment(*key, count=count, start=start, end=t))
    for key, count in merged.items():
        if key not in open_segments:
            open_segments[key] = (count, t)
    allocs = tuple(Allocation(*k, count=c) for k, c in merged.items())
    by_job: dict[str, list[Allocation]] = defaultdict(list)
    for a in allocs:
        by_job[a.job_id].append(a)
    for job_id, s in active.items():
        new = tuple(by_job.get(job_id, ()))
        if new == s.allocs:
            continue
        if s.allocs and not new:
            s.preemptions += 1  # suspended before completion
        _close_progress(s, t, progress)
        s.allocs = new
        s.rate = rate(cluster, s.job, new) if new else 0.0
        s.gpus = sum(a.count * (demand_of(cluster, s.job, a.role, a.type) or {}).get("gpu", 0.0) for a in new)
        if new:
            s.admitted = True
            if s.start is None:
                s.start = t
        if s.rate > 0:
            s.progress_start = t
    return allocs


def _close_progress(s: _JobState, t: int, progress: list[ProgressSegment]) -> None:
    if s.progress_start is not None and t > s.progress_start:
        progress.append(ProgressSegment(s.job.job_id, s.progress_start, t, s.rate))
    s.progress_start = None


def _completion_slot(s: _JobState, t: int) -> int | None:
    if s.rate <= 0:
        return None
    remaining = s.job.work_required - s.work_done
    return t + max(1, math.ceil(remaining / s.rate - EPS))


def _next_event(
    active: Mapping[str, _JobState],
    jobs: list[Job],
    next_arrival: int,
    d: Decision,
    t: int,
    horizon: int | None,
) -> int | None:
    candidates = [c for s in active.values() if (c := _completion_slot(s, t)) is not None]
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


def _advance(active: Mapping[str, _JobState], t: int, nxt: int) -> None:
    """Progress every running job from slot ``t`` to ``nxt``; mark the ones that complete."""
    span = nxt - t
    for s in active.values():
        if not s.allocs:
            continue
        s.attained += s.gpus * span
        done_at = _completion_slot(s, t)
        s.work_done += s.rate * span
        if done_at is not None and done_at <= nxt:
            s.completion = done_at


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
