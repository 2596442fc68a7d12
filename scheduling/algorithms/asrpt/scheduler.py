"""Algorithm 1 of Luo et al. (A-SRPT); its list baselines of Sec. V-A are in ``baselines``.

It is non-preemptive: a started job keeps its GPUs (and its Heavy-Edge mapping) until it
completes. The engine wakes the scheduler at arrivals and completions; A-SRPT also asks to be woken
when a job completes in the virtual single machine or a communication-heavy job's delay ends, so
that "proceed to the next time slot" (line 25) costs nothing while nothing changes.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Mapping
from typing import Any, Literal, get_args

from scheduling.algorithms.asrpt.cluster import Gpus, Profile, mapping
from scheduling.engine import Decision, View
from scheduling.model import Instance
from scheduling.speed import Allocation

Release = Literal["completion", "arrival"]
"""When a job joins A-SRPT's ``pending_queue`` (Asrpt)."""
RELEASES: tuple[Release, ...] = get_args(Release)


class _NonPreemptive:
    """Keeps the running jobs' allocations and the free GPUs between events.

    A decision names only the jobs started at this event (``Decision.changes``): the engine keeps
    every other job's allocation, so an event costs in proportion to what starts and completes, not
    to what runs. The other data structures are incremental too (servers bucketed by free GPUs,
    Heavy-Edge plans reused per demand shape, heaps for the waiting jobs).

    ``readable`` selects the plain transcription instead: the complete allocation at every event
    (the engine's original interface), servers sorted at every placement, Heavy-Edge run at every
    placement, the waiting jobs walked in full. tests/test_fast_twins.py checks that both paths
    give the same schedule on random instances.
    """

    def __init__(
        self, instance: Instance, profiles: dict[str, Profile], report: Mapping[str, Any], readable: bool = False
    ) -> None:
        self.profiles = profiles
        self.gpus = Gpus(instance.cluster, fast=not readable)
        self.running: dict[str, tuple[Allocation, ...]] = {}
        self.readable = readable
        self._started: dict[str, tuple[Allocation, ...]] = {}  # jobs started at this event
        self._report = dict(report)

    def sync(self, view: View) -> None:
        """Give back the GPUs of jobs that completed since the last event (``view.completed``;
        non-preemptive: a job that holds GPUs loses them only by completing)."""
        self._started = {}
        for job_id in view.completed:
            allocs = self.running.pop(job_id, None)
            if allocs is not None:
                self.gpus.release(allocs)

    def start(self, job_id: str, allocations: tuple[Allocation, ...]) -> None:
        self.gpus.take(allocations)
        self.running[job_id] = allocations
        self._started[job_id] = allocations

    def decision(self, wake_at: int | None = None) -> Decision:
        """The jobs started at this event, or (readable) the complete allocation."""
        if self.readable:
            every = tuple(a for allocs in self.running.values() for a in allocs)
            return Decision(allocations=every, wake_at=wake_at)
        return Decision(changes=self._started, wake_at=wake_at)

    def report(self) -> Mapping[str, Any]:
        return self._report


class VirtualSRPT:
    """The single-machine instance A~_1 (Sec. IV-C-1), scheduled by preemptive SRPT.

    Job i arrives at r_i with processing time g_i/G * n~_i * alpha~_i^min (slots); its completion
    order is A-SRPT's ``pending_queue`` order. Ties go to the earlier arrival, then the job id.
    """

    def __init__(self) -> None:
        self.now = 0.0
        self.heap: list[tuple[float, int, str]] = []  # (remaining, arrival, job id)
        self.done: deque[str] = deque()

    def add(self, job_id: str, arrival: int, size: float) -> None:
        heapq.heappush(self.heap, (size, arrival, job_id))

    def advance(self, t: float) -> None:
        """Run SRPT up to time ``t``; completed jobs go to ``done`` in completion order."""
        while self.heap and (self.now < t or self.heap[0][0] <= 0):
            rem, arrival, job_id = heapq.heappop(self.heap)
            if self.now + rem <= t:
                self.now += rem
                self.done.append(job_id)
            else:
                heapq.heappush(self.heap, (rem - (t - self.now), arrival, job_id))
                self.now = t
        self.now = max(self.now, t)

    def next_completion(self) -> float | None:
        return self.now + self.heap[0][0] if self.heap else None


class _VirtualOrder:
    """``pending_queue`` with release=arrival, read only as far as Alg. 1 takes it: the virtually
    completed jobs (``pending``), then the virtual machine's jobs by (remaining, arrival, job id),
    skipping those already popped. The heap is walked through its tree with a frontier heap, so
    reading k jobs costs O(k log k) instead of sorting the whole machine at every event."""

    def __init__(self, pending: deque[str], heap: list[tuple[float, int, str]], popped: set[str]) -> None:
        self.pending, self.heap, self.popped = pending, heap, popped
        self.i = 0  # jobs of ``pending`` taken
        self.frontier: list[tuple[tuple[float, int, str], int]] = [(heap[0], 0)] if heap else []
        self.taken: list[str] = []  # popped at line 7, in order

    def _expand(self) -> None:
        _entry, i = heapq.heappop(self.frontier)
        for c in (2 * i + 1, 2 * i + 2):
            if c < len(self.heap):
                heapq.heappush(self.frontier, (self.heap[c], c))

    def _head(self) -> str | None:
        if self.i < len(self.pending):
            return self.pending[self.i]
        while self.frontier:
            job_id = self.frontier[0][0][2]
            if job_id not in self.popped:
                return job_id
            self._expand()
        return None

    def __bool__(self) -> bool:
        return self._head() is not None

    def __getitem__(self, k: int) -> str:
        head = self._head()
        assert k == 0 and head is not None
        return head

    def popleft(self) -> str:
        head = self[0]
        if self.i < len(self.pending):
            self.i += 1
        else:
            self._expand()
        self.taken.append(head)
        return head


class Asrpt(_NonPreemptive):
    """Algorithm 1 (A-SRPT).

    ``release`` is when a job joins ``pending_queue`` (see docs/algorithms-asrpt.md):
    ``completion`` (literal line 2) when it completes on the virtual single machine; ``arrival``
    on arrival, the queue ordered as the virtual machine would complete the jobs it holds now
    (those already completed there first, in completion order, then the rest by remaining virtual
    time: SRPT's completion order if nothing else arrived).
    """

    def __init__(
        self,
        instance: Instance,
        profiles: dict[str, Profile],
        comm_heavy: float,
        tau: float,
        release: Release,
        report: Mapping[str, Any],
        readable: bool = False,
    ) -> None:
        if release not in RELEASES:  # any other string once ran release=completion silently
            raise ValueError(f"release {release!r}: one of {', '.join(RELEASES)}")
        super().__init__(instance, profiles, report, readable)
        self.comm_heavy = comm_heavy  # COMM_HEAVY
        self.tau = tau  # delay factor
        self.release = release
        self.vm = VirtualSRPT()
        self.pending: deque[str] = deque()  # pending_queue
        self.popped: set[str] = set()  # jobs popped from pending_queue (line 7) still on the virtual machine
        self.delayed: tuple[str, float, int] | None = None  # (job, kappa, last slot of its delay)

    def decide(self, view: View) -> Decision:
        t = view.t
        self.sync(view)
        # Line 2: append the jobs completed in A~_1 (SRPT on the virtual single machine).
        self.vm.advance(t)
        for job in view.arrived:
            p = self.profiles[job.job_id]
            self.vm.add(job.job_id, job.arrival, p.gpus / self.gpus.total * p.predicted * p.alpha_min)
        self.vm.advance(t)
        while self.vm.done:
            job_id = self.vm.done.popleft()
            if job_id in self.popped:
                self.popped.discard(job_id)
            else:
                self.pending.append(job_id)
        if self.release == "arrival":
            if self.readable:
                order = [*self.pending, *(j for _rem, _arr, j in sorted(self.vm.heap) if j not in self.popped)]
                queue = deque(order)
                self._schedule(t, queue)
                taken = order[: len(order) - len(queue)]  # popped at line 7 (the queue's head)
            else:
                lazy = _VirtualOrder(self.pending, self.vm.heap, self.popped)
                self._schedule(t, lazy)
                taken = lazy.taken
            done_virtually = min(len(taken), len(self.pending))
            for _ in range(done_virtually):
                self.pending.popleft()
            self.popped.update(taken[done_virtually:])
            wake_virtual = None  # SRPT keeps the relative order of present jobs: it changes only at arrivals
        else:
            self._schedule(t, self.pending)
            wake_virtual = self._virtual_wake(t)
        wake = [w for w in (wake_virtual, self.delayed[2] if self.delayed else None) if w is not None]
        return self.decision(min(wake) if wake else None)

    def _virtual_wake(self, t: int) -> int | None:
        nxt = self.vm.next_completion()
        return None if nxt is None else max(t + 1, math.ceil(nxt - 1e-9))

    def _schedule(self, t: int, pending: deque[str] | _VirtualOrder) -> None:
        if self.delayed is not None and not self._retry_delayed(t):
            return  # lines 16-19: still waiting for a better placement; the queue waits too
        while pending:  # line 3
            job_id = pending[0]  # line 4
            p = self.profiles[job_id]
            if p.gpus > self.gpus.available:  # line 5
                return  # line 25: next time slot
            pending.popleft()  # line 7
            if p.comm_ratio >= self.comm_heavy:  # line 8: communication-heavy
                allocs, a = mapping(p, self.gpus.select(p.gpus, "most"), self.gpus)  # lines 9-11
                if a / p.alpha_min <= self.comm_heavy:  # line 12
                    self.start(job_id, allocs)  # line 13
                    continue
                window = self.tau * p.gpus / self.gpus.total * p.predicted * p.alpha_min  # line 16
                last = t + math.floor(window + 1e-9)
                if last <= t:
                    self.start(job_id, allocs)  # empty delay loop: line 20
                    continue
                self.delayed = (job_id, a, last)  # line 15: kappa = alpha
                return
            allocs, _ = mapping(p, self.gpus.select(p.gpus, "least"), self.gpus)  # lines 22-23
            self.start(job_id, allocs)

    def _retry_delayed(self, t: int) -> bool:
        """Lines 16-20 at slot ``t``: start the delayed job if its alpha beats kappa or its delay is
        over; True once it has started. Only completions free GPUs while it waits (nothing else
        starts), so its g_i GPUs stay available."""
        assert self.delayed is not None
        job_id, kappa, last = self.delayed
        p = self.profiles[job_id]
        allocs, a = mapping(p, self.gpus.select(p.gpus, "most"), self.gpus)  # line 17
        if a < kappa or t >= last:  # lines 18-20
            self.start(job_id, allocs)
            self.delayed = None
            return True
        return False
