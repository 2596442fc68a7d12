"""Ties of a list scheduler's sort key broken as the Tiresias authors' loop breaks them (srtf)."""

from __future__ import annotations


class PreviousOrder:
    """Ties of the sort key broken as a stable re-sort at every decision breaks them: in the order
    of the previous decision, as the Tiresias authors' simulator does (it sorts its list of jobs in
    place at every event with Python's stable ``sort``, new jobs appended in trace order;
    SymbioticLab/Tiresias at 959f9b0, simulator/run_sim.py ``shortest_first_sim_jobs``, lines
    642-667).

    Under a key that falls by one per slot while a job runs and stays while it waits (srtf's
    remaining time on rigid jobs), that order is a function of each job's history of starts and
    stops, so it needs no list kept in order across decisions. Two jobs tied now had equal keys
    back to the last moment where exactly one of them ran (or had not arrived yet); just before it,
    the one that waited had the smaller key, and a job not yet arrived the largest. So, looking
    back from now, the first moment their histories differ decides, in the order waiting < running
    < not yet arrived (``tie``; docs/algorithms.md, srtf). Jobs arrived at this decision (not in the
    list before it) come after every tied job that was; among themselves, in trace order.

    ``record`` keeps per job the slots its state changed: its first decision, then each start and
    stop. Where a running job's key falls at another speed (a restart period, co-location), the same
    rule is applied to the history of waiting and running, which is then no longer exactly the
    previous order.
    """

    def __init__(self) -> None:
        self.t = 0  # the current decision's slot
        self.changes: dict[str, list[int]] = {}  # job id -> first decision, then start, stop, ...
        self._ties: dict[str, tuple[int, ...]] = {}  # job id -> its tie since its last change
        # job id -> (n, the tie's components for its first n changes): a change adds components in
        # front of those of the changes before it, so a tie is extended, not walked again (a job
        # preempted hundreds of times on a congested window has as many changes)
        self._tails: dict[str, tuple[int, tuple[int, ...]]] = {}

    def record(self, job_id: str, t: int) -> None:
        """The job arrives (first call), or starts or stops at slot ``t``."""
        self.changes.setdefault(job_id, []).append(t)
        self._ties.pop(job_id, None)

    def forget(self, job_id: str) -> None:
        self.changes.pop(job_id, None)
        self._ties.pop(job_id, None)
        self._tails.pop(job_id, None)

    def running(self, job_id: str) -> bool:
        return len(self._history(job_id)) % 2 == 0

    def _history(self, job_id: str) -> list[int]:
        ch = self.changes.get(job_id)
        if ch is None:  # first seen now (a view that showed it later than its arrival): a new job
            ch = self.changes[job_id] = [self.t]
        return ch

    def tie(self, job_id: str, arrival: int) -> tuple[int, ...]:
        """The key's tie-break components of an active job (compared after the key's own)."""
        cached = self._ties.get(job_id)
        if cached is not None:
            return cached
        ch = self._history(job_id)
        if len(ch) == 1 and ch[0] == self.t:
            return (2, arrival)  # not in the list before this decision: after every job that was
        done, tail = self._tails.get(job_id, (0, ()))
        for n in range(done + 1, len(ch) + 1):
            tail = _components(ch, n, tail, arrival)
        self._tails[job_id] = (len(ch), tail)
        tie = self._ties[job_id] = (1 if len(ch) % 2 == 0 else 0, *tail)
        return tie


def _components(ch: list[int], n: int, before: tuple[int, ...], arrival: int) -> tuple[int, ...]:
    """The tie components of a job's first ``n`` changes, from ``before``, those of its first n - 1.

    Back from now: a waiting segment since c sorts earlier the earlier c (the other job ran or had
    not arrived since); a running one since c sorts earlier the later c when a wait came before it
    (the other job still ran), after every such one when its start was the job's arrival (before
    it: not arrived); equal change slots: the segments before decide."""
    c = ch[n - 1]
    if n == 1:  # waiting since its arrival
        return (c, 1, arrival)
    if n == 2 and ch[0] == c:  # running since its arrival: nothing before it counts
        return (1, c, arrival)
    if n % 2 == 0:  # running since c (a start)
        return (0, -c, *before)
    return (c, 0, *before)  # waiting since c (a stop), running before
