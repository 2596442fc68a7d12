"""The simulation engine: one clock; algorithms propose, the engine commits.

Time is slotted, but the engine only wakes at *events*: a job arrival, a job completion (from a
heap of completion slots) or a slot an algorithm asked to be woken at. Between two events every
allocation stays as committed, so work progresses linearly and is recorded as one segment.

At each event the engine shows the algorithm a read-only ``View`` and receives a ``Decision``,
in one of two forms:

* *changes* (``Decision.changes``): for each job whose allocation changes, its complete new
  allocation (empty: stop it). Start, stop, resize and move are all such a change. Jobs not named
  keep what they hold. The engine checks only the changed jobs against its capacity ledger, so a
  decision costs in proportion to what changes, not to what runs.
* the complete allocation from now on (``Decision.allocations``, the original interface): the
  engine diffs it against what is committed and then proceeds as for changes.

Either way a violation (overbooked server, unknown type, too many workers, a job that may not run)
is a bug in the algorithm and raises ScheduleError. The engine keeps the committed allocation and
the capacity ledger incrementally, completion slots in a heap, and builds job views lazily.

Restart cost (DESIGN section 9): a restart time of x = restart_seconds / slot_seconds slots
(``restart_slots`` k = ceil(x)); a job that starts on an allocation different from the one it held
just before (resume after a suspension, a move, a change of worker or PS count or type) holds the
new allocation for a restart period of k slots and loses exactly x slots of progress in it: none in
its first k - 1 slots, and in its last slot it progresses at its rate times k - x (``restart_share``;
0 when x is whole, so that slot is lost too). A 30-s restart on one-hour slots thus costs 30 s of
progress, not an hour. A job's first start is free. The periods are reported as ``Run.restarts``.
A job with its own restart cost (a trace column or the cluster's ``restart_costs`` table,
``scheduling.restart_costs``) pays that instead of the constant, in whole slots (ceil); while an
instance declares per-job costs or server failures, no job's last restart slot is shared
(``restart_share`` is 0: a failure's checkpoint loss counts whole slots of progress).

Upload delays (DESIGN section 9, the edge-cloud model): a job's data reaches server s at
r_j + Delta_js (``Job.upload_delay_to``). A job holding workers on a server its data has not reached
yet holds them without progress until it has reached every server its workers use; every algorithm
pays this alike (an algorithm that waits for the data, as A_online does per chunk, pays nothing).
The validator checks it (``validator.upload_problems``).

Modules: scheduling.views (``View``, ``JobView``, ``Decision``, ``Algorithm``: what an algorithm sees
and answers), scheduling.jobstate (the engine's bookkeeping of one job), scheduling.runlog (segments,
job records and ``Run``: what a run records, its segments kept in columns); their public names are
importable from here too.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping

from scheduling import failures, records, restart_costs
from scheduling.capacity import Ledger
from scheduling.errors import ScheduleError
from scheduling.jobstate import Booked, JobState, job_record
from scheduling.model import Cluster, Instance, Job, Server
from scheduling.runlog import (
    JobRecord,
    Kill,
    PlacementSegment,
    ProgressSegment,
    RestartPeriod,
    Run,
    SegmentLog,
)
from scheduling.speed import Allocation, demand_of, rate
from scheduling.views import Algorithm, Decision, JobView, Lazy, View

__all__ = [  # the engine's public names (the views' and the run records' live in their modules)
    "EPS",
    "Algorithm",
    "Decision",
    "JobRecord",
    "JobView",
    "Kill",
    "Lazy",
    "PlacementSegment",
    "ProgressSegment",
    "RestartPeriod",
    "Run",
    "View",
    "data_ready",
    "held_key",
    "restart_share",
    "restart_slots",
    "simulate",
]

EPS = 1e-9


def held_key(allocs: Iterable[Allocation]) -> frozenset[tuple[str, str, str, int]]:
    """What an allocation holds, as the engine compares a job's allocations to charge a restart:
    a start on anything but the allocation held just before pays the restart time."""
    return frozenset((a.server, a.role, a.type, a.count) for a in allocs)


def restart_slots(cluster: Cluster, restart_seconds: float | None = None) -> int:
    """ceil(restart_seconds / slot_seconds); the run's value overrides the cluster's."""
    seconds = cluster.restart_seconds if restart_seconds is None else restart_seconds
    if seconds < 0 or not math.isfinite(seconds):
        raise ScheduleError(f"restart_seconds {seconds!r} must be a finite number >= 0")
    return restart_costs.to_slots(seconds, cluster.slot_seconds)


def restart_share(restart_seconds: float, cluster: Cluster, per_job_costs: bool) -> float:
    """Share of a restart period's last slot in which the job progresses: k - x for a restart of
    x = restart_seconds / slot_seconds slots and k = ceil(x); 0 when x is whole (within EPS), and 0
    when the instance declares per-job restart costs or server failures (whole slots then: the module
    docstring). The engine, the metrics and the validator all take it from here."""
    if restart_seconds <= 0 or per_job_costs or cluster.failures:
        return 0.0
    x = restart_seconds / cluster.slot_seconds
    share = math.ceil(x - EPS) - x
    return share if share > EPS else 0.0


def simulate(
    instance: Instance,
    algorithm: Algorithm,
    horizon: int | None = None,
    restart_seconds: float | None = None,
) -> Run:
    """Run ``algorithm`` on ``instance`` until every job is done or rejected, or ``horizon``.

    ``restart_seconds`` overrides the cluster's ``restart_seconds`` (see the module docstring)."""
    seconds = instance.cluster.restart_seconds if restart_seconds is None else restart_seconds
    own = restart_costs.job_slots(instance)  # None unless the instance declares per-job costs
    engine = _Engine(instance, horizon, restart_slots(instance.cluster, seconds), own)
    engine.share = restart_share(seconds, instance.cluster, own is not None)
    run = engine.run(algorithm)
    # An algorithm that keeps its last view keeps the engine, often in a reference cycle (a
    # scheduler and its queues) that only a full collection frees, which the CLI's thresholds
    # (scheduling.collector) make rare: the engine lets go of its per-job state now.
    engine.states, engine.active, engine.running_allocs, engine.heap = {}, {}, {}, []
    engine.log = SegmentLog()
    return records.replace(run, restart_seconds=float(seconds), job_restart_slots=own)


class _Engine:
    def __init__(
        self, instance: Instance, horizon: int | None, restart: int, job_restart: Mapping[str, int] | None = None
    ) -> None:
        self.cluster = instance.cluster
        self.horizon = horizon if horizon is not None else self.cluster.horizon
        self.restart = restart
        self.job_restart = job_restart  # jobs with their own restart cost -> slots (None: none has one)
        fails = self.cluster.failures
        self.failures = failures.Timeline(fails) if fails else None  # the cluster's failure trace
        self.kills: list[Kill] = []
        self.share = 0.0  # restart_share: progress in the last slot of a restart period, x its rate
        self.jobs = sorted(instance.jobs, key=lambda j: (j.arrival, j.job_id))
        self.states = {j.job_id: JobState(j, i) for i, j in enumerate(self.jobs)}  # i: arrival rank
        self.active: dict[str, JobState] = {}  # arrived, not completed, not rejected; in arrival order
        self.running_allocs: dict[str, tuple[Allocation, ...]] = {}  # jobs holding resources
        self.ledger = Ledger(self.cluster)  # every committed allocation, booked
        self.heap: list[tuple[int, int, str, int]] = []  # (completion slot, arrival rank, job id, version)
        self.log = SegmentLog()
        self.restarts: list[RestartPeriod] = []
        # Upload delays matter only where a server or a job states one (the edge-cloud model).
        self.delays = any(s.upload_delay for s in self.cluster.servers) or any(j.upload_delay for j in self.jobs)
        self.servers = {s.id: s for s in self.cluster.servers}
        self.order: tuple[Allocation, ...] | None = ()  # the last full decision's allocations, in its order
        self.t = 0

    # -- the main loop -------------------------------------------------------------------------
    def run(self, algorithm: Algorithm) -> Run:
        jobs, horizon = self.jobs, self.horizon
        next_arrival = 0
        t = jobs[0].arrival if jobs else 0
        completed: list[str] = []

        # What every event's view is built from, made once (an event's Lazy builds on first use).
        def active_views() -> tuple[JobView, ...]:
            return tuple(self.job_view(st) for st in self.active.values())

        active_count, committed = self.active.__len__, self.committed_tuple
        while horizon is None or t < horizon:
            self.t = t
            arrived = []
            while next_arrival < len(jobs) and jobs[next_arrival].arrival <= t:
                job = jobs[next_arrival]
                arrived.append(job)
                self.active[job.job_id] = self.states[job.job_id]
                next_arrival += 1
            if self.failures is not None:
                self._failures_at(t)
            if not self.active and next_arrival >= len(jobs):
                break
            if self.active:
                # (With failures every algorithm takes its full path: a plain tuple of views.)
                views = Lazy(active_views, active_count) if self.failures is None else active_views()
                view = View(t, self.cluster, views, Lazy(committed), horizon, tuple(arrived), tuple(completed), self)
                decision = algorithm.decide(view)
                completed = []  # told; kept until an algorithm is asked again otherwise
            else:
                decision = Decision()
            self._apply(decision, t)
            nxt = self._next_event(next_arrival, decision, t)
            if nxt is None:
                break  # nothing runs, nothing arrives, nobody asked to wake: the rest never runs
            t = nxt
            for st in self._pop_completions(t):
                completed.append(st.job.job_id)
        self.t = t
        for st in self.running():
            self._sync(st, t)
            self._close_periods(st, t)
        self.log.close_all(t)
        placements, progress = self.log.sorted_placements(), self.log.sorted_progress()  # (before the records:
        records = tuple(job_record(st) for st in self.states.values())  # the sort's keys are gone by then)
        restarts = tuple(sorted(self.restarts, key=lambda r: (r.job_id, r.start)))
        return Run(
            t,
            records,
            placements,
            progress,
            dict(algorithm.report()),
            restarts,
            self.restart,
            kills=tuple(self.kills),
        )

    def running(self) -> list[JobState]:
        return [self.states[j] for j in self.running_allocs]

    def _next_event(self, next_arrival: int, d: Decision, t: int) -> int | None:
        """The earliest of the next completion, the next arrival and ``wake_at`` (capped at the
        horizon), or None if there is none."""
        nxt = self._top_completion()
        if next_arrival < len(self.jobs):
            arrival = self.jobs[next_arrival].arrival
            nxt = arrival if nxt is None else min(nxt, arrival)
        if d.wake_at is not None:
            if d.wake_at <= t:
                raise ScheduleError(f"slot {t}: wake_at {d.wake_at} is not in the future")
            nxt = d.wake_at if nxt is None else min(nxt, d.wake_at)
        if self.failures is not None and (f := self.failures.next_after(t)) is not None:
            nxt = f if nxt is None else min(nxt, f)
        if nxt is None:
            return None
        return min(nxt, self.horizon) if self.horizon is not None else nxt

    def _top_completion(self) -> int | None:
        heap = self.heap
        while heap:
            slot, _rank, job_id, version = heap[0]
            st = self.states[job_id]
            if st.version == version and st.completion is None and job_id in self.running_allocs:
                return slot
            heapq.heappop(heap)
        return None

    def _pop_completions(self, t: int) -> list[JobState]:
        """Complete every job whose completion slot is ``t`` (in arrival order)."""
        done = []
        while (top := self._top_completion()) is not None and top <= t:
            _slot, _rank, job_id, _v = heapq.heappop(self.heap)
            done.append(self.states[job_id])
        for st in done:
            self._sync(st, t)
            st.completion = t
            self._close_periods(st, t)
            self._set_allocs(st, (), t, ())
            st.rate = 0.0
            del self.active[st.job.job_id]
        if done and self.order is not None:
            finished = {st.job.job_id for st in done}
            self.order = tuple(a for a in self.order if a.job_id not in finished)
        return done

    # -- views ---------------------------------------------------------------------------------
    def job_view(self, st: JobState) -> JobView:
        if st.view is None or (st.view_t != self.t and st.job.job_id in self.running_allocs):
            self._sync(st, self.t)
            running = st.job.job_id in self.running_allocs
            st.view = JobView(st.job, st.work_done, st.attained, st.admitted, st.start, running)
            st.view_t = self.t
        return st.view

    def committed_tuple(self) -> tuple[Allocation, ...]:
        if self.order is None:
            self.order = tuple(a for allocs in self.running_allocs.values() for a in allocs)
        return self.order

    def _sync(self, st: JobState, t: int) -> None:
        """Bring the job's work and attained service up to slot ``t``. Both are sums over closed
        segments plus the open one, so they do not depend on how often a job is looked at."""
        start = st.progress_start
        if start is None or t <= start:
            st.work_done = st.work_closed
        elif st.first_rate is None:
            st.work_done = st.work_closed + st.rate * (t - start)
        else:
            st.work_done = st.work_closed + st.first_rate + st.rate * (t - start - 1)
        st.attained = st.attained_closed + (st.gpus * (t - st.held_since) if st.gpus and t > st.held_since else 0.0)

    # -- checking and committing a decision ----------------------------------------------------
    def _apply(self, d: Decision, t: int) -> None:
        if d.changes is not None and not (d.changes or d.admit or d.reject or d.preempted):
            return  # a change-based decision that changes nothing (most events of a blocked queue)
        active = self.active
        if d.admit or d.reject or d.preempted:
            for job_id in (*d.admit, *d.reject, *d.preempted):
                if job_id not in active:
                    raise ScheduleError(f"slot {t}: decision names job {job_id!r}, which is not waiting or running")
        rejected = set(d.reject)
        if d.changes is None:
            changes = self._diff(d.allocations, t, rejected)
        else:
            changes = {}
            for job_id, allocs in d.changes.items():
                self._check_allocs(job_id, allocs, t, rejected)
                merged = _merge(allocs)
                if merged != active[job_id].allocs:
                    changes[job_id] = merged
        booked = self._check_capacity(changes, t)
        for job_id in d.admit:
            active[job_id].admitted = True
            active[job_id].view = None
        for job_id in d.reject:
            active[job_id].rejected = True
        for job_id in d.preempted:
            active[job_id].preemptions += 1
        if d.changes is not None and changes:
            self.order = None
        for job_id, new in changes.items():
            self._change(active[job_id], new, t, booked[job_id])
        for job_id in d.reject:
            del active[job_id]

    def _check_allocs(self, job_id: str, allocs: Iterable[Allocation], t: int, rejected: set[str]) -> None:
        s = self.active.get(job_id)
        if s is None or s.rejected or job_id in rejected:
            raise ScheduleError(f"slot {t}: allocation for job {job_id!r}, which may not run now")
        workers = 0
        for a in allocs:
            if a.job_id != job_id:
                raise ScheduleError(f"slot {t}: change for job {job_id!r} holds an allocation of job {a.job_id!r}")
            if a.count <= 0:
                raise ScheduleError(f"slot {t}: allocation for job {job_id!r} has count {a.count}")
            if demand_of(self.cluster, s.job, a.role, a.type) is None:
                raise ScheduleError(f"slot {t}: job {job_id!r} uses unknown {a.role} type {a.type!r}")
            if a.role == "worker":
                workers += a.count
        limit = s.job.max_workers()
        if workers > limit:
            raise ScheduleError(f"slot {t}: job {job_id!r} gets {workers} workers, more than its limit {limit}")

    def _diff(
        self, allocations: tuple[Allocation, ...], t: int, rejected: set[str]
    ) -> dict[str, tuple[Allocation, ...]]:
        """The jobs whose allocation a complete decision changes, with their new allocation."""
        by_job: dict[str, list[Allocation]] = defaultdict(list)
        for a in allocations:
            by_job[a.job_id].append(a)
        merged_all = _merge(allocations)
        canonical = len(merged_all) == len(allocations)  # then _merge changed nothing
        active = self.active
        same: set[str] = set()  # jobs given exactly their committed allocations
        for job_id, allocs in by_job.items():
            st = active.get(job_id)
            # A job given exactly its committed allocations (checked when committed; duplicates of
            # them would not be equal) needs no new check, unless this decision rejects it.
            if st is not None and tuple(allocs) == st.allocs:
                same.add(job_id)
                if job_id not in rejected:
                    continue
            self._check_allocs(job_id, allocs, t, rejected)
        new_by_job = by_job if canonical else defaultdict(list)
        if not canonical:
            for a in merged_all:
                new_by_job[a.job_id].append(a)
        self.order = merged_all
        changes: dict[str, tuple[Allocation, ...]] = {}
        # Running jobs first (in the order they started holding), then new ones (decision order).
        for job_id in [*self.running_allocs, *(j for j in new_by_job if j not in self.running_allocs)]:
            if job_id in same:
                continue
            new = tuple(new_by_job.get(job_id, ()))
            if new != self.active[job_id].allocs:
                changes[job_id] = new
        return changes

    def _check_capacity(self, changes: Mapping[str, tuple[Allocation, ...]], t: int) -> dict[str, Booked]:
        """Release every changed job's old allocation, then book the new ones; raise if one does not
        fit. Returns what each changed job now has booked (per-instance demands, for _set_allocs)."""
        ledger = self.ledger
        for job_id in changes:
            for server, _role, demand, count in self.active[job_id].booked:
                ledger.release(server, demand, count)
        booked: dict[str, Booked] = {}
        for job_id, new in changes.items():
            job = self.active[job_id].job
            parts = []
            for a in new:
                need = demand_of(self.cluster, job, a.role, a.type)
                assert need is not None
                if not ledger.take(a.server, a.role, need, a.count):
                    raise ScheduleError(
                        f"slot {t}: {a.count} {a.role}(s) of job {a.job_id!r} do not fit on server {a.server!r}"
                    )
                parts.append((a.server, a.role, need, a.count))
            booked[job_id] = tuple(parts)
        return booked

    def _failures_at(self, t: int) -> None:
        """Servers failing at ``t``: kill the jobs on them (scheduling.failures) and book the server
        in full until it is repaired; servers repaired at ``t``: release them."""
        timeline = self.failures
        assert timeline is not None
        for f in timeline.up_at.get(t, ()):
            if timeline.down.pop(f.server, None) is not None:
                self.ledger.release(f.server, self.cluster.server(f.server).capacity)
        for f in timeline.down_at.get(t, ()):
            for job_id, allocs in list(self.running_allocs.items()):
                if any(a.server == f.server for a in allocs):
                    st = self.states[job_id]
                    for server, _role, demand, count in st.booked:
                        self.ledger.release(server, demand, count)
                    self._sync(st, t)
                    loss = failures.lost_work(st.rate, st.progress_start, t, self.cluster.checkpoint_slots)
                    self._change(st, (), t, (), preempted=False)
                    st.work_closed -= loss
                    st.work_done -= loss
                    self.kills.append(Kill(job_id, f.server, t, loss))
                    self.order = None
            timeline.down[f.server] = f
            self.ledger.book(f.server, self.cluster.server(f.server).capacity)

    def _change(
        self, st: JobState, new: tuple[Allocation, ...], t: int, booked: Booked, preempted: bool = True
    ) -> None:
        """Commit ``new`` as the job's allocation from slot ``t`` (already booked in the ledger as
        ``booked``); ``preempted``: an emptied allocation counts as a preemption (not a kill)."""
        self._sync(st, t)
        self._close_periods(st, t)
        st.attained_closed, st.held_since = st.attained, t
        had = bool(st.allocs)
        if had and not new and preempted:
            st.preemptions += 1  # suspended before completion
        self._set_allocs(st, new, t, booked)
        st.view = None
        st.rate = rate(self.cluster, st.job, new) if new else 0.0
        st.gpus = sum(count * demand.get("gpu", 0.0) for _server, _role, demand, count in booked)  # gpus_of(new)
        st.version += 1
        if not new:
            return
        st.admitted = True
        if st.start is None:
            st.start = t
        begin = t
        k = self.restart if self.job_restart is None else self.job_restart.get(st.job.job_id, self.restart)
        first = False  # whether slot ``begin`` is the last of a restart period, at a reduced rate
        if k:  # (only then is last_held read; a job's k never changes)
            held = held_key(new)
            if st.last_held is not None and (not had or held != st.last_held):
                # DESIGN section 9: a resume after a suspension, or a (re)start on an allocation
                # other than the one held just before, loses the restart time; the first start is free.
                begin = t + k
                st.restart = (t, begin)
                if self.share:
                    begin -= 1  # its last slot at rate x share (restart_share)
                    first = True
            st.last_held = held
        if self.delays:
            ready = data_ready(self.servers, st.job, new)
            if ready > begin:
                begin, first = ready, False  # the data arrives after the restart period: full rate then
        if st.rate > 0:
            st.progress_start = begin
            remaining = st.job.work_required - st.work_done
            if first:
                st.first_rate = st.rate * self.share
                rest = remaining - st.first_rate
                done_at = begin + 1 + (math.ceil(rest / st.rate - EPS) if rest / st.rate > EPS else 0)
            else:
                done_at = begin + max(1, math.ceil(remaining / st.rate - EPS))
            heapq.heappush(self.heap, (done_at, st.rank, st.job.job_id, st.version))

    def _set_allocs(self, st: JobState, new: tuple[Allocation, ...], t: int, booked: Booked) -> None:
        """Update the placement log, the running set and the job's booked demands (``booked``:
        ``new``'s, as _check_capacity booked them)."""
        job_id = st.job.job_id
        log = self.log
        if not st.allocs or not new:  # a start or a stop: every segment opens or closes
            for a in st.allocs:
                log.close((job_id, a.server, a.role, a.type), t)
            for a in new:
                log.open[(job_id, a.server, a.role, a.type)] = (a.count, t)
        else:
            old = {(a.server, a.role, a.type): a.count for a in st.allocs}
            fresh = {(a.server, a.role, a.type): a.count for a in new}
            for key, count in old.items():
                if fresh.get(key) != count:
                    log.close((job_id, *key), t)
            for key, count in fresh.items():
                if old.get(key) != count:
                    log.open[(job_id, *key)] = (count, t)
        if not new and st.completion is not None:
            for server, _role, demand, count in st.booked:
                self.ledger.release(server, demand, count)
        st.allocs = new
        st.booked = booked
        if new:
            self.running_allocs[job_id] = new
        else:
            self.running_allocs.pop(job_id, None)

    def _close_periods(self, st: JobState, t: int) -> None:
        """End the job's open progress segment and restart period at slot ``t``."""
        if st.restart is not None:
            start, end = st.restart
            if min(end, t) > start:
                self.restarts.append(RestartPeriod(st.job.job_id, start, min(end, t)))
            st.restart = None
        self._close_progress(st, t)

    def _close_progress(self, st: JobState, t: int) -> None:
        """End the job's open progress segment at ``t`` (its first slot apart if it runs at ``first_rate``)."""
        start = st.progress_start
        if start is not None and t > start and st.first_rate is not None:
            self.log.add_progress(st.job.job_id, start, start + 1, st.first_rate)
            st.work_closed += st.first_rate
            start += 1
        if start is not None and t > start:
            self.log.add_progress(st.job.job_id, start, t, st.rate)
            st.work_closed += st.rate * (t - start)
        st.progress_start = None
        st.first_rate = None


def data_ready(servers: Mapping[str, Server], job: Job, allocs: Iterable[Allocation]) -> int:
    """The first slot the job's data is on every server its workers in ``allocs`` use (``servers``:
    the cluster's, by id): the largest r_j + Delta_js (its arrival when no worker waits for data)."""
    return max(
        (job.arrival + job.upload_delay_to(servers[a.server]) for a in allocs if a.role == "worker"),
        default=job.arrival,
    )


def _merge(allocations: Iterable[Allocation]) -> tuple[Allocation, ...]:
    """Allocations merged per (job, server, role, type), in order of first appearance, so that
    segments are canonical."""
    merged: dict[tuple[str, str, str, str], int] = defaultdict(int)
    given = tuple(allocations)
    for a in given:
        merged[(a.job_id, a.server, a.role, a.type)] += a.count
    if len(merged) == len(given):
        return given  # already canonical (as every placement is): the same allocations, in order
    return tuple(Allocation(*k, count=c) for k, c in merged.items())
