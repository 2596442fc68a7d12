"""The subroutines of ``mincost`` with numpy: the same schedules, found faster.

Each block of candidates (one option and window length, every start t^- and PS server n) is first
screened with vectorised, approximate costs (window sums from prefix sums, cheapest-first fills
from cumulative sums). Only the candidates whose approximate cost is within a small band of the
block's minimum are then rebuilt by ``mincost``'s own code, with its exact cost, and scanned in
the pseudo-code's order with the same ``cheaper`` rule. Candidates outside the band can never be
the one the sequential scan ends on, so the result is the transcription's. Feasibility (how many
instances fit) is computed exactly: sliding-window minima of omega are the same floats.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import replace

import numpy as np

from scheduling.algorithms.zhou import mincost
from scheduling.algorithms.zhou.duals import TOL, Duals, Plan
from scheduling.algorithms.zhou.spec import EPS, JobSpec, Option

BAND = 1e-7  # relative width of the band of candidates rebuilt exactly
KEEP = 64  # most window lengths / worker blocks kept per price state (memory bound)


class Tables:
    """Window minima of omega and window sums of delta for one price state."""

    def __init__(self, duals: Duals) -> None:
        self.duals = duals
        self.omega = duals.free()
        self.levels = [self.omega]  # levels[k][..., t] = min of omega[..., t : t + 2^k]
        width = 1
        while 2 * width <= self.omega.shape[2]:
            prev = self.levels[-1]
            self.levels.append(np.minimum(prev[..., :-width], prev[..., width:]))
            width *= 2
        zero = np.zeros((*duals.delta.shape[:2], 1))
        self.cs = np.concatenate([zero, np.cumsum(duals.delta, axis=2)], axis=2)
        self.scale = float(np.abs(self.cs).max()) if self.cs.size else 0.0
        self._min: dict[int, np.ndarray] = {}
        self._sum: dict[int, np.ndarray] = {}
        self.version = duals.version
        self.omax = self.omega.max(axis=(1, 2)) if self.omega.size else np.zeros(self.omega.shape[0])
        self.workers: dict[tuple[bytes, int], _Workers] = {}
        self.orders: dict[tuple[bytes, int, int], tuple[list[int], list[int]]] = {}  # Alg. 4 line 8
        self.server_max = self.omega.max(axis=2) if self.omega.size else np.zeros(self.omega.shape[:2])
        self._most: dict[bytes, tuple[int, float]] = {}
        self._per: dict[bytes, np.ndarray] = {}
        self._hosts: dict[tuple[bytes, bytes, float, float, int], int] = {}
        self._together: dict[tuple[bytes, bytes, int], np.ndarray] = {}
        self._ps_most: dict[bytes, tuple[list[int], float]] = {}
        self._counts: dict[bytes, list[np.ndarray]] = {}

    def most_workers(self, e: np.ndarray, ok: np.ndarray) -> tuple[int, float]:
        """Upper bounds from each server's most free capacity in any slot: the most workers of
        demand ``e`` one server holds, and all servers together."""
        key = e.tobytes()
        got = self._most.get(key)
        if got is None:
            per = self._per[key] = fit_counts(self.server_max[:, :, None], e, ok)[:, 0]
            got = self._most[key] = (int(per.max(initial=0)), float(per.sum()))
        return got

    def ps_most(self, z: np.ndarray) -> tuple[list[int], float]:
        """The resources a PS of demand ``z`` uses, and the most such PSs any server has room for
        in any slot (an upper bound on s_hat of Alg. 4 line 16); shared by the worker types."""
        key = z.tobytes()
        got = self._ps_most.get(key)
        if got is None:
            rows = [r for r, d in enumerate(z) if d > 0]
            s_max = min((np.floor((self.omax[r] + TOL) / z[r]) for r in rows), default=float(mincost.MANY))
            got = self._ps_most[key] = (rows, s_max)
        return got

    def ps_host_limit(self, opt: Option, top: int) -> int:
        """The largest N_j <= ``top`` for which some server can hold the PSs (Alg. 4 lines 15-17)
        on the most it has free in any slot; -1 if none. See ``_host_limits``."""
        key = (opt.e.tobytes(), opt.z.tobytes(), opt.b, opt.B, top)
        got = self._hosts.get(key)
        if got is None:
            self.most_workers(opt.e, self.duals.worker_ok)
            limits = _host_limits(self.server_max, self._per[opt.e.tobytes()], opt, top)
            got = self._hosts[key] = int(np.where(self.duals.ps_ok, limits, -1).max(initial=-1))
        return got

    def together(self, opt: Option, top: int) -> np.ndarray:
        """For N_j = 0 .. ``top``: no resource of N_j workers and one PS (A_mincost2's demand
        ``N_j e + z``, the same float operations) needs more than any server has free in any slot."""
        key = (opt.e.tobytes(), opt.z.tobytes(), top)
        got = self._together.get(key)
        if got is None:
            demand = np.arange(top + 1)[:, None] * opt.e[None, :] + opt.z[None, :]  # [N, R]
            got = self._together[key] = ~np.any(demand > self.omax + TOL, axis=1)
        return got

    def wmin(self, length: int, starts: int) -> np.ndarray:
        """min of omega over [t, t + length) for t < starts, shape [R, H, starts]."""
        got = self._min.get(length)
        if got is None:
            k = length.bit_length() - 1
            lev = self.levels[k]
            if len(self._min) >= KEEP:
                self._min.clear()  # bound the memory (one entry is [R, H, starts])
            got = self._min[length] = np.minimum(
                lev[..., :starts], lev[..., length - (1 << k) : length - (1 << k) + starts]
            )
        return got

    def count_levels(self, e: np.ndarray) -> list[np.ndarray]:
        """Sparse-table minima of the per-slot fit counts of workers of demand ``e``:
        levels[k][h, t] = min of ``fit_counts(omega[..., t'])`` over t' in [t, t + 2^k).

        ``fit_counts`` of a window minimum is the window minimum of the per-slot counts, float for
        float: x -> floor((x + TOL) / d) and max(., 0) are monotone (IEEE rounding is), so they
        commute with min, and so do the min over resources and the zeros where not worker_ok."""
        key = e.tobytes()
        got = self._counts.get(key)
        if got is None:
            got = [fit_counts(self.omega, e, self.duals.worker_ok)]  # [H, T]
            width = 1
            while 2 * width <= self.omega.shape[2]:
                prev = got[-1]
                got.append(np.minimum(prev[:, :-width], prev[:, width:]))
                width *= 2
            self._counts[key] = got
        return got

    def caps_prefix(self, e: np.ndarray, length: int, n: int) -> np.ndarray:
        """``fit_counts(wmin(length, .)[..., :n], e, worker_ok)``, from ``count_levels``."""
        k = length.bit_length() - 1
        lev = self.count_levels(e)[k]
        out: np.ndarray = np.minimum(lev[:, :n], lev[:, length - (1 << k) : length - (1 << k) + n])
        return out

    def wmin_cols(self, length: int, cols: np.ndarray) -> np.ndarray:
        """``wmin(length, .)[..., cols]`` for the given starts only (the same np.minimum per column)."""
        got = self._min.get(length)
        if got is not None:
            return got[..., cols]
        k = length.bit_length() - 1
        lev = self.levels[k]
        out: np.ndarray = np.minimum(lev[..., cols], lev[..., cols + (length - (1 << k))])
        return out

    def wmin_prefix(self, length: int, starts: int, n: int) -> np.ndarray:
        """``wmin(length, starts)[..., :n]``, computed for the n columns only when not cached
        (every column is the same np.minimum of the same two levels, whatever the width)."""
        got = self._min.get(length)
        if got is not None:
            return got[..., :n]
        k = length.bit_length() - 1
        lev = self.levels[k]
        out: np.ndarray = np.minimum(lev[..., :n], lev[..., length - (1 << k) : length - (1 << k) + n])
        return out

    def wsum_prefix(self, length: int, starts: int, n: int) -> np.ndarray:
        """``wsum(length, starts)[..., :n]`` (the same differences of the same prefix sums)."""
        got = self._sum.get(length)
        if got is not None:
            return got[..., :n]
        out: np.ndarray = self.cs[..., length : length + n] - self.cs[..., :n]
        return out

    def wsum(self, length: int, starts: int) -> np.ndarray:
        """Sum of delta over [t, t + length) for t < starts (approximate), shape [R, H, starts]."""
        got = self._sum.get(length)
        if got is None:
            if len(self._sum) >= KEEP:
                self._sum.clear()
            got = self._sum[length] = self.cs[..., length : length + starts] - self.cs[..., :starts]
        return got


def _host_limits(free: np.ndarray, caps: np.ndarray, opt: Option, top: int) -> np.ndarray:
    """Per server n, the largest N_j <= ``top`` for which some g <= min(caps_n, N_j) gives
    s_hat(g) = min_r floor((free_n^r - g e^r + TOL) / z^r) >= need(N_j - g) (Alg. 4 lines 15-17,
    need of (13d) for N_j - g remote workers); -1 if there is none.

    With ``free`` >= every window minimum of n and ``caps`` >= its fit counts (IEEE operations are
    monotone), a server fails line 17 for every start, L_j and g when N_j exceeds its limit.
    Feasibility falls with N_j (a g that works for N_j + 1 workers, minus one, works for N_j), so
    the feasible N_j are 0 .. limit: the limit is the largest g + K(s_hat(g)) over g, with K(s) the
    most remote workers s PSs serve (need is non-decreasing in the remote workers)."""
    g = np.arange(top + 1, dtype=float)
    s_hat = np.full((free.shape[1], top + 1), float(mincost.MANY))
    for r, d in enumerate(opt.z.tolist()):
        if d > 0:
            np.minimum(s_hat, np.floor((free[r][:, None] - g * opt.e[r] + TOL) / d), out=s_hat)
    need = _ps_needed(top, opt)[::-1]  # need[k]: PSs for k remote workers, k = 0 .. top
    k = np.searchsorted(need, s_hat, side="right") - 1  # most remote workers s_hat PSs serve
    limits: np.ndarray = np.where((k >= 0) & (g <= caps[:, None]), g + k, -1).max(axis=1)
    return limits


def _limit(best: Plan | None, duals: Duals, length: int, starts: int) -> int:
    """Starts worth scanning: with tie="completion" and a zero-cost best, only t^- + L_j < its end
    can still win (nothing is cheaper than zero)."""
    if best is not None and best.cost == 0 and duals.tie == "completion":
        return max(0, min(starts, best.end - length))
    return starts


def tables_for(duals: Duals) -> Tables:
    """The tables of ``duals``' current prices, shared by every subroutine call until a commit
    (kept on the Duals object, so they go with it)."""
    got = duals.cache
    if not isinstance(got, Tables) or got.version != duals.version:
        got = Tables(duals)
        duals.cache = got
    return got


def fit_counts(wmin: np.ndarray, demand: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``mincost.fit`` for every server and start at once, shape [H, starts]; 0 where not ``ok``."""
    counts: np.ndarray | None = None
    for r, d in enumerate(demand.tolist()):
        if d > 0:
            row = wmin[r] + TOL  # the same float operations as mincost.fit, in place
            row /= d
            np.floor(row, out=row)
            counts = row if counts is None else np.minimum(counts, row, out=counts)
    if counts is None:
        counts = np.full(wmin.shape[1:], float(mincost.MANY))
    else:
        np.maximum(counts, 0, out=counts)
    counts[~ok] = 0
    return counts


def fits_one(free: np.ndarray, demand: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``fit_counts(free, demand, ok) >= 1`` (one instance fits; Alg. 5 line 6) without the
    divisions: for d > 0, floor((w + TOL) / d) >= 1 iff (w + TOL) / d >= 1 iff w + TOL >= d, as
    IEEE division is correctly rounded (a quotient rounds to 1 or more exactly when w + TOL >= d:
    below d, the largest double pred(d) gives pred(d) / d <= 1 - 2^-53, itself a double)."""
    out: np.ndarray | None = None
    for r, d in enumerate(demand.tolist()):
        if d > 0:
            row = free[r] + TOL >= d
            out = row if out is None else np.logical_and(out, row, out=out)
    if out is None:
        out = np.ones(free.shape[1:], dtype=bool)  # MANY fit
    out &= ok.reshape(-1, *([1] * (out.ndim - 1)))
    return out


def pick(
    approx: np.ndarray,
    best: Plan | None,
    exact: Callable[[int], Plan | None],
    scale: float,
    duals: Duals,
    length: int,
    per_start: int,
) -> tuple[Plan | None, bool]:
    """The sequential scan over candidates 0, 1, ... (``approx``: inf = infeasible), done on the band.

    Candidate i starts at t^- = i // ``per_start`` and lasts ``length`` slots. Returns the new best
    and whether the scan stopped at a zero cost (tie="loop": nothing can beat it)."""
    finite = np.isfinite(approx)
    if not finite.any():
        return best, False
    low = float(approx[finite].min())
    margin = BAND * max(1.0, abs(low)) + 1e-12 * scale
    if best is not None and low - margin > best.cost:
        return best, False
    for i in np.flatnonzero(approx <= low + margin):
        if mincost.settled(best, duals, int(i) // per_start + length):
            break  # later candidates complete no earlier
        plan = exact(int(i))
        if plan is not None and mincost.better(plan, best, duals):
            best = plan
            if mincost.settled(best, duals, 0):
                return best, True
    return best, False


_Lengths = dict[tuple[str, str | None], tuple[list[tuple[int, int]], list[int]]]  # per option: (L_j, N_j), L_j
_LENGTHS: dict[tuple[int, bool], tuple[JobSpec, _Lengths]] = {}


def _all_lengths(spec: JobSpec, rho: float) -> list[tuple[int, int]]:
    """``spec.ps_lengths(rho, tau)`` for an unbounded tau, vectorised (the same float operations)."""
    n = np.arange(spec.chunks, 0, -1)
    lengths = np.maximum(1.0, np.ceil(spec.work / (n * rho) - EPS))
    first = np.concatenate([[True], lengths[1:] != lengths[:-1]])
    kept = lengths[first]
    need = np.maximum(1.0, np.ceil(spec.work / (kept * rho) - EPS))
    return list(zip(kept.astype(int).tolist(), need.astype(int).tolist(), strict=True))


def _job_lengths(spec: JobSpec, colocated: bool) -> _Lengths:
    """``_all_lengths`` of every option of the job at once, one row per option: the same float
    operations element by element (n x rho, E_j D_j K_j / that, ceil), so the same lists."""
    rhos = np.array([spec.rho(o, 1, colocated=colocated) for o in spec.options])
    n = np.arange(spec.chunks, 0, -1)
    lengths = np.maximum(1.0, np.ceil(spec.work / (n[None, :] * rhos[:, None]) - EPS))
    first = np.ones(lengths.shape, dtype=bool)
    first[:, 1:] = lengths[:, 1:] != lengths[:, :-1]
    need = np.maximum(1.0, np.ceil(spec.work / (lengths * rhos[:, None]) - EPS))
    kept = lengths[first].astype(int).tolist()  # row by row, as _all_lengths keeps them
    needs = need[first].astype(int).tolist()
    ends = np.cumsum(first.sum(axis=1)).tolist()
    out: _Lengths = {}
    lo = 0
    for opt, hi in zip(spec.options, ends, strict=True):
        out[(opt.worker_type, opt.ps_type)] = (list(zip(kept[lo:hi], needs[lo:hi], strict=True)), kept[lo:hi])
        lo = hi
    return out


def _lengths(spec: JobSpec, opt: Option, tau: int, colocated: bool) -> Iterable[tuple[int, int]]:
    """``spec.ps_lengths`` (cached per job, built for all its options at once: lengths grow
    strictly as N_j falls, so the ones up to tau - 1 are a prefix, found by bisection)."""
    key = (id(spec), colocated)
    got = _LENGTHS.get(key)
    if got is None or got[0] is not spec:
        if len(_LENGTHS) > 10_000:
            _LENGTHS.clear()
        got = _LENGTHS[key] = (spec, _job_lengths(spec, colocated))
    pairs, lengths = got[1][(opt.worker_type, opt.ps_type)]
    return pairs[: bisect.bisect_right(lengths, tau - 1)]


def mincost2(spec: JobSpec, duals: Duals, tau: int) -> Plan | None:
    """``mincost.a_mincost2``: candidates (t, h) in loop order, one server for everything."""
    tables = tables_for(duals)
    both = duals.worker_ok & duals.ps_ok
    best: Plan | None = None
    for opt in spec.options:
        fits: np.ndarray | None = None  # looked up on first use
        for length, n_j in _lengths(spec, opt, tau, True):
            if mincost.settled(best, duals, length):
                break  # lengths only grow: every later one is settled too
            if fits is None or n_j >= len(fits):
                fits = tables.together(opt, max(spec.chunks, n_j))
            if not fits[n_j]:
                continue  # more than any server has free in any slot
            starts = tau - length
            demand = n_j * opt.e + opt.z
            if not fits_one(tables.server_max, demand, both).any():
                continue  # no server has room for it even in its freest slot (window minima are lower)
            lim = _limit(best, duals, length, starts)
            scale = tables.scale * float(demand.sum())
            costs = np.einsum("r,rht->ht", demand, tables.wsum(length, starts)[..., :lim])
            if best is not None:
                # Only candidates within twice pick's band of the best can replace it (the bar of
                # mincost1); when none is, pick would return at once. Feasibility for those only.
                bar = best.cost + 2 * (BAND * max(1.0, best.cost) + 1e-12 * scale)
                near = costs <= bar
                cols = np.flatnonzero(near.any(axis=0))
                if cols.size == 0:
                    continue
                ok = fits_one(tables.wmin(length, starts)[..., cols], demand, both)
                grid = np.full(costs.shape, np.inf)
                grid[:, cols] = np.where(ok & near[:, cols], costs[:, cols], np.inf)
                approx = grid.T.ravel()
            else:
                ok = fits_one(tables.wmin(length, starts)[..., :lim], demand, both)
                approx = np.where(ok, costs, np.inf).T.ravel()

            def exact(
                i: int, opt: Option = opt, length: int = length, n_j: int = n_j, demand: np.ndarray = demand
            ) -> Plan:
                t, h = divmod(i, duals.servers)
                cost = mincost.window_cost(duals, h, t, length, demand)
                return Plan(cost, t, length, opt.worker_type, opt.ps_type, ((h, n_j),), ((h, 1),), True)

            best, done = pick(approx, best, exact, scale, duals, length, duals.servers)
            if done:
                return best
    return best


def _sorted_fill(unit: np.ndarray, caps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cheapest-first order per start (columns) with cumulative capacity and cost, [H + 1, starts]."""
    order = np.argsort(unit, axis=0, kind="stable")
    c = np.take_along_axis(caps, order, axis=0)
    w = np.take_along_axis(unit, order, axis=0)
    zero = np.zeros((1, unit.shape[1]))
    cum_c = np.concatenate([zero, np.cumsum(c, axis=0)])
    cum_w = np.concatenate([zero, np.cumsum(c * w, axis=0)])
    return order, cum_c, cum_w, w


def _fill_cost(cum_c: np.ndarray, cum_w: np.ndarray, w: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """Cost of the first ``amount`` worker places in cheapest-first order; ``amount`` is [..., starts].

    One searchsorted for every column at once: column c of ``cum_c`` (non-decreasing, integer
    valued) is shifted by c x big, so the flattened array stays sorted and the shifts are exact."""
    flat = amount.reshape(-1, amount.shape[-1])
    rows, cols_n = cum_c.shape
    big = float(max(cum_c[-1].max(initial=0.0), flat.max(initial=0.0))) + 1.0
    shift = np.arange(cols_n) * big
    keys = (cum_c + shift[None, :]).T.ravel()  # column-major: column 0 first
    k = np.searchsorted(keys, flat + shift[None, :], side="left") - np.arange(cols_n)[None, :] * rows
    k = np.clip(k, 1, rows - 1)
    cols = np.broadcast_to(np.arange(cols_n), flat.shape)
    prev = cum_c[k - 1, cols]
    cost = cum_w[k - 1, cols] + (flat - prev) * w[k - 1, cols]
    return np.where(flat <= 0, 0.0, cost).reshape(amount.shape)


class _Workers:
    """What A_mincost1 needs of one (worker demand, L_j) block under the current prices: shared by
    every PS type and every job until the next commit.

    Built for the first ``n`` starts only (the starts still worth scanning, see ``_limit``) and
    widened on demand (``ensure``): every column depends on its own start alone, so a column has
    the same values whatever the width, and the block-wide screens (``room``, ``caps_max``,
    ``min_unit``) are bounds over the starts that will be scanned."""

    def __init__(self, tables: Tables, duals: Duals, e: np.ndarray, length: int, starts: int, n: int) -> None:
        # ``tables`` is not kept: a Tables -> _Workers -> Tables cycle would keep every price
        # state's arrays alive until the garbage collector runs.
        self.worker_ok, self.e, self.length, self.total = duals.worker_ok, e, length, starts
        self.starts = 0
        self.ensure(tables, n)

    def ensure(self, tables: Tables, n: int) -> None:
        """Make the block cover at least the first ``n`` starts (doubling, to bound rebuilds)."""
        if n <= self.starts:
            return
        n = min(self.total, max(n, 2 * self.starts))
        self.wsum = tables.wsum_prefix(self.length, self.total, n)
        self.caps = tables.caps_prefix(self.e, self.length, n)  # fit_counts of the window minima [H, n]
        self.unit = np.einsum("r,rht->ht", self.e, self.wsum)
        self.room = float(self.caps.sum(axis=0).max(initial=0))  # most workers any start holds
        self.caps_max = int(self.caps.max(initial=0))
        self.min_unit = float(np.where(self.caps > 0, self.unit, np.inf).min(initial=np.inf))
        self.starts = n
        self._fill: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._fills: dict[int, np.ndarray] = {}
        self._pos: np.ndarray | None = None

    def fill(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self._fill is None:
            self._fill = _sorted_fill(self.unit, self.caps)
        return self._fill

    def positions(self) -> np.ndarray:
        """Position of every server in the cheapest-first order of each start, [H, starts]."""
        if self._pos is None:
            order = self.fill()[0]
            pos = np.empty_like(order)  # the inverse permutation of each column
            np.put_along_axis(pos, order, np.arange(order.shape[0])[:, None], axis=0)
            self._pos = pos
        return self._pos

    def fills(self, n_j: int) -> np.ndarray:
        """Per start, the cheapest fill of N_j workers (inf without room), PSs aside: a lower bound
        on the cost of every candidate at that start."""
        got = self._fills.get(n_j)
        if got is None:
            _, cum_c, cum_w, w = self.fill()
            n = float(n_j)
            fills = _fill_cost(cum_c, cum_w, w, np.full((1, self.starts), n))[0]
            got = self._fills[n_j] = np.where(cum_c[-1] >= n, fills, np.inf)
        return got

    def low_fill(self, n_j: int) -> float:
        """The cheapest fill of N_j workers over every start (a lower bound for the block)."""
        return float(self.fills(n_j).min(initial=np.inf))


def _block(tables: Tables, duals: Duals, e: np.ndarray, length: int, starts: int, lim: int) -> _Workers:
    """The worker block of (``e``, L_j) under the current prices, covering at least ``lim`` starts."""
    key = (e.tobytes(), length)
    blk = tables.workers.get(key)
    if blk is None:
        if len(tables.workers) >= KEEP:
            tables.workers.clear()  # bound the memory (a block holds ~8 [H, starts] arrays)
        blk = tables.workers[key] = _Workers(tables, duals, e, length, starts, lim)
    else:
        blk.ensure(tables, lim)
    return blk


_NEED: dict[tuple[int, float, float], np.ndarray] = {}


def _ps_needed(n_j: int, opt: Option) -> np.ndarray:
    """``mincost.ps_needed(N_j - g, opt)`` for g = 0 .. N_j (cached; do not modify the result)."""
    key = (n_j, opt.b, opt.B)
    got = _NEED.get(key)
    if got is None:
        traffic = (n_j - np.arange(n_j + 1)) * opt.b
        if opt.B <= 0:
            got = np.where(traffic <= 0, 1.0, np.inf)
        else:
            got = np.where(traffic <= 0, 1.0, np.maximum(1.0, np.ceil(traffic / opt.B - EPS)))
        if len(_NEED) > 100_000:
            _NEED.clear()
        _NEED[key] = got
    return got


def cheapest_first(duals: Duals, e: np.ndarray, t: int, length: int, caps: np.ndarray) -> tuple[list[int], list[int]]:
    """``mincost.cheapest_first`` (Alg. 4 line 8) without the loop over servers; ``caps`` is the
    block's column of ``fit_counts`` for start t (the same floors of the same window minima).

    Each server's Omega_h is summed exactly as ``mincost.window_cost`` sums it -- the products
    delta x e of one server laid out [r, t] and summed along one contiguous row, the same pairwise
    summation -- so the floats, and with a stable sort the order, are the transcription's."""
    prod = duals.delta[:, :, t : t + length] * e[:, None, None]  # [R, H, L]
    costs = np.ascontiguousarray(prod.transpose(1, 0, 2)).reshape(duals.servers, -1).sum(axis=1)
    order = np.argsort(costs, kind="stable").tolist()
    return order, [int(c) for c in caps.tolist()]


def spread(duals: Duals, opt: Option, t: int, length: int, phi: int, order: list[int], caps: list[int]) -> Plan | None:
    """``mincost.spread`` (Alg. 7 lines 9-17) on the order and caps of ``cheapest_first``."""
    y = [0] * duals.servers
    left = phi
    for h in order:  # lines 9-13
        y[h] = min(caps[h], left)
        left -= y[h]
    if left > 0:  # lines 14-15
        return None
    plan = Plan(0.0, t, length, opt.worker_type, None, tuple((h, c) for h, c in enumerate(y) if c > 0), (), False)
    return replace(plan, cost=mincost.plan_cost(duals, plan, opt.e, opt.z))  # line 17


def mincost1(spec: JobSpec, duals: Duals, tau: int) -> Plan | None:
    """``mincost.a_mincost1``: candidates (t, n) in loop order, workers spread, PSs on n."""
    tables = tables_for(duals)
    H = duals.servers
    best: Plan | None = None
    for opt in spec.options:
        rows, s_max = tables.ps_most(opt.z)
        ub_caps, ub_room = tables.most_workers(opt.e, duals.worker_ok)
        host_top, host_limit = -1, -1  # ps_host_limit, looked up on first use
        for length, n_j in _lengths(spec, opt, tau, False):
            if mincost.settled(best, duals, length):
                break  # lengths only grow: every later one is settled too
            starts = tau - length
            # Screens from the most a server has free in any slot, before any per-window array:
            # room for N_j workers, and PSs for the fewest remote workers ((13d), need falls in g).
            if ub_room < n_j:
                continue
            need = _ps_needed(n_j, opt)
            if need[min(ub_caps, n_j)] > s_max:
                continue
            if host_top < n_j:
                host_top = max(spec.chunks, n_j)
                host_limit = tables.ps_host_limit(opt, host_top)
            if host_limit < n_j:
                continue  # no server holds the PSs with any g (upper bounds on every window)
            lim = _limit(best, duals, length, starts)
            if lim <= 0:
                continue
            blk = _block(tables, duals, opt.e, length, starts, lim)
            if blk.room < n_j:
                continue  # no start has room for N_j workers anywhere
            # need(g): PSs for N_j - g remote workers (13d), falling in g; g <= min(caps, N_j).
            if need[min(blk.caps_max, n_j)] > s_max:
                continue  # not even the most PSs anywhere serve the fewest remote workers
            bar = np.inf if best is None else best.cost + BAND * max(1.0, best.cost) + 1e-12 * tables.scale
            if n_j * blk.min_unit > bar or blk.low_fill(n_j) > bar:
                continue  # lower bounds: N_j workers at the cheapest unit cost / the cheapest fill
            # Starts whose cheapest fill of N_j workers alone is not above the bar (others cannot win).
            fills = blk.fills(n_j)[:lim]
            cols = np.flatnonzero(fills <= bar)
            if cols.size == 0:
                continue
            if best is not None:
                # Add the PSs: at least need(min(caps, N_j)) of them, each at the cheapest PS server.
                ps_min = np.where(duals.ps_ok[:, None], np.einsum("r,rht->ht", opt.z, blk.wsum[..., cols]), np.inf)
                cols = cols[fills[cols] + need[min(blk.caps_max, n_j)] * ps_min.min(axis=0) <= bar]
                if cols.size == 0:
                    continue
            wmin, caps, unit, wsum = (
                tables.wmin_cols(length, cols),
                blk.caps[:, cols],
                blk.unit[:, cols],
                blk.wsum[..., cols],
            )
            _, cum_c, cum_w, w = (a[:, cols] for a in blk.fill())
            pos = blk.positions()[:, cols]
            s0 = fit_counts(wmin, opt.z, duals.ps_ok)  # PSs that fit on n with no worker there [H, starts]
            before = np.take_along_axis(cum_c, pos, axis=0)  # places strictly before n
            y_hat = np.clip(np.minimum(caps, n_j - before), 0, None)
            # s_hat(g) <= s0 and, as g <= y_hat, need(g) >= need(y_hat): where even that fails, no g works.
            cand = s0 >= need[y_hat.astype(int)]
            if not cand.any():
                continue
            idx = np.nonzero(cand)
            yh = y_hat[idx]
            g = np.arange(int(yh.max(initial=0)) + 1)  # g <= y_hat <= N_j
            # s_hat(n, g) (Alg. 4 line 16) for the candidate (n, t) only: [K, G]
            if rows:
                s_hat = np.min(
                    [np.floor((wmin[r][idx][:, None] - g * opt.e[r] + TOL) / opt.z[r]) for r in rows], axis=0
                )
            else:
                s_hat = np.full((len(yh), len(g)), float(mincost.MANY))
            feasible = (s_hat >= need[g]) & (g <= yh[:, None])
            g_best = np.full(caps.shape, -1)
            g_best[idx] = np.where(feasible.any(axis=1), len(g) - 1 - np.argmax(feasible[:, ::-1], axis=1), -1)
            placed_before = np.minimum(before, n_j)
            rest = n_j - placed_before - np.maximum(g_best, 0)
            after = np.take_along_axis(cum_c, pos + 1, axis=0)
            total_after = cum_c[-1][None, :] - after
            ok = (g_best >= 0) & (rest <= total_after)
            if not ok.any():
                continue
            ps_unit = np.einsum("r,rht->ht", opt.z, wsum)
            cost = (
                _fill_cost(cum_c, cum_w, w, placed_before)
                + np.maximum(g_best, 0) * unit
                + _fill_cost(cum_c, cum_w, w, after + rest)
                - np.take_along_axis(cum_w, pos + 1, axis=0)
                + need[np.clip(g_best, 0, None)] * ps_unit
            )
            # Before n are full only when before < n_j; else the fill stops before n (rest = 0).
            grid = np.full((H, lim), np.inf)
            grid[:, cols] = np.where(ok, cost, np.inf)
            approx = grid.T.ravel()

            def exact(
                i: int, opt: Option = opt, length: int = length, n_j: int = n_j, blk: _Workers = blk
            ) -> Plan | None:
                t, n = divmod(i, H)
                key = (opt.e.tobytes(), length, t)  # line 8 depends on the worker demand, not on n
                got = tables.orders.get(key)
                if got is None:
                    got = tables.orders[key] = cheapest_first(duals, opt.e, t, length, blk.caps[:, t])
                return mincost.spread_with_ps(duals, tables.omega, opt, t, length, n_j, n, *got)

            best, done = pick(
                approx, best, exact, tables.scale * float(opt.e.sum() * n_j + opt.z.sum() * n_j), duals, length, H
            )
            if done:
                return best
    return best


_RA_LENGTHS: dict[tuple[int, str, bool], tuple[JobSpec, list[int]]] = {}


def _ra_length(spec: JobSpec, opt: Option, phi: int, colocated: bool) -> int:
    """Alg. 6/7 line 5: L_j for Phi' workers (``spec.duration`` of eq. (14)'s rho), cached per job,
    worker type and placement for every Phi' = 1 .. D_j."""
    key = (id(spec), opt.worker_type, colocated)
    got = _RA_LENGTHS.get(key)
    if got is None or got[0] is not spec:
        if len(_RA_LENGTHS) > 100_000:
            _RA_LENGTHS.clear()
        lengths = [spec.duration(spec.rho(opt, k, colocated=colocated), k) for k in range(1, spec.chunks + 1)]
        got = _RA_LENGTHS[key] = (spec, lengths)
    return got[1][phi - 1]


def ra_mincost(spec: JobSpec, duals: Duals, tau: int, colocated: bool, ascending: bool) -> Plan | None:
    """``mincost.a_ramincost1`` (colocated) or ``a_ramincost2``.

    The fit counts, unit costs and cheapest-first fills come from the worker blocks A_mincost1
    uses (``_Workers``, per worker demand and L_j and price state, built for the scanned starts)."""
    tables = tables_for(duals)
    H = duals.servers
    best: Plan | None = None
    for opt in spec.options:
        for phi in mincost.ra_counts(spec, ascending):
            length = _ra_length(spec, opt, phi, colocated)
            starts = tau - length
            if starts <= 0 or mincost.settled(best, duals, length):
                continue
            if phi * opt.e.max(initial=0.0) > 0 and colocated and np.any(phi * opt.e > tables.omax + TOL):
                continue  # more than any server has free in any slot
            lim = _limit(best, duals, length, starts)
            if lim <= 0:
                continue  # no start left (pick would find no candidate)
            blk = _block(tables, duals, opt.e, length, starts, lim)
            if blk.room < phi:
                continue  # no start has room for Phi' workers (every candidate is infeasible)
            scale = tables.scale * float(opt.e.sum() * phi)
            if colocated:
                approx = np.where(blk.caps[:, :lim] >= phi, phi * blk.unit[:, :lim], np.inf).T.ravel()

                def exact(i: int, opt: Option = opt, length: int = length, phi: int = phi) -> Plan:
                    t, h = divmod(i, H)
                    cost = mincost.window_cost(duals, h, t, length, phi * opt.e)
                    return Plan(cost, t, length, opt.worker_type, None, ((h, phi),), (), True)

            else:
                approx = blk.fills(phi)[:lim]

                def exact(  # type: ignore[misc]
                    i: int, opt: Option = opt, length: int = length, phi: int = phi, blk: _Workers = blk
                ) -> Plan | None:
                    key = (opt.e.tobytes(), length, i)  # Alg. 7 lines 7-8 depend on e, not on Phi'
                    got = tables.orders.get(key)
                    if got is None:
                        got = tables.orders[key] = cheapest_first(duals, opt.e, i, length, blk.caps[:, i])
                    return spread(duals, opt, i, length, phi, *got)

            best, done = pick(approx, best, exact, scale, duals, length, H if colocated else 1)
            if done:
                return best
    return best
