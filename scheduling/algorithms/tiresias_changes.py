"""Tiresias' change-based path (``ChangePath``): the queues, executed and waiting times of
``scheduling.algorithms.tiresias.Tiresias`` kept incrementally, so that a decision costs in
proportion to the jobs that arrive, complete, change queue or are placed or evicted, not to the
jobs that keep running. It gives the schedule of ``Tiresias.decide_full``, the readable
transcription (tests/test_fast_twins.py); line numbers cited are of the authors' run_sim.py,
as in that module.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from scheduling.algorithms.common import Config, FitMemo, keep
from scheduling.capacity import Ledger
from scheduling.engine import Decision, View
from scheduling.model import Cluster, Job
from scheduling.speed import Allocation, demand_of

if TYPE_CHECKING:
    from scheduling.algorithms.tiresias import Tiresias


def total_gpus(cluster: Cluster) -> float:
    """The cluster's GPUs (infinite if a server with GPUs is unlimited)."""
    total = 0.0
    for s in cluster.servers:
        g = s.capacity.get("gpu", 0.0)
        if g > 0 and s.unlimited:
            return math.inf
        total += g
    return total


_MARGIN = 1e-6
"""Relative slack of ``ChangePath._could_fit_evicting``'s sums over the ledger's own (``TOLERANCE``
is 1e-9): far above the rounding of sums taken in another order."""
_Holdings = tuple[dict[tuple[str, str], float], list[tuple[str, dict[str, float]]]]

_R, _W, _T = 0, 1, 2  # parts of a queue in walk order: running, waiting, appended since the last decision


class _Job:
    """The change-based path's state of one active job. Executed and waiting time are a base plus
    the slot they last started counting from, so a job costs nothing while its state holds."""

    __slots__ = ("ex", "g", "id", "job", "label", "part", "queue", "rank", "running", "since", "version", "wb", "ws")

    def __init__(self, job: Job, rank: int, g: float) -> None:
        self.id = job.job_id
        self.job = job
        self.rank = rank  # the engine's arrival order: (arrival, job id)
        self.g = g  # GPUs it holds when it runs
        self.queue = 0
        self.part = _T  # _R, _W or _T: which part of its queue (see ChangePath)
        self.label = 0  # its place in that part
        self.running = False  # holds its committed allocation
        self.ex = 0  # executed slots up to ``since`` while running, in total while waiting
        self.since = 0  # slot it last started running
        self.wb = 0  # waited slots up to ``ws``
        self.ws: int | None = None  # slot it last started waiting with executed time > 0, or None
        self.version = 0  # bumped at every change of state: older heap entries are stale

    def pos(self) -> tuple[int, int, int]:
        return (self.queue, self.part, self.label)


class ChangePath:
    """The change-based path: the same queues and bookkeeping as ``decide_full``, kept incrementally.

    At a decision each queue is [R: running jobs, W: waiting jobs, T: jobs appended since the
    previous decision (arrivals, demoted, promoted)], because the previous decision moved its
    waiting jobs behind its running ones. R keeps insertion order in a dict; W is indexed by the
    jobs' GPUs (one sorted label list per GPU count), so the walk finds the next waiting job that
    could fit at all (GPUs <= free GPUs + GPUs of the running jobs after it) by bisection and
    never looks at the others. Demotion and promotion checks come from heaps of the slots they
    become due; the next "job jump" of the running jobs of each (queue, GPUs) group is that of
    the job that has executed longest, kept in a heap per group. Executed and waiting times
    advance lazily (``_Job``). A job that does not fit evicts later running jobs one by one until
    it fits, and if it never does, every eviction is undone (docs/algorithms-tiresias.md, "The
    walk runs on the committed ledger"); once that has happened in a walk, a job is first checked
    against the capacity those jobs would free (``_could_fit_evicting``), so that on clusters
    where fragmentation rather than GPU counts decides, the walk does not evict and restore them
    all again for each job."""

    def __init__(self, owner: Tiresias) -> None:
        self.o = owner
        n = len(owner.queues)
        self.last = n - 1
        self.R: list[dict[str, None]] = [{} for _ in range(n)]
        self.rsum = [0.0] * n  # GPUs of the booked jobs of each R
        self.W: list[dict[float, tuple[list[int], list[str]]]] = [{} for _ in range(n)]  # GPUs -> labels, ids
        self.T: list[list[_Job]] = [[] for _ in range(n)]
        self.js: dict[str, _Job] = {}
        ordered = sorted(owner.instance.jobs, key=lambda j: (j.arrival, j.job_id))
        self.rank = {j.job_id: i for i, j in enumerate(ordered)}
        self.total = total_gpus(owner.instance.cluster)
        self.used = 0.0  # GPUs of the running jobs
        self.tail = 0  # labels for R and the tail of W grow ...
        self.front = 0  # ... and labels for the front of W shrink
        self.demote: list[tuple[int, int, str, int]] = []  # (slot due, rank, job, version)
        self.promote: list[tuple[int, int, str, int]] = []
        self.pwake: list[tuple[int, str, int]] = []  # promotions' "job jump" slots
        self.jumps: dict[tuple[int, float], list[tuple[int, str, int]]] = {}  # (queue, GPUs) -> (-base, job, version)
        # per-walk state
        self.ledger: Ledger | None = None
        self.memo: FitMemo | None = None
        self.view: View | None = None
        self.free = 0.0
        self.after = 0.0
        self.out: set[str] = set()  # running jobs evicted in this walk and not booked again
        self.pending: list[_Job] = []  # evicted and not yet retried (walk order: last first)
        self.back: list[_Job] = []  # victims handed back (their eviction was undone)
        self.victims: Iterator[_Job] = iter(())
        self.taken = 0  # victims taken from ``victims`` so far
        self.later: _Later | None = None  # built at the walk's first failed eviction
        self.spared = 0  # evictions not tried because _could_fit_evicting refused the job (tests)
        # job id -> (its committed allocations, what they take: ChangePath._holdings)
        self.holdings: dict[str, tuple[tuple[Allocation, ...], _Holdings]] = {}
        self.hopeless: dict[tuple[object, ...], int] = {}  # shape -> fewest workers that cannot fit even so
        self.changes: dict[str, tuple[Allocation, ...]] = {}

    # -- one decision --------------------------------------------------------------------------
    def decide(self, view: View) -> Decision:
        t, o = view.t, self.o
        for job_id in view.completed:  # lines 1018-1022
            j = self.js.pop(job_id, None)
            self.holdings.pop(job_id, None)
            if j is not None:
                self._leave_r(j)
                self.used -= j.g
                j.running = False
                j.version += 1
        for job in view.arrived:  # lines 1025-1030
            j = self.js[job.job_id] = _Job(job, self.rank[job.job_id], o._gpus(job.job_id))
            self._append_t(j, 0)
        # Demotions and promotions due now, in arrival order (lines 1034-1072).
        due: list[_Job] = []
        for heap in (self.demote, self.promote):
            while heap and heap[0][0] <= t:
                _at, _rank, job_id, version = heapq.heappop(heap)
                j2 = self.js.get(job_id)
                if j2 is not None and j2.version == version:
                    due.append(j2)
        due.sort(key=lambda j: j.rank)
        for j in due:
            if j.running:  # demoted by one queue (lines 1046-1056)
                self._leave_r(j)
                j.queue += 1
                j.version += 1
                self._append_t(j, j.queue)
                self._arm_running(j, t)
            else:  # PromoteKnob (lines 1067-1072)
                self._leave_w(j)
                j.ex = j.wb = 0
                j.ws = None
                j.queue = 0
                j.version += 1
                self._append_t(j, 0)
        started: list[list[_Job]] = [[] for _ in self.R]
        suspended: list[list[_Job]] = [[] for _ in self.R]
        waiting = any(self.W) or any(not j.running for q in self.T for j in q)
        if waiting:
            self._walk(view, started, suspended)
        changes = self.changes
        self._reorder(t, started, suspended)
        self.changes, self.view, self.ledger, self.memo = {}, None, None, None
        return Decision(changes=changes, wake_at=self._wake(t))

    # -- structures ----------------------------------------------------------------------------
    def _append_t(self, j: _Job, q: int) -> None:
        j.queue, j.part, j.label = q, _T, len(self.T[q])
        self.T[q].append(j)

    def _append_r(self, j: _Job) -> None:
        self.tail += 1
        j.part, j.label = _R, self.tail
        self.R[j.queue][j.id] = None
        self.rsum[j.queue] += j.g

    def _leave_r(self, j: _Job) -> None:
        if j.part == _R:
            del self.R[j.queue][j.id]
            if j.id not in self.out:
                self.rsum[j.queue] -= j.g

    def _insert_w(self, j: _Job, label: int) -> None:
        j.part, j.label = _W, label
        labels, ids = self.W[j.queue].setdefault(j.g, ([], []))
        i = bisect.bisect_left(labels, label)
        labels.insert(i, label)
        ids.insert(i, j.id)

    def _leave_w(self, j: _Job) -> None:
        buckets = self.W[j.queue]
        labels, ids = buckets[j.g]
        i = bisect.bisect_left(labels, j.label)
        del labels[i]
        del ids[i]
        if not labels:
            del buckets[j.g]

    def _arm_running(self, j: _Job, t: int) -> None:
        """Heap entries of a running job: its next demotion check and its "job jump" group."""
        o = self.o
        if j.queue >= self.last or j.g <= 0:
            return
        limit = o.limits[j.queue]
        # Smallest executed time x with x * GPUs >= limit - 1e-9 (the test of decide_full).
        x = max(0, math.ceil((limit - 1e-9) / j.g))
        while x > 0 and (x - 1) * j.g >= limit - 1e-9:
            x -= 1
        while x * j.g < limit - 1e-9:
            x += 1
        due = max(t + 1, j.since + x - j.ex)  # checked at decisions after this one
        heapq.heappush(self.demote, (due, j.rank, j.id, j.version))
        heapq.heappush(self.jumps.setdefault((j.queue, j.g), []), (-(j.ex - j.since), j.id, j.version))

    def _arm_waiting(self, j: _Job, t: int) -> None:
        """Heap entries of a job suspended at ``t``: its promotion check and "job jump"."""
        knob = self.o.knob
        if knob <= 0 or j.queue == 0 or j.ex <= 0:
            return
        assert j.ws is not None
        due = max(j.ws + 1, j.ws - j.wb + math.floor(j.ex * knob))
        heapq.heappush(self.promote, (due, j.rank, j.id, j.version))
        waited = j.wb + (t - j.ws)
        diff = math.floor(j.ex * knob - waited + 1e-9)
        heapq.heappush(self.pwake, (t + diff, j.id, j.version))

    def _wake(self, t: int) -> int | None:
        """``_next_jump`` from the heaps: per (queue, GPUs) group the running job that has executed
        longest has the earliest jump; promotions keep theirs while they wait."""
        best: int | None = None
        js = self.js
        for (q, g), heap in self.jumps.items():
            while heap and ((j := js.get(heap[0][1])) is None or j.version != heap[0][2]):
                heapq.heappop(heap)
            if heap:
                executed = -heap[0][0] + t
                at = t + math.floor((self.o.limits[q] - executed) / g + 1e-9)
                best = at if best is None else min(best, at)
        heap2 = self.pwake
        while heap2 and (heap2[0][0] <= t or (j := js.get(heap2[0][1])) is None or j.version != heap2[0][2]):
            heapq.heappop(heap2)
        if heap2:
            best = heap2[0][0] if best is None else min(best, heap2[0][0])
        return None if best is None else max(best, t + 1)

    # -- the walk ------------------------------------------------------------------------------
    def _victims(self) -> Iterator[_Job]:
        """Running jobs in reverse walk order (the structures do not change during a walk)."""
        for q in range(self.last, -1, -1):
            for j in reversed(self.T[q]):
                if j.running:
                    yield j
            for job_id in reversed(self.R[q]):
                yield self.js[job_id]

    def _victim(self, pos: tuple[int, int, int]) -> _Job | None:
        """The last booked running job after ``pos`` in walk order, if any. Evictions always take
        the last one, so the evicted jobs after the walk's position are a suffix of the running ones."""
        if self.back:
            j = self.back.pop()
        else:
            nxt = next(self.victims, None)
            if nxt is None:
                return None
            j = nxt
            self.taken += 1
        if j.pos() <= pos:
            self.back.append(j)
            return None
        return j

    def _walk(self, view: View, started: list[list[_Job]], suspended: list[list[_Job]]) -> None:
        self.view = view
        self.free = self.total - self.used
        self.after = self.used  # GPUs of the booked running jobs after the walk's position
        self.out, self.pending, self.back, self.hopeless = set(), [], [], {}
        self.victims = self._victims()
        self.taken, self.later = 0, None
        for q in range(self.last + 1):
            self.after -= self.rsum[q]
            while self.pending and self.pending[-1].queue == q and self.pending[-1].part == _R:
                j = self.pending.pop()
                if not self._try(j):
                    suspended[q].append(j)
            buckets = self.W[q]
            cur = -(1 << 62)
            while buckets:
                cap = self.free + self.after + 1e-9
                best_label, best_id = None, ""
                for g, (labels, ids) in buckets.items():
                    if g > cap:
                        continue
                    i = bisect.bisect_right(labels, cur)
                    if i < len(labels) and (best_label is None or labels[i] < best_label):
                        best_label, best_id = labels[i], ids[i]
                if best_label is None:
                    break
                cur = best_label
                j = self.js[best_id]
                if self._try(j):
                    started[q].append(j)
            for j in self.T[q]:
                if not j.running:
                    self._try(j)
                elif j.id in self.out:
                    assert self.pending and self.pending[-1] is j
                    self.pending.pop()
                    self._try(j)
                else:
                    self.after -= j.g

    def _could_fit_evicting(self, j: _Job, cfg: Config) -> bool:
        """False only if ``j`` cannot fit even with every later running job evicted; known only
        after the walk's first failed eviction (``_Later``), True before.

        Two necessary conditions of ``place``, for each part (workers, PSs): the free capacity
        summed over the servers that accept the role (``Ledger.could_fit``, where every placement
        starts) plus what the later running jobs hold; then, the instances that fit server by
        server (``Ledger.room``) with what those jobs hold on each server freed, at least the
        part's count (a placement on one server or spread over several needs both). Both use a
        margin far above the rounding of sums taken in another order, so a job that eviction could
        place is never refused: this only spares evictions that would all be undone.
        """
        later = self.later
        if later is None:
            return True
        evicted = self.taken - len(self.back)
        m = later.after(j.pos())
        if m <= evicted:
            return True  # no later running job is booked: place() has just failed on this ledger
        ledger, cluster = self._ledger(), self.o.instance.cluster
        parts = [("worker", cfg.worker_type, cfg.workers)]
        if cfg.ps_type is not None and cfg.ps:
            parts.append(("ps", cfg.ps_type, cfg.ps))
        demands: list[tuple[str, Mapping[str, float], int]] = []
        totals, held = later.held(evicted, m)
        for role, type_id, n in parts:
            demand = demand_of(cluster, j.job, role, type_id)
            if demand is None:
                return True  # place() decides
            for resource, amount in demand.items():
                free = ledger.role_free(role, resource) + totals.get((role, resource), 0.0)
                if amount > 0 and amount * n > free + _MARGIN * (1.0 + abs(free)):
                    return False
            demands.append((role, demand, n))
        for role, demand, n in demands:
            rooms = dict(ledger.room(role, demand))
            total = sum(rooms.values())
            for server_id, amounts in held.items():
                if total >= n:
                    break
                server = ledger.server(server_id)
                if server is None or server.unlimited or not server.accepts(role):
                    continue
                k = 1 << 30
                for resource, amount in demand.items():
                    if amount > 0:
                        free = server.capacity.get(resource, 0.0) - ledger.used(server_id, resource)
                        free += amounts.get(resource, 0.0)
                        k = min(k, math.floor((free + _MARGIN * (1.0 + abs(free))) / amount))
                total += max(k, 0) - rooms.get(server_id, 0)
            if total < n:
                return False
        return True

    def _holdings(self, j: _Job) -> _Holdings:
        """What a running job's committed allocations take: from each role's summed free capacity
        (``Ledger.role_free``), (role, resource) -> amount; and from each server, resource -> amount."""
        assert self.view is not None
        allocs = self.view.running()[j.id]
        cached = self.holdings.get(j.id)
        if cached is not None and cached[0] is allocs:
            return cached[1]
        ledger = self._ledger()
        vec: dict[tuple[str, str], float] = {}
        per_server: list[tuple[str, dict[str, float]]] = []
        for server, demand, count in self._committed(j):
            amounts = {r: amount * count for r, amount in demand.items()}
            per_server.append((server, amounts))
            for role in ledger.counted_roles(server):
                for resource, amount in amounts.items():
                    vec[(role, resource)] = vec.get((role, resource), 0.0) + amount
        result = (vec, per_server)
        self.holdings[j.id] = (allocs, result)
        return result

    def _ledger(self) -> Ledger:
        if self.ledger is None:
            assert self.view is not None
            self.ledger = self.view.committed_ledger()
            self.memo = self.o.memo(self.ledger)
        return self.ledger

    def _committed(self, j: _Job) -> Iterator[tuple[str, Mapping[str, float], int]]:
        """(server, per-instance demand, count) of each of a running job's committed allocations."""
        cluster = self.o.instance.cluster
        assert self.view is not None
        for a in self.view.running()[j.id]:
            yield a.server, demand_of(cluster, j.job, a.role, a.type) or {}, a.count

    def _release(self, j: _Job) -> None:
        ledger = self._ledger()
        for server, demand, count in self._committed(j):
            ledger.release(server, demand, count)

    def _rebook(self, j: _Job) -> None:
        """Undo ``_release`` of a victim whose eviction did not help: its allocations booked again
        exactly as released, unchecked (nothing was booked in between, so they fit as before)."""
        ledger = self._ledger()
        for server, demand, count in self._committed(j):
            ledger.book(server, demand, count)

    def _mark_hopeless(self, shape: tuple[object, ...], workers: int) -> None:
        """No job of ``shape`` with ``workers`` or more workers can be placed for the rest of the walk."""
        self.hopeless[shape] = min(workers, self.hopeless.get(shape, 1 << 30))

    def _try(self, j: _Job) -> bool:
        """Book a job that is not booked (waiting, or evicted earlier in this walk) at its place in
        the walk: back where it was, else first fit, else by evicting later running jobs."""
        o, ledger = self.o, self._ledger()
        memo = self.memo
        assert memo is not None and self.view is not None
        if j.running and keep(ledger, j.job, self.view.running()[j.id]):
            self._booked_again(j)
            self.changes.pop(j.id, None)
            return True
        cfg = o.configs[j.id]
        placed = memo.place(j.job, cfg)
        if placed is None:
            shape = memo.shape(j.job, cfg)
            if cfg.workers >= self.hopeless.get(shape, 1 << 30):
                return False
            if self.free + self.after < j.g - 1e-9:
                self._mark_hopeless(shape, cfg.workers)
                return False
            if not self._could_fit_evicting(j, cfg):
                self.spared += 1
                self._mark_hopeless(shape, cfg.workers)
                return False
            evicted: list[_Job] = []
            pos = j.pos()
            while placed is None:
                victim = self._victim(pos)
                if victim is None:
                    break
                self._release(victim)
                self.out.add(victim.id)
                self.changes[victim.id] = ()
                self.free += victim.g
                self.after -= victim.g
                if victim.part == _R:
                    self.rsum[victim.queue] -= victim.g
                evicted.append(victim)
                memo.failed.clear()  # the ledger has more room now
                placed = memo.place(j.job, cfg)
            if placed is None:  # not even by evicting every later running job: evict nothing
                self._mark_hopeless(shape, cfg.workers)
                for victim in reversed(evicted):
                    self._rebook(victim)
                    self.out.discard(victim.id)
                    self.changes.pop(victim.id, None)
                    self.free -= victim.g
                    self.after += victim.g
                    if victim.part == _R:
                        self.rsum[victim.queue] += victim.g
                    self.back.append(victim)
                if self.later is None:  # the structures have not changed: the same order again
                    self.later = _Later(self, list(self._victims()))
                    self.victims = iter(self.later.order[self.taken :])
                return False
            self.pending.extend(evicted)
        self.changes[j.id] = placed
        if j.running:
            self._booked_again(j)
        else:
            self.free -= j.g
        return True

    def _booked_again(self, j: _Job) -> None:
        self.out.discard(j.id)
        self.free -= j.g
        if j.part == _R:
            self.rsum[j.queue] += j.g

    # -- after the walk ------------------------------------------------------------------------
    def _reorder(self, t: int, started: list[list[_Job]], suspended: list[list[_Job]]) -> None:
        """Jobs left waiting go behind the running ones of their queue (lines 1132-1143): R gets
        the started jobs of W, then T's running jobs; W gets R's suspended jobs in front and T's
        waiting jobs at its tail."""
        for q in range(self.last + 1):
            for j in started[q]:
                self._leave_w(j)
                self._start(j, t)
            front = suspended[q]
            for j in reversed(front):
                self._leave_r(j)
                self._stop(j, t)
                self.front -= 1
                self._insert_w(j, self.front)
            for j in self.T[q]:
                if j.running and j.id not in self.out:
                    self._append_r(j)
                elif not j.running and self.changes.get(j.id):
                    self._start(j, t)
                else:
                    stopped = j.running
                    if stopped:
                        self._stop(j, t)
                    self.tail += 1
                    self._insert_w(j, self.tail)
                    if stopped:
                        self._arm_waiting(j, t)
            self.T[q] = []
        for j in (j for q in suspended for j in q):
            self._arm_waiting(j, t)
        self.out = set()
        self.victims = iter(())
        self.taken, self.later = 0, None

    def _start(self, j: _Job, t: int) -> None:
        j.running = True
        j.since = t
        if j.ws is not None:
            j.wb += t - j.ws
            j.ws = None
        j.version += 1
        self.used += j.g
        self._append_r(j)
        self._arm_running(j, t)

    def _stop(self, j: _Job, t: int) -> None:
        j.ex += t - j.since
        j.running = False
        j.ws = t
        j.version += 1
        self.used -= j.g


class _Later:
    """The running jobs in eviction order (reverse walk order), for ``_could_fit_evicting``, with
    what runs of them hold (``held``), each run summed once. Made at the walk's first failed
    eviction, which has just walked through them all anyway."""

    def __init__(self, path: ChangePath, order: list[_Job]) -> None:
        self.path = path
        self.order = order
        self._held: dict[tuple[int, int], tuple[dict[tuple[str, str], float], dict[str, dict[str, float]]]] = {}

    def after(self, pos: tuple[int, int, int]) -> int:
        """How many of ``order`` come after ``pos`` in walk order (they are its first ones)."""
        return bisect.bisect_left(self.order, _negated(pos), key=lambda j: _negated(j.pos()))

    def held(self, start: int, stop: int) -> tuple[dict[tuple[str, str], float], dict[str, dict[str, float]]]:
        """What ``order[start:stop]`` take from the summed free capacities, (role, resource) ->
        amount, and from each server, server -> resource -> amount."""
        key = (start, stop)
        cached = self._held.get(key)
        if cached is None:
            totals: dict[tuple[str, str], float] = {}
            servers: dict[str, dict[str, float]] = {}
            for j in self.order[start:stop]:
                vec, per_server = self.path._holdings(j)
                for k, amount in vec.items():
                    totals[k] = totals.get(k, 0.0) + amount
                for server_id, amounts in per_server:
                    on = servers.setdefault(server_id, {})
                    for resource, amount in amounts.items():
                        on[resource] = on.get(resource, 0.0) + amount
            cached = self._held[key] = (totals, servers)
        return cached


def _negated(pos: tuple[int, int, int]) -> tuple[int, int, int]:
    return (-pos[0], -pos[1], -pos[2])
