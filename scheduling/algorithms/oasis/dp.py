"""OASiS Alg. 2 (seeds/001, Sec. IV-C): the best schedule of one job under the current prices.

Two implementations of the same function, ``best_schedule``:

* ``best_schedule_transcribed``: the paper's pseudo-code as written. Alg. 2 lines 1-9 enumerate
  the completion slot; ``DP_COST`` (lines 10-20) is the recursion
  cost(T, D) = min_d COST_t(T, d) + cost(T - 1, D - d), memoised as the paper says ("we always
  store the results of COST_t(t, d) and DP_COST(T_i, D_i)"); ``COST_t`` (lines 21-41) places the
  workers greedily on the cheapest worker servers and the PSs on the cheapest PS servers.
  O(T W^2) for a workload of W units: only usable on small instances (tests, bench reference).
* ``best_schedule_fast``: the same optimum and the same choices, computed as a forward DP over the
  slots with numpy. COST_t(t, d) depends on d only through the worker count y = ceil(d u)
  (line 24), so per slot it is a table C_t(y), y = 0..N_i, and the DP over the workload runs
  over at most N_i + 1 choices per slot instead of W + 1. The table F_t[w] is the cheapest cost of
  at least w units in slots a_i..t; it equals the paper's "exactly w" cost because C_t is
  non-decreasing in y (proof in docs/algorithms-oasis.md). The enumeration of completion slots stops
  once the utility f_i(t - a_i) can no longer beat the best payoff found (costs are >= 0 and f_i is
  non-increasing). The schedule is rebuilt from the stored tables with the transcription's own
  tie rule, so both return the same schedule (tests/test_oasis.py).

Tie rule (both implementations): the paper keeps the first candidate that is strictly better
("if min_cost > cost_t + cost", "if mu_il > mu_i"), i.e. the smallest d and the earliest
completion slot among equal ones. Floating-point sums of equal costs may differ in the last bits,
so "equal" means within a relative tolerance ``TOL``: the smallest d (earliest slot) whose value is
within TOL of the minimum (maximum) is kept.

Units (see docs/algorithms-oasis.md): slots are 0-based, slot t covers [t, t + 1); a job that ends
in slot t has JCT t + 1 - a_i (the project's end-exclusive completion), so the utility of a
completion slot t is f_i(t + 1 - a_i). A work unit is one of the engine's work units (the preset's
E_i N_i units); one worker does ``rate`` units per slot (speed.rate, the asynchronous model (2)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from scheduling.model import Utility

INF = math.inf
TOL = 1e-9  # relative tolerance for "equal" costs and payoffs
EPS = 1e-9  # slack for floors/ceilings of quotients that are integers in exact arithmetic


@dataclass(frozen=True)
class JobShape:
    """What Alg. 2 needs of job i (Table I)."""

    job_id: str
    arrival: int  # a_i, slot
    work: int  # D_i = E_i N_i: the training workload in work units
    rate: float  # work units one worker does per slot: 1 / (M_i (tau_i + 2 e_i / b_i))
    max_workers: int  # N_i of constraint (3)
    w: np.ndarray  # w_i^r per resource of the worker servers' resource list
    s: np.ndarray  # s_i^r per resource
    ratio: float  # b_i / B_i: PSs needed per worker by (6)
    utility: Utility

    def workers_needed(self, d: int) -> int:
        """Alg. 2 line 24: D = ceil(d M_i (tau_i + 2 e_i / b_i)) workers to do d units in one slot."""
        return max(0, math.ceil(d / self.rate - EPS))

    def f(self, jct: int) -> float:
        return self.utility.value(jct)


@dataclass
class Book:
    """Alg. 1's state: capacities c, allocated amounts g (worker servers) and v (PS servers),
    prices p and q, per (server, resource, slot). Worker and PS servers share one resource list."""

    cap_w: np.ndarray  # (H, R) c_h^r
    cap_p: np.ndarray  # (K, R) c_k^r
    horizon: int  # T
    g: np.ndarray = field(init=False)  # (H, R, T)
    v: np.ndarray = field(init=False)  # (K, R, T)
    p: np.ndarray = field(init=False)  # (H, R, T)
    q: np.ndarray = field(init=False)  # (K, R, T)

    def __post_init__(self) -> None:
        h, r = self.cap_w.shape
        k = self.cap_p.shape[0]
        self.g = np.zeros((h, r, self.horizon))
        self.v = np.zeros((k, r, self.horizon))
        self.p = np.zeros((h, r, self.horizon))
        self.q = np.zeros((k, r, self.horizon))


@dataclass(frozen=True)
class Schedule:
    """A job's schedule l: completion slot, payoff and per-slot worker/PS counts per server."""

    completion: int  # t_hat, the last slot the job runs in
    payoff: float  # mu_il = f_i(t_hat + 1 - a_i) - cost
    cost: float
    slots: dict[int, tuple[tuple[int, ...], tuple[int, ...]]]  # t -> (y_h for h, z_k for k)


# ---- shared per-slot quantities (the sort keys of lines 23/32 and the capacities of (30)/(31)) --


def unit_costs(prices: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """sum_r p_h^r(t) w_i^r for every server (line 23; line 32 with q and s)."""
    out: np.ndarray = (prices * demand).sum(axis=1)
    return out


def fits(cap: np.ndarray, used: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """min_r floor((c^r - g^r(t)) / w_i^r) for every server ((30), (31)); resources with w^r = 0
    do not limit. Never negative."""
    n = np.full(cap.shape[0], 1 << 30, dtype=np.int64)
    for r in np.nonzero(demand > 0)[0]:
        n = np.minimum(n, np.floor((cap[:, r] - used[:, r]) / demand[r] + EPS).astype(np.int64))
    return np.maximum(n, 0)


def ps_needed(job: JobShape, workers: int) -> int:
    """ceil(Y b_i / B_i): the fewest PSs that satisfy (6) for Y workers."""
    return max(0, math.ceil(workers * job.ratio - EPS))


def first_within(values: np.ndarray | list[float], best: float, larger: bool = False) -> int:
    """Index of the first value within TOL of ``best`` (the minimum, or the maximum if ``larger``)."""
    arr = np.asarray(values, dtype=float)
    tol = TOL * abs(best)
    hits = np.flatnonzero(arr >= best - tol) if larger else np.flatnonzero(arr <= best + tol)
    return int(hits[0])


# ---- the transcription ------------------------------------------------------------------------


def cost_t(book: Book, job: JobShape, t: int, d: int) -> tuple[float, tuple[int, ...], tuple[int, ...]]:
    """Alg. 2 COST_t(t, d), lines 21-41: cheapest workers and PSs that do d units in slot t."""
    n_h, n_k = book.cap_w.shape[0], book.cap_p.shape[0]
    y = [0] * n_h  # line 22
    z = [0] * n_k
    a = unit_costs(book.p[:, :, t], job.w)
    order = sorted(range(n_h), key=lambda h: (a[h], h))  # line 23
    fit_w = fits(book.cap_w, book.g[:, :, t], job.w)
    need = job.workers_needed(d)  # line 24
    for h in order:  # lines 25-28
        y[h] = max(0, min(int(fit_w[h]), job.max_workers - sum(y), need))
        need -= y[h]
    if need > 0:  # lines 29-31: not all workload can be handled
        return INF, tuple(y), tuple(z)
    workers = sum(y)
    b = unit_costs(book.q[:, :, t], job.s)
    order_k = sorted(range(n_k), key=lambda k: (b[k], k))  # line 32
    fit_p = fits(book.cap_p, book.v[:, :, t], job.s)
    for k in order_k:  # lines 33-35
        z[k] = max(0, min(int(fit_p[k]), ps_needed(job, workers) - sum(z), workers - sum(z)))
    if sum(z) < job.ratio * workers - EPS:  # lines 36-38: not enough PSs
        return INF, tuple(y), tuple(z)
    # line 39, summed in the sorted order (the fast path sums in the same order)
    cost_w = 0.0
    for h in order:
        cost_w += a[h] * y[h]
    cost_p = 0.0
    for k in order_k:
        cost_p += b[k] * z[k]
    return cost_w + cost_p, tuple(y), tuple(z)  # line 40


class _Transcription:
    """DP_COST with the memo tables the paper describes (Sec. IV-C, after Alg. 2)."""

    def __init__(self, book: Book, job: JobShape) -> None:
        self.book, self.job = book, job
        self.memo_t: dict[tuple[int, int], tuple[float, tuple[int, ...], tuple[int, ...]]] = {}
        self.memo: dict[tuple[int, int], tuple[float, int]] = {}  # (T_i, D_i) -> (min cost, chosen d)

    def cost_t(self, t: int, d: int) -> tuple[float, tuple[int, ...], tuple[int, ...]]:
        key = (t, d)
        if key not in self.memo_t:
            self.memo_t[key] = cost_t(self.book, self.job, t, d)
        return self.memo_t[key]

    def dp_cost(self, t_i: int, d_i: int) -> float:
        """DP_COST(T_i, D_i), lines 10-20; returns the min cost and remembers the chosen d.

        Base case (not spelled out in the paper): with no slot left (T_i < a_i) the cost is 0 for
        no workload and infinite otherwise."""
        if t_i < self.job.arrival:
            return 0.0 if d_i == 0 else INF
        key = (t_i, d_i)
        if key in self.memo:
            return self.memo[key][0]
        totals = []
        for d in range(d_i + 1):  # line 12
            c_t = self.cost_t(t_i, d)[0]  # line 13
            c = self.dp_cost(t_i - 1, d_i - d)  # line 14
            totals.append(c_t + c)
        best = min(totals)  # lines 15-17: the first strictly smaller value is kept
        chosen = first_within(totals, best) if best < INF else 0
        self.memo[key] = (best, chosen)
        return best

    def schedule(self, t_hat: int, d_i: int) -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
        """l of line 16: the y(t), z(t) of the chosen d in every slot, from the memo."""
        out = {}
        for t in range(t_hat, self.job.arrival - 1, -1):
            d = self.memo[(t, d_i)][1]
            _, y, z = self.cost_t(t, d)
            if any(y):
                out[t] = (y, z)
            d_i -= d
        return out


def best_schedule_transcribed(book: Book, job: JobShape) -> Schedule | None:
    """Alg. 2 lines 1-9: the schedule with the largest payoff, or None if no payoff is positive."""
    dp = _Transcription(book, job)
    payoffs: list[float] = []
    costs: list[float] = []
    for t_hat in range(job.arrival, book.horizon):  # line 2
        cost = dp.dp_cost(t_hat, job.work)  # line 3
        costs.append(cost)
        payoffs.append(job.f(t_hat + 1 - job.arrival) - cost)  # line 4
    best = max(payoffs, default=-INF)
    if not best > 0:  # line 1 (mu_i = 0, l* empty) and line 5 (strictly larger)
        return None
    i = first_within(payoffs, best, larger=True)
    t_hat = job.arrival + i
    return Schedule(t_hat, payoffs[i], costs[i], dp.schedule(t_hat, job.work))


# ---- the fast path ----------------------------------------------------------------------------


@dataclass
class _Slot:
    """COST_t(t, .) as a table over the worker count y: cost[y], and the greedy orders."""

    cost: np.ndarray  # C_t(y), y = 0..len-1 (every entry finite)
    order_w: np.ndarray
    fit_w: np.ndarray  # fits, in sorted order
    order_p: np.ndarray
    fit_p: np.ndarray


def _greedy_costs(unit: np.ndarray, fit: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Cost of the ``counts`` cheapest instances, filling servers in order (lines 25-28 / 33-35);
    ``unit`` and ``fit`` are already sorted. Summed like the transcription: whole servers first,
    then the partly filled one."""
    cum = np.concatenate(([0], np.cumsum(fit)))
    full = np.concatenate(([0.0], np.cumsum(unit * fit)))
    j = np.searchsorted(cum, counts, side="right") - 1
    unit_pad = np.concatenate((unit, [0.0]))
    out: np.ndarray = full[j] + unit_pad[j] * (counts - cum[j])
    return out


SLOT_BATCH = 16  # slots whose per-server quantities best_schedule_fast computes in one go
PAIRWISE = 8  # numpy sums 8 or more contiguous terms pairwise: unit costs are then summed per slot


def slot_table(book: Book, job: JobShape, t: int) -> _Slot:
    return slot_tables(book, job, t, t + 1)[0]


def slot_tables(book: Book, job: JobShape, t0: int, t1: int) -> list[_Slot]:
    """The tables of the slots ``t0 .. t1 - 1``, their per-server unit costs (lines 23, 32),
    capacities ((30), (31)) and greedy orders computed for all of them at once.

    Every value is the one the per-slot computation gives: fits and the stable sorts work column
    by column, and the unit costs sum the resources in order, as numpy's sum over fewer than
    ``PAIRWISE`` resources of one slot does (with more, numpy sums pairwise: each slot is summed
    on its own then; tests/test_oasis.py compares both with ``unit_costs`` of each slot)."""
    if len(job.w) < PAIRWISE:
        a = (book.p[:, :, t0:t1] * job.w[None, :, None]).sum(axis=1)  # (H, slots)
        b = (book.q[:, :, t0:t1] * job.s[None, :, None]).sum(axis=1)
    else:
        a = np.stack([unit_costs(book.p[:, :, t], job.w) for t in range(t0, t1)], axis=1)
        b = np.stack([unit_costs(book.q[:, :, t], job.s) for t in range(t0, t1)], axis=1)
    order_w = np.argsort(a, axis=0, kind="stable")
    order_p = np.argsort(b, axis=0, kind="stable")
    fit_w = np.take_along_axis(_fits_slots(book.cap_w, book.g[:, :, t0:t1], job.w), order_w, axis=0)
    fit_p = np.take_along_axis(_fits_slots(book.cap_p, book.v[:, :, t0:t1], job.s), order_p, axis=0)
    a = np.take_along_axis(a, order_w, axis=0)
    b = np.take_along_axis(b, order_p, axis=0)
    return [
        _slot(job, a[:, i], order_w[:, i], fit_w[:, i], b[:, i], order_p[:, i], fit_p[:, i]) for i in range(t1 - t0)
    ]


def _fits_slots(cap: np.ndarray, used: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """``fits`` of every server in each of several slots (``used`` is (servers, R, slots)), the
    same float operations elementwise; shape (servers, slots)."""
    n = np.full((used.shape[0], used.shape[2]), 1 << 30, dtype=np.int64)
    for r in np.nonzero(demand > 0)[0]:
        n = np.minimum(n, np.floor((cap[:, r, None] - used[:, r, :]) / demand[r] + EPS).astype(np.int64))
    return np.maximum(n, 0)


def _slot(
    job: JobShape,
    a: np.ndarray,
    order_w: np.ndarray,
    fit_w: np.ndarray,
    b: np.ndarray,
    order_p: np.ndarray,
    fit_p: np.ndarray,
) -> _Slot:
    """One slot's table C_t(y) from its unit costs and fits, both already in greedy order."""
    y_max = int(min(fit_w.sum(), job.max_workers))
    y = np.arange(y_max + 1)
    z = np.ceil(y * job.ratio - EPS).clip(min=0).astype(np.int64)  # ps_needed, vectorised
    ok = (z <= y) & (z <= fit_p.sum())
    ok &= np.concatenate(([True], np.cumprod(ok[1:]).astype(bool)))  # feasible y form a prefix
    y, z = y[ok], z[ok]
    cost = _greedy_costs(a, fit_w, y) + _greedy_costs(b, fit_p, z)
    return _Slot(cost, order_w, fit_w, order_p, fit_p)


def _split(order: np.ndarray, fit: np.ndarray, count: int, n: int) -> tuple[int, ...]:
    out = [0] * n
    for idx, f in zip(order, fit, strict=True):
        if count <= 0:
            break
        take = min(int(f), count)
        out[int(idx)] = take
        count -= take
    return tuple(out)


def cost_floor(book: Book, job: JobShape) -> float:
    """A lower bound on the cost of every schedule of ``job`` (any completion slot).

    Any schedule has sum_t y(t) >= ceil(D_i / rate) worker-slots (y workers do at most y rate
    units) and sum_t z(t) >= ceil(ratio sum_t y(t)) PS-slots; each costs at least the cheapest unit
    price of a server that can still host one, over the slots a_i..T-1."""
    slots = slice(job.arrival, book.horizon)
    worker_slots = math.ceil(job.work / job.rate - EPS)
    ps_slots = math.ceil(job.ratio * worker_slots - EPS)

    def cheapest(prices: np.ndarray, cap: np.ndarray, used: np.ndarray, demand: np.ndarray) -> float:
        unit = (prices[:, :, slots] * demand[None, :, None]).sum(axis=1)  # (servers, slots)
        room = np.full(unit.shape, True)
        for r in np.nonzero(demand > 0)[0]:
            room &= cap[:, r, None] - used[:, r, slots] + EPS * demand[r] >= demand[r]
        return float(unit[room].min()) if room.any() else INF

    cw = cheapest(book.p, book.cap_w, book.g, job.w)
    cp = cheapest(book.q, book.cap_p, book.v, job.s) if ps_slots > 0 else 0.0
    return worker_slots * cw + ps_slots * cp


def best_schedule_fast(book: Book, job: JobShape) -> Schedule | None:
    """Alg. 2 with the forward DP described in the module docstring (same result)."""
    work = job.work
    need = np.ceil(np.arange(work + 1) / job.rate - EPS).clip(min=0).astype(np.int64)  # line 24 for d
    base = np.full(work + 1, INF)
    base[0] = 0.0
    tables: list[np.ndarray] = [base]  # F_{a-1}, F_a, ...: cheapest cost of >= w units by slot t
    slots: list[_Slot] = []
    payoffs: list[float] = []
    floor = cost_floor(book, job)
    ahead: list[_Slot] = []  # the tables of the next slots, computed SLOT_BATCH at a time
    for t in range(job.arrival, book.horizon):  # line 2
        utility = job.f(t + 1 - job.arrival)
        if utility - floor <= max([0.0, *payoffs]):
            break  # no later completion can pay more (f_i non-increasing, every cost >= floor)
        if not ahead:
            ahead = slot_tables(book, job, t, min(t + SLOT_BATCH, book.horizon))[::-1]
        sl = ahead.pop()
        slots.append(sl)
        prev = tables[-1]
        # k(y): the most units y workers can do, i.e. the largest d with need(d) <= y
        k = np.searchsorted(need, np.arange(len(sl.cost)), side="right") - 1
        cur = prev.copy()  # y = 0
        last = 0
        for y in range(1, len(sl.cost)):
            ky = int(k[y])
            if ky == last:
                continue  # y workers do no more than y - 1 workers: dominated (C_t non-decreasing)
            last = ky
            c = float(sl.cost[y])
            np.minimum(cur[ky:], prev[: work + 1 - ky] + c, out=cur[ky:])
            np.minimum(cur[:ky], c, out=cur[:ky])  # prev[0] = 0: y workers alone do >= w units
        tables.append(cur)
        payoffs.append(utility - float(cur[work]))  # line 4
    if not payoffs or not max(payoffs) > 0:
        return None
    best_i = first_within(payoffs, max(payoffs), larger=True)  # lines 5-7
    t_hat = job.arrival + best_i
    out: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    remaining = work
    n_h, n_k = book.cap_w.shape[0], book.cap_p.shape[0]
    for i in range(best_i, -1, -1):  # backtrack with the transcription's choice of d (line 15)
        sl, prev = slots[i], tables[i]
        needed = need[: remaining + 1]
        per_slot = np.full(remaining + 1, INF)
        ok = needed < len(sl.cost)
        per_slot[ok] = sl.cost[needed[ok]]
        totals = per_slot + prev[remaining::-1]  # d = 0..remaining: COST_t(t, d) + cost(t - 1, remaining - d)
        chosen = first_within(totals, float(totals.min()))
        workers = int(needed[chosen])
        if workers:
            out[job.arrival + i] = (
                _split(sl.order_w, sl.fit_w, workers, n_h),
                _split(sl.order_p, sl.fit_p, ps_needed(job, workers), n_k),
            )
        remaining -= chosen
    assert remaining == 0
    return Schedule(t_hat, payoffs[best_i], float(tables[best_i + 1][work]), out)
