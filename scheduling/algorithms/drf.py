"""Dominant resource fairness (Ghodsi et al., NSDI'11) as the papers' DRF baseline.

Elastic jobs get their workers by progressive filling; by default (``fixed``, the baseline of
record) a started job keeps them, with ``resize`` they are re-divided at every arrival and
completion. Rigid jobs are started whole, in order of their group's dominant share. See the
registry entry for the semantics.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right
from collections import defaultdict, deque
from collections.abc import Mapping
from typing import Any

from scheduling.algorithms.common import Config, FitMemo, job_shape, keep
from scheduling.algorithms.configs import FixedConfigs
from scheduling.algorithms.list_changes import UNCHANGED
from scheduling.capacity import Ledger
from scheduling.engine import Decision, JobView, View
from scheduling.model import Amounts, Instance, Job
from scheduling.speed import Allocation, demand_of, ps_bandwidth_of, reservation_shortfall, reserves_ps_bandwidth


class Drf:
    def __init__(self, instance: Instance, configs: FixedConfigs, *, resize: bool = True) -> None:
        self.cluster = instance.cluster
        self.configs = configs
        self.resize = resize
        self.capacity = {r: self.cluster.total_capacity(r) for r in self.cluster.resource_names()}
        self.shapes: dict[str, tuple[object, ...]] = {}
        self.instance = instance
        # Change-based path for traces of rigid jobs only (production-trace replays): same walk
        # as _rigid, on queues and group usage kept across events (tests/test_fast_twins.py).
        self.rigid_only = all(j.rigid for j in instance.jobs)
        # Change-based path for fixed sizes on traces of elastic jobs only (_ElasticWaiting).
        self.elastic_only = not resize and not any(j.rigid for j in instance.jobs)
        self.incremental = True
        self._queues: _RigidQueues | _ElasticWaiting | None = None

    def share(self, usage: Mapping[str, float]) -> float:
        """Dominant share: the largest fraction of any (finite) cluster resource in ``usage``."""
        return max((a / self.capacity[r] for r, a in usage.items() if self.capacity.get(r, 0) > 0), default=0.0)

    def decide(self, view: View) -> Decision:
        if self.incremental and (self.rigid_only or self.elastic_only) and view.direct:
            if self._queues is None:
                self._queues = _RigidQueues(self, view) if self.rigid_only else _ElasticWaiting(self, view)
            return self._queues.decide(view)
        self._queues = None
        return self.decide_full(view)

    def decide_full(self, view: View) -> Decision:
        ledger = view.ledger()
        current: dict[str, list[Allocation]] = {}
        for a in view.allocations:
            current.setdefault(a.job_id, []).append(a)
        rigid = [jv for jv in view.jobs if jv.job.rigid]
        elastic = [jv for jv in view.jobs if not jv.job.rigid]
        chosen = self._rigid(ledger, rigid, current)
        chosen += self._elastic(ledger, elastic, current)
        return Decision(allocations=tuple(chosen))

    def _rigid(self, ledger: Ledger, jobs: list[JobView], current: dict[str, list[Allocation]]) -> list[Allocation]:
        chosen: list[Allocation] = []
        group_usage: dict[str, dict[str, float]] = defaultdict(dict)
        queues: dict[str, deque[JobView]] = defaultdict(deque)  # waiting jobs per group, by arrival
        for jv in jobs:
            if jv.running and keep(ledger, jv.job, current[jv.job.job_id]):
                chosen.extend(current[jv.job.job_id])
                _add(group_usage[_group(jv.job)], self._usage(jv.job, current[jv.job.job_id]))
            elif not jv.running:
                queues[_group(jv.job)].append(jv)
        # Serve the group with the smallest dominant share next (ties: its oldest waiting job); a
        # group's job that does not fit is skipped, so each waiting job is tried once per event.
        shares = {g: self.share(u) for g, u in group_usage.items()}
        heap = [(shares.get(g, 0.0), q[0].job.arrival, q[0].job.job_id, g) for g, q in queues.items()]
        heapq.heapify(heap)
        memo = FitMemo(ledger, self.shapes)
        fewest: dict[tuple[object, ...], int] = {}
        for q in queues.values():
            for jv in q:
                cfg = self.configs[jv.job.job_id]
                shape = memo.shape(jv.job, cfg)
                fewest[shape] = min(fewest.get(shape, 1 << 30), cfg.workers)
        while heap:
            _, _, _, group = heapq.heappop(heap)
            jv = queues[group].popleft()
            placed = memo.place(jv.job, self.configs[jv.job.job_id])
            if placed is not None:
                chosen.extend(placed)
                _add(group_usage[group], self._usage(jv.job, placed))
            elif memo.hopeless(fewest):
                break
            if queues[group]:
                head = queues[group][0].job
                heapq.heappush(heap, (self.share(group_usage[group]), head.arrival, head.job_id, group))
        return chosen

    def _elastic(self, ledger: Ledger, jobs: list[JobView], current: dict[str, list[Allocation]]) -> list[Allocation]:
        kept: list[Allocation] = []
        if not self.resize:
            # Fixed sizes (Zhou et al. (2): a job's y_jhm hold for its whole run): a running job keeps
            # what it has; only the waiting jobs share the free capacity below.
            waiting = []
            for jv in jobs:
                if jv.running and keep(ledger, jv.job, current[jv.job.job_id]):
                    kept.extend(current[jv.job.job_id])
                else:
                    waiting.append(jv)
            jobs = waiting
        # Start every job from nothing, then hand out one worker at a time to the lowest share.
        growing = {
            jv.job.job_id: _Growing([a.server for a in current.get(jv.job.job_id, []) if a.role == "worker"])
            for jv in jobs
        }
        by_id = {jv.job.job_id: jv.job for jv in jobs}
        heap = [(0.0, jv.job.arrival, jv.job.job_id) for jv in jobs]
        heapq.heapify(heap)
        memo = FitMemo(ledger, self.shapes)  # first workers that did not fit, per shape, this decision
        full_servers: dict[tuple[tuple[str, float], ...], _Full] = {}  # per worker demand: servers full for it
        while heap:
            _, arrival, job_id = heapq.heappop(heap)
            job = by_id[job_id]
            grown = growing[job_id]
            step = self._grow(ledger, memo, full_servers, job, self.configs[job_id], grown)
            if step is None:
                continue  # cannot grow any further
            grown.add(step)
            if len(step) == 1:  # one worker (of the job's one worker type): the same usage every time
                if grown.unit is None:
                    grown.unit = self._usage(job, step)
                _add(grown.usage, grown.unit)
            else:
                _add(grown.usage, self._usage(job, step))
            if grown.workers < job.max_workers():
                heapq.heappush(heap, (self.share(grown.usage), arrival, job_id))
        out = kept
        for job_id, grown in growing.items():
            merged: dict[tuple[str, str, str], int] = {}
            for a in grown.allocs:
                merged[(a.server, a.role, a.type)] = merged.get((a.server, a.role, a.type), 0) + a.count
            out += [Allocation(job_id, s, r, t, n) for (s, r, t), n in merged.items()]
        return out

    def _grow(
        self,
        ledger: Ledger,
        memo: FitMemo,
        full_servers: dict[tuple[tuple[str, float], ...], _Full],
        job: Job,
        cfg: Config,
        grown: _Growing,
    ) -> list[Allocation] | None:
        """Book one more worker (plus the PSs, for the first one); None if nothing fits."""
        allocs = grown.allocs
        if not allocs:
            first = memo.place(job, Config(cfg.worker_type, 1, cfg.ps_type, cfg.ps))
            return list(first) if first is not None else None
        # Servers found full for this demand stay full for the rest of the decision (the ledger only
        # fills): each is tested once per decision and demand, not once per worker handed out.
        if grown.full is None:
            grown.demand = demand_of(self.cluster, job, "worker", cfg.worker_type) or {}
            grown.reserve = reserves_ps_bandwidth(self.cluster, job)
            grown.full = full_servers.setdefault(tuple(sorted(grown.demand.items())), _Full())
        demand, known, reserve = grown.demand, grown.full, grown.reserve
        servers = self.cluster.servers
        if known.cursor == len(servers):  # every server is full for this demand: still no room
            return None
        # Prefer servers the job already uses (now or before this event), then cluster order.
        preferred = dict.fromkeys([*grown.servers, *grown.before])
        for server in preferred:
            if server in known.servers:
                continue
            if not ledger.fits(server, "worker", demand, 1):
                known.servers.add(server)
                continue
            step = self._one_worker(ledger, job, cfg, allocs, server, demand, reserve)
            if step is not None:
                return step
        leading = True  # every server of this scan so far was full: the cursor moves past them
        for i in range(known.cursor, len(servers)):
            server = servers[i].id
            if server in known.servers:
                if leading:
                    known.cursor = i + 1
                continue
            if server in preferred:  # tried above, and it had room
                leading = False
                continue
            if not ledger.fits(server, "worker", demand, 1):
                known.servers.add(server)
                if leading:
                    known.cursor = i + 1
                continue
            leading = False
            step = self._one_worker(ledger, job, cfg, allocs, server, demand, reserve)
            if step is not None:
                return step
        return None  # (if no server had room, the cursor is now past them all)

    def _one_worker(
        self,
        ledger: Ledger,
        job: Job,
        cfg: Config,
        allocs: list[Allocation],
        server: str,
        demand: Amounts,
        reserve: bool,
    ) -> list[Allocation] | None:
        """One more worker on ``server`` (where it fits), with the PSs it needs; None if they do not fit."""
        worker = Allocation(job.job_id, server, "worker", cfg.worker_type, 1)
        extra = self._more_ps(ledger, job, allocs, worker) if reserve else []
        if extra is None:
            return None
        ledger.take(server, "worker", demand, 1)
        return [worker, *extra]

    def _more_ps(
        self, ledger: Ledger, job: Job, allocs: list[Allocation], worker: Allocation
    ) -> list[Allocation] | None:
        """Zhou et al. (2i) for one more worker: the PSs (booked here) that the job's PS server needs
        in addition, [] if none, None if they do not fit there."""
        short = reservation_shortfall(self.cluster, job, [*allocs, worker])
        if short is None:
            return []
        server, excess = short
        ps_type = next(a.type for a in allocs if a.role == "ps" and a.server == server)
        bw = ps_bandwidth_of(self.cluster, ps_type)
        if bw <= 0:
            return None
        k = math.ceil(excess / bw - 1e-9)
        demand = demand_of(self.cluster, job, "ps", ps_type) or {}
        if not ledger.take(server, "ps", demand, k):
            return None
        return [Allocation(job.job_id, server, "ps", ps_type, k)]

    def _usage(self, job: Job, allocs: list[Allocation] | tuple[Allocation, ...]) -> dict[str, float]:
        total: dict[str, float] = {}
        for a in allocs:
            _add(total, {r: x * a.count for r, x in (demand_of(self.cluster, job, a.role, a.type) or {}).items()})
        return total

    def report(self) -> Mapping[str, Any]:
        return {}


class _RigidQueues:
    """Drf._rigid's walk with its state kept across events: each group's waiting jobs (by arrival)
    and each group's usage by its running jobs, updated by starts and completions. The walk serves
    the group with the smallest dominant share, one job at a time, from the committed ledger.

    A group's waiting jobs are kept per (shape, workers), each list in arrival order (ranks: the
    order the jobs started waiting, which is arrival order, as a group's queue is). FitMemo passes
    over a job whose shape already failed with as few workers (the ledger only fills during a
    walk), so a group's next job to try is the earliest, after the one just tried, of its lists
    whose (shape, workers) has not failed: the walk does not read the jobs passed over."""

    def __init__(self, owner: Drf, view: View) -> None:
        self.owner = owner
        self.jobs = {j.job_id: j for j in owner.instance.jobs}
        # group -> (shape, workers) -> ranks of its waiting jobs, in order
        self.queues: dict[str, dict[tuple[tuple[object, ...], int], list[int]]] = {}
        self.ids: dict[int, str] = {}  # rank -> waiting job
        self.rank: dict[str, int] = {}  # waiting job -> rank
        self.need: dict[str, tuple[tuple[object, ...], int]] = {}  # waiting job -> (shape, workers)
        self.added = 0
        self.usage: dict[str, dict[str, float]] = defaultdict(dict)  # group -> running jobs' usage
        self.held: dict[str, dict[str, float]] = {}  # running job -> its usage
        self.running: dict[str, int] = defaultdict(int)  # group -> running jobs
        arrived = {j.job_id for j in view.arrived}  # added by the first decide
        running = view.running()
        for jv in view.jobs:
            if jv.job.job_id in arrived:
                continue
            if jv.running:
                self._start(jv.job, running[jv.job.job_id])
            else:
                self._wait(jv.job)

    def _wait(self, job: Job) -> None:
        cfg = self.owner.configs[job.job_id]  # its shape and workers, fixed for its lifetime
        need = self.need[job.job_id] = (job_shape(self.owner.cluster, job, cfg, self.owner.shapes), cfg.workers)
        self.queues.setdefault(_group(job), {}).setdefault(need, []).append(self.added)  # (the largest rank)
        self.ids[self.added] = job.job_id
        self.rank[job.job_id] = self.added
        self.added += 1

    def _start(self, job: Job, allocs: tuple[Allocation, ...] | list[Allocation]) -> None:
        used = self.owner._usage(job, allocs)
        self.held[job.job_id] = used
        _add(self.usage[_group(job)], used)
        self.running[_group(job)] += 1

    def decide(self, view: View) -> Decision:
        for job_id in view.completed:
            used = self.held.pop(job_id)
            group = _group(self.jobs[job_id])
            self.running[group] -= 1
            if self.running[group]:
                _add(self.usage[group], {r: -a for r, a in used.items()})
            else:  # no running job left: forget the group (its share is 0, as for a new group)
                del self.running[group], self.usage[group]
        for job in view.arrived:
            self._wait(job)
        owner = self.owner
        ledger = view.committed_ledger()
        memo = FitMemo(ledger, owner.shapes)
        fewest: dict[tuple[object, ...], int] = {}  # shape -> the fewest workers a waiting job of it has
        for lists in self.queues.values():
            for shape, n in lists:
                fewest[shape] = min(n, fewest.get(shape, n))
        ids, rank, need, jobs, configs = self.ids, self.rank, self.need, self.jobs, owner.configs

        def next_of(lists: dict[tuple[tuple[object, ...], int], list[int]], after: int) -> int | None:
            """The group's earliest waiting job after rank ``after`` whose (shape, workers) has not
            failed (FitMemo.place's test): the next one the walk would try."""
            best = None
            for key, ranks in lists.items():
                if memo.skips(*key):
                    continue
                i = bisect_right(ranks, after)
                if i < len(ranks) and (best is None or ranks[i] < best):
                    best = ranks[i]
            return best

        heap = []
        for g, lists in self.queues.items():  # groups with waiting jobs only
            head = jobs[ids[min(ranks[0] for ranks in lists.values())]]  # (nothing failed yet)
            heap.append((owner.share(self.usage.get(g, {})), head.arrival, head.job_id, g))
        heapq.heapify(heap)
        changes: dict[str, tuple[Allocation, ...]] = {}
        while heap:
            share, _, job_id, group = heapq.heappop(heap)
            job = jobs[job_id]
            if not memo.skips(*need[job_id]):  # (it may have failed since it was pushed)
                placed = memo.place(job, configs[job_id])
                if placed is not None:
                    changes[job_id] = placed
                    self._start(job, placed)
                    share = owner.share(self.usage[group])  # (a job not placed leaves it as it was)
                elif memo.hopeless(fewest):  # (only a failed attempt can make it so)
                    break
            nxt = next_of(self.queues[group], rank[job_id])
            if nxt is not None:
                head = jobs[ids[nxt]]
                heapq.heappush(heap, (share, head.arrival, head.job_id, group))
        for job_id in changes:  # placed: they wait no more
            group, key, r = _group(jobs[job_id]), need.pop(job_id), rank.pop(job_id)
            lists = self.queues[group]
            ranks = lists[key]
            del ranks[bisect_left(ranks, r)], ids[r]
            if not ranks:
                del lists[key]
                if not lists:
                    del self.queues[group]
        return Decision(changes=changes)


class _ElasticWaiting:
    """Drf._elastic with fixed sizes on traces of elastic jobs only, with the waiting jobs kept
    across events (by arrival). A running job keeps what it has: its committed allocation is
    booked in the committed ledger (which the engine checked, so re-booking every running job, as
    the full path does, always succeeds), and only the waiting jobs are filled, from that ledger.
    A started job never waits again (fixed sizes stop no job). tests/test_fast_twins.py
    compares it with decide_full."""

    def __init__(self, owner: Drf, view: View) -> None:
        self.owner = owner
        arrived = {j.job_id for j in view.arrived}  # added by the first decide
        self.waiting: dict[str, None] = {}  # in (arrival, job id) order, as view.jobs
        for jv in view.jobs:
            if not jv.running and jv.job.job_id not in arrived:
                self.waiting[jv.job.job_id] = None

    def decide(self, view: View) -> Decision:
        for job in view.arrived:
            self.waiting[job.job_id] = None
        if not self.waiting:
            return UNCHANGED
        jobs = [view.job(job_id) for job_id in self.waiting]
        changes: dict[str, list[Allocation]] = defaultdict(list)
        for a in self.owner._elastic(view.committed_ledger(), jobs, {}):
            changes[a.job_id].append(a)
        for job_id in changes:
            del self.waiting[job_id]
        return Decision(changes={job_id: tuple(allocs) for job_id, allocs in changes.items()})


class _Full:
    """The servers where one worker demand no longer fits, within one decision of Drf._elastic:
    ``servers``, and ``cursor``, the cluster-order index before which every server is full (at the
    end of the cluster: the demand fits nowhere any more)."""

    def __init__(self) -> None:
        self.cursor = 0
        self.servers: set[str] = set()


class _Growing:
    """One job's allocation as progressive filling builds it in a decision (``Drf._elastic``), with
    what each step reads kept as it grows (recounting them per step made a decision quadratic in a
    job's workers: thousands of one-worker steps per job on the edge-cloud paper's unlimited cloud)."""

    def __init__(self, before: list[str]) -> None:
        self.allocs: list[Allocation] = []  # every step's allocations, in booking order
        self.servers: dict[str, None] = {}  # the servers of ``allocs``, in order of first use
        self.before = before  # the servers of the job's workers before this event
        self.workers = 0  # workers in ``allocs``
        self.usage: dict[str, float] = {}  # resources of ``allocs`` (for the dominant share)
        self.unit: dict[str, float] | None = None  # resources of one worker, once a step added one alone
        # From its second step: its worker demand, whether it reserves PS bandwidth, and where that
        # demand is known not to fit (shared by the jobs of the same demand)
        self.demand: Amounts = {}
        self.reserve = False
        self.full: _Full | None = None

    def add(self, step: list[Allocation]) -> None:
        self.allocs.extend(step)
        for a in step:
            self.servers.setdefault(a.server)
            if a.role == "worker":
                self.workers += a.count


def _add(into: dict[str, float], amounts: Amounts) -> None:
    for r, a in amounts.items():
        into[r] = into.get(r, 0.0) + a


def _group(job: Job) -> str:
    return job.group or job.user or job.job_id
