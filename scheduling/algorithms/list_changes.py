"""The list scheduler's change-based path (``_Queues``): the waiting and running jobs kept sorted by
their walk entry, so that a decision walks only the waiting jobs (and those it evicts) and returns
only the jobs whose allocation changes. It gives the schedule of ``ListScheduler.decide_full``,
the readable transcription (scheduling/algorithms/priority.py; tests/twins/lists.py)."""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType

from scheduling import gpu_types
from scheduling.algorithms.common import job_shape, keep
from scheduling.algorithms.eviction import SLACK, evict_until_fit
from scheduling.engine import Decision, JobView, View, held_key
from scheduling.model import Job
from scheduling.speed import SPREAD_SLOWDOWN, Allocation, gpus_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)

if TYPE_CHECKING:
    from scheduling.algorithms.priority import ListScheduler

Entry = tuple[tuple[float, ...], int, str]  # (key, arrival, job id): the walk's total order

UNCHANGED = Decision(changes=MappingProxyType({}))
"""A change-based decision that changes nothing (one shared, read-only object)."""


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
