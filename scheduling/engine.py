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
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from scheduling import failures, records, restart_costs
from scheduling.capacity import Ledger
from scheduling.errors import ScheduleError
from scheduling.model import Amounts, Cluster, Instance, Job, Server
from scheduling.records import field, record
from scheduling.speed import Allocation, demand_of, rate

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, Protocol, TypeVar, overload

    T = TypeVar("T")
else:
    Protocol = object  # Algorithm is a protocol for the type checker only
    T = object  # (the type variable of Lazy's items, for the type checker)

    def overload(f: Any) -> Any:  # as typing.overload at run time: the last definition stands
        return f


EPS = 1e-9


def held_key(allocs: Iterable[Allocation]) -> frozenset[tuple[str, str, str, int]]:
    """What an allocation holds, as the engine compares a job's allocations to charge a restart:
    a start on anything but the allocation held just before pays the restart time."""
    return frozenset((a.server, a.role, a.type, a.count) for a in allocs)


@record
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


class Lazy(Sequence[T]):
    """A tuple built on first use (the engine's job views and committed allocations)."""

    def __init__(self, build: Callable[[], tuple[T, ...]], length: Callable[[], int] | None = None) -> None:
        self._build: Callable[[], tuple[T, ...]] | None = build
        self._length = length  # the length without building the items, if known
        self._items: tuple[T, ...] = ()

    def _get(self) -> tuple[T, ...]:
        if self._build is not None:
            self._items, self._build = self._build(), None
        return self._items

    def __len__(self) -> int:
        if self._build is not None and self._length is not None:
            return self._length()
        return len(self._get())

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...  # noqa: F811 (overload: not typing's at run time)

    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:  # noqa: F811
        return self._get()[i]

    def __iter__(self) -> Iterator[T]:
        return iter(self._get())

    def __contains__(self, x: object) -> bool:
        return x in self._get()


@record
class View:
    """What an algorithm sees at slot ``t``. The engine builds ``jobs`` and ``allocations`` (every
    active job, every committed allocation) on first use; change-based algorithms use the cheaper
    accessors instead (``running``, ``job``, ``committed_ledger``, ``completed``)."""

    t: int  # the current slot
    cluster: Cluster
    jobs: Sequence[JobView]  # arrived, unfinished, not rejected; by (arrival, job_id)
    allocations: Sequence[Allocation]  # what is committed now (the previous decision)
    horizon: int | None  # last slot + 1, or None when the run ends once every job is done
    arrived: tuple[Job, ...]  # the jobs that arrive exactly at ``t``
    completed: tuple[str, ...] = ()  # jobs that completed at ``t`` (since the previous decision)
    engine: _Engine | None = field(default=None, repr=False, compare=False)

    @property
    def direct(self) -> bool:
        """Whether the engine built this view itself: its change-based accessors then describe
        exactly ``jobs`` (a wrapper that filters the jobs hands over a plain tuple instead, and
        only a full decision sees that)."""
        return self.engine is not None and isinstance(self.jobs, Lazy)

    def ledger(self) -> Ledger:
        """An empty capacity ledger of the cluster to build the next decision on (with the servers
        that are down under the cluster's failure trace booked in full)."""
        ledger = Ledger(self.cluster)
        if self.engine is not None and self.engine.failures is not None:
            for server in self.engine.failures.down:
                ledger.book(server, self.cluster.server(server).capacity)
        return ledger

    # Change-based accessors: cost in proportion to what is asked for.
    def committed_ledger(self) -> Ledger:
        """A copy of the engine's ledger with every committed allocation booked."""
        assert self.engine is not None
        return self.engine.ledger.copy()

    def running(self) -> Mapping[str, tuple[Allocation, ...]]:
        """Job id -> its committed allocation, for the jobs that hold resources (read-only)."""
        assert self.engine is not None
        return self.engine.running_allocs

    def restart_slots(self, job_id: str | None = None) -> int:
        """Slots a resumed, moved or resized job holds its allocation without progress (the run's
        restart cost, docs/formats.md "Restart cost"); 0 when restarts are free. With ``job_id``:
        that job's (its own cost if it has one, "Per-job restart costs")."""
        assert self.engine is not None
        own = self.engine.job_restart
        if job_id is not None and own is not None:
            return own.get(job_id, self.engine.restart)
        return self.engine.restart

    def per_job_restarts(self) -> bool:
        """Whether some jobs have their own restart cost (then ``restart_slots(job_id)`` differs)."""
        assert self.engine is not None
        return self.engine.job_restart is not None

    def job(self, job_id: str) -> JobView:
        """The view of one active job."""
        assert self.engine is not None
        return self.engine.job_view(self.engine.active[job_id])


@record
class Decision:
    """An algorithm's answer to a view: a complete allocation or changes, admissions, rejections."""

    allocations: tuple[Allocation, ...] = ()  # the complete allocation from now on (if changes is None)
    admit: tuple[str, ...] = ()  # jobs admitted now (they may still wait for resources)
    reject: tuple[str, ...] = ()  # jobs rejected now: they never run
    wake_at: int | None = None  # ask to decide again at this slot even if nothing happens
    preempted: tuple[str, ...] = ()  # partial (worker-level) preemptions done by this decision
    # Change-based form: job id -> its complete new allocation (empty: stop it); others keep theirs.
    changes: Mapping[str, tuple[Allocation, ...]] | None = None


class Algorithm(Protocol):
    def decide(self, view: View) -> Decision: ...

    def report(self) -> Mapping[str, Any]:
        """Extra result fields (e.g. ``prices``) once the run is over."""


Booked = tuple[tuple[str, str, Amounts, int], ...]  # (server, role, per-instance demand, count)


@record(frozen=False)
class _JobState:
    """The engine's bookkeeping of one job."""

    job: Job
    work_done: float = 0.0  # work done up to the last _sync
    attained: float = 0.0  # GPU-slots held up to the last _sync
    work_closed: float = 0.0  # work of the closed progress segments (sum of rate x length)
    attained_closed: float = 0.0  # GPU-slots held before ``held_since``
    held_since: int = 0  # slot the current allocation was committed
    admitted: bool = False
    rejected: bool = False
    start: int | None = None
    completion: int | None = None
    preemptions: int = 0
    rate: float = 0.0
    gpus: float = 0.0
    allocs: tuple[Allocation, ...] = ()
    booked: Booked = ()
    last_held: frozenset[tuple[str, str, str, int]] | None = None  # the last non-empty allocation
    progress_start: int | None = None  # slot progress (re)starts at the current rate
    first_rate: float | None = None  # rate in slot progress_start only (the last slot of a restart period)
    restart: tuple[int, int] | None = None  # current restart period [start, end)
    version: int = 0  # bumped when the completion slot changes (stale heap entries)
    view: JobView | None = None  # cached until the state changes
    view_t: int = -1


@record
class PlacementSegment:
    """``count`` instances of a role and type held by a job on a server over [start, end)."""

    job_id: str
    server: str
    role: str
    type: str
    count: int
    start: int
    end: int


@record
class ProgressSegment:
    """A job progressing at ``rate`` work units per slot over [start, end)."""

    job_id: str
    start: int
    end: int
    rate: float


@record
class RestartPeriod:
    """Slots a job held its allocation without progress after a resume, move or resize."""

    job_id: str
    start: int
    end: int  # exclusive; shorter than the restart time if the allocation changed again or the run ended


@record
class Kill:
    """A job stopped at ``slot`` because ``server`` failed, losing ``lost_work`` work units."""

    job_id: str
    server: str
    slot: int
    lost_work: float


@record
class JobRecord:
    """The outcome of one job (a row of the result's ``jobs``)."""

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


@record
class Run:
    """The raw outcome of one simulation, before metrics and serialisation."""

    horizon: int  # the slot the run ended at
    jobs: tuple[JobRecord, ...]
    placements: tuple[PlacementSegment, ...]
    progress: tuple[ProgressSegment, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)
    restarts: tuple[RestartPeriod, ...] = ()
    restart_slots: int = 0  # the restart time the run charged, in slots
    restart_seconds: float = 0.0  # the restart time it was given (cluster field or run override), s
    kills: tuple[Kill, ...] = ()  # jobs stopped by server failures (scheduling.failures)
    job_restart_slots: Mapping[str, int] | None = None  # jobs with their own restart cost -> its slots


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
    return records.replace(engine.run(algorithm), restart_seconds=float(seconds), job_restart_slots=own)


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
        self.states = {j.job_id: _JobState(j) for j in self.jobs}
        self.active: dict[str, _JobState] = {}  # arrived, not completed, not rejected; in arrival order
        self.running_allocs: dict[str, tuple[Allocation, ...]] = {}  # jobs holding resources
        self.ledger = Ledger(self.cluster)  # every committed allocation, booked
        self.heap: list[tuple[int, int, str, int]] = []  # (completion slot, arrival rank, job id, version)
        self.rank = {j.job_id: i for i, j in enumerate(self.jobs)}
        self.log = _Log()
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
        records = tuple(_record(st) for st in self.states.values())
        restarts = tuple(sorted(self.restarts, key=lambda r: (r.job_id, r.start)))
        return Run(
            t,
            records,
            self.log.sorted_placements(),
            self.log.sorted_progress(),
            dict(algorithm.report()),
            restarts,
            self.restart,
            kills=tuple(self.kills),
        )

    def running(self) -> list[_JobState]:
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

    def _pop_completions(self, t: int) -> list[_JobState]:
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
    def job_view(self, st: _JobState) -> JobView:
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

    def _sync(self, st: _JobState, t: int) -> None:
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
        self, st: _JobState, new: tuple[Allocation, ...], t: int, booked: Booked, preempted: bool = True
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
            heapq.heappush(self.heap, (done_at, self.rank[st.job.job_id], st.job.job_id, st.version))

    def _set_allocs(self, st: _JobState, new: tuple[Allocation, ...], t: int, booked: Booked) -> None:
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

    def _close_periods(self, st: _JobState, t: int) -> None:
        """End the job's open progress segment and restart period at slot ``t``."""
        if st.restart is not None:
            start, end = st.restart
            if min(end, t) > start:
                self.restarts.append(RestartPeriod(st.job.job_id, start, min(end, t)))
            st.restart = None
        self.log.close_progress(st, t)


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
        start = st.progress_start
        if start is not None and t > start and st.first_rate is not None:
            self.progress.append(ProgressSegment(st.job.job_id, start, start + 1, st.first_rate))
            st.work_closed += st.first_rate
            start += 1
        if start is not None and t > start:
            self.progress.append(ProgressSegment(st.job.job_id, start, t, st.rate))
            st.work_closed += st.rate * (t - start)
        st.progress_start = None
        st.first_rate = None

    def sorted_placements(self) -> tuple[PlacementSegment, ...]:
        return tuple(sorted(self.placements, key=lambda p: (p.start, p.job_id, p.server, p.role, p.type)))

    def sorted_progress(self) -> tuple[ProgressSegment, ...]:
        return tuple(sorted(self.progress, key=lambda p: (p.job_id, p.start)))


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
