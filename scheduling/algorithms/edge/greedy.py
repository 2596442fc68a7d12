"""A_greedy of the edge-cloud paper (seeds/003, Sec. IV-C, Algs. 2-4): per-worker chunk queues and Q_jdsw.

Every pre-deployed edge worker keeps the data chunks dispatched to it in a queue ordered by the
highest-average-processing-rate-first (HAPRF) rule: gamma_jd = n_jsw / (E_j D_j B_j), larger first,
ties in dispatch order. At every slot the worker trains the first chunk of its queue whose data has
arrived (slot >= r_j + upload delay); a newly dispatched chunk with a larger gamma therefore
preempts the chunks behind it, which are postponed by its processing time (Alg. 4 lines 3-7). A
chunk never leaves the worker it was dispatched to (no data migration).

Processing times are whole slots: a chunk holds its worker for ceil(E_j B_j / n_jsw) slots
(``scheduling.speed.chunk_slots``; constraint (4a) with binary y_jdsw(t)).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class Chunk:
    """One data chunk d of job j, dispatched to one edge worker."""

    job_id: str
    index: int  # d, 0-based
    gamma: float  # gamma_jd = n_jsw / (E_j D_j B_j), the HAPRF priority (larger first)
    weight: float  # mu_jd = 1 / D_j, the chunk's average weight
    release: int  # r_j + upload delay: first slot the chunk's data is on the server
    remaining: int  # p_hat_jd: slots of training left
    seq: int  # global dispatch order; ties in gamma go to the earlier chunk

    def order(self) -> tuple[float, int]:
        return (-self.gamma, self.seq)


@dataclass(frozen=True)
class Pending:
    """A chunk pending on a worker at t0, as eq. (5) sees it."""

    gamma: float  # gamma_j'd'
    remaining: int  # p_hat_j'd'(t0), slots
    chunks: int  # D_j'


@dataclass
class WorkerQueue:
    """The pending chunks of one edge worker w on server s, in HAPRF order (Sec. IV-C)."""

    server: str
    type: str  # the worker's type: which jobs it can serve (v_jsw)
    index: int  # which of the server's workers of this type
    upload_delay: int  # Delta_js for this server, slots
    chunks: list[Chunk] = field(default_factory=list)
    _keys: list[tuple[float, int]] = field(default_factory=list)

    def insert(self, chunk: Chunk) -> None:
        """HAPRF insertion (Alg. 3 line 10, Alg. 4 lines 2-7): behind every chunk with gamma >= its own,
        ahead of every chunk with a smaller gamma (those are postponed by its processing time)."""
        key = chunk.order()
        i = bisect.bisect_left(self._keys, key)
        self._keys.insert(i, key)
        self.chunks.insert(i, chunk)

    def running(self, t: int) -> Chunk | None:
        """The chunk the worker trains in slot ``t``: the first of the queue whose data has arrived."""
        for c in self.chunks:
            if c.release <= t:
                return c
        return None

    def next_change(self, t: int) -> int | None:
        """The first slot after ``t`` at which the worker switches chunk (a finish or a release)."""
        best: int | None = None
        for c in self.chunks:
            if c.release <= t:
                end = t + c.remaining
                return end if best is None else min(best, end)
            best = c.release if best is None else min(best, c.release)
        return best

    def advance(self, chunk: Chunk | None, span: int) -> Chunk | None:
        """Train ``chunk`` (the one running since the last decision) for ``span`` slots.

        Returns it if it finished (and drops it from the queue)."""
        if chunk is None or span <= 0:
            return None
        chunk.remaining -= span
        assert chunk.remaining >= 0, "a worker ran past a chunk's end without a decision"
        if chunk.remaining == 0:
            i = self.chunks.index(chunk)
            del self.chunks[i], self._keys[i]
            return chunk
        return None

    def finish_slots(self, t: int) -> dict[int, int]:
        """id(chunk) -> the slot each pending chunk's training ends if the worker keeps following HAPRF
        from ``t`` with no new chunk (used once the run is over, for what it left running)."""
        left = {id(c): c.remaining for c in self.chunks}
        done: dict[int, int] = {}
        cur = t
        while len(done) < len(self.chunks):
            first = next((c for c in self.chunks if id(c) not in done and c.release <= cur), None)
            later = [c.release for c in self.chunks if id(c) not in done and c.release > cur]
            if first is None:
                cur = min(later)
                continue
            nxt = min([cur + left[id(first)], *(r for r in later if r < cur + left[id(first)])])
            left[id(first)] -= nxt - cur
            cur = nxt
            if left[id(first)] == 0:
                done[id(first)] = cur
        return done

    def project(self, t: int, t0: int) -> list[tuple[Chunk, int]]:
        """A(t0): the chunks still pending at ``t0`` and their remaining slots p_hat(t0), if the worker
        keeps following HAPRF from ``t`` with no new chunk (the paper's t0 = r_j + Delta_js)."""
        left = {id(c): c.remaining for c in self.chunks}
        cur = t
        while cur < t0:
            first_released = None
            wake = t0
            for c in self.chunks:
                if left[id(c)] <= 0:
                    continue
                if c.release <= cur:
                    first_released = c
                    break
                wake = min(wake, c.release)
            if first_released is None:
                later = [c.release for c in self.chunks if left[id(c)] > 0 and c.release > cur]
                if not later:
                    break
                cur = min(t0, *later)
                continue
            nxt = min(cur + left[id(first_released)], wake)
            left[id(first_released)] -= nxt - cur
            cur = nxt
        return [(c, left[id(c)]) for c in self.chunks if left[id(c)] > 0]


@dataclass(frozen=True)
class QTerms:
    """Eq. (5) term by term, for one chunk d of job j on one worker w of server s."""

    dispatch: float  # (1/D_j) Delta_js
    waiting: float  # (1/D_j) sum over d' in A(t0) with gamma_j'd' >= gamma_jd of p_hat_j'd'(t0)
    processing: float  # (1/D_j) E_j B_j / n_jsw
    postponed: float  # (E_j B_j / n_jsw) sum over d' in A(t0) with gamma_j'd' < gamma_jd of 1/D_j'

    @property
    def total(self) -> float:
        return self.dispatch + self.waiting + self.processing + self.postponed


def q_edge(delta: int, chunks: int, slots: int, gamma: float, pending: Iterable[Pending]) -> QTerms:
    """Q_jdsw of eq. (5) for an edge worker (Alg. 3 lines 10-12).

    ``delta`` = Delta_js, ``chunks`` = D_j, ``slots`` = E_j B_j / n_jsw (whole slots), ``gamma`` =
    gamma_jd and ``pending`` = A(t0) with t0 = r_j + Delta_js. A1 (gamma' >= gamma) waits ahead of
    the chunk; A2 (gamma' < gamma) is postponed by it.
    """
    a1 = a2 = 0.0
    for p in pending:
        if p.gamma >= gamma:
            a1 += p.remaining
        else:
            a2 += 1.0 / p.chunks
    return QTerms(delta / chunks, a1 / chunks, slots / chunks, slots * a2)


def q_cloud(delta: int, chunks: int, slots: int) -> QTerms:
    """Q_jdsw for the cloud (Alg. 3 line 8): dispatch and processing terms only (no queue, no preemption)."""
    return QTerms(delta / chunks, 0.0, slots / chunks, 0.0)


def start_slot(queue: WorkerQueue, t: int, t0: int, gamma: float) -> int:
    """t* of Alg. 3 lines 10-11: when the new chunk would start, max(t0 + sum of A1's p_hat(t0), t0)."""
    ahead = sum(r for c, r in queue.project(t, t0) if c.gamma >= gamma)
    return max(t0 + ahead, t0)
