"""Per-price-state tables, fit screens and the band scan shared by every subroutine of the numpy path.

* ``Tables`` (one per price state, ``tables_for``): sliding-window minima of omega (a sparse table,
  exact), window sums of delta from prefix sums (approximate), per-server upper bounds and the
  caches the subroutines share until the next commit;
* ``fit_counts`` / ``fits_one``: ``mincost.fit`` for every server and start at once;
* the PS screens of Alg. 4 lines 15-17: ``_ps_needed`` ((13d) for every split of N_j) and
  ``_host_limits``;
* ``pick`` (the sequential scan done on the band of near-minimal candidates) and ``_limit`` (the
  starts still worth scanning).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from scheduling.algorithms.zhou import mincost
from scheduling.algorithms.zhou.duals import TOL, Duals, Plan
from scheduling.algorithms.zhou.spec import EPS, Option

if TYPE_CHECKING:
    from .workers import _Workers

BAND = 1e-7  # relative width of the band of candidates rebuilt exactly
KEEP = 64  # most window lengths / worker blocks kept per price state (memory bound)


class Tables:
    """Window minima of omega and window sums of delta for one price state."""

    def __init__(self, duals: Duals) -> None:
        # ``duals`` is not kept (duals.cache holds this object): a Duals <-> Tables cycle would keep
        # every dropped price state's arrays (tens of MB each: every sub-round of A_dual, every
        # _hopeless check) alive until a full collection, which numpy arrays do not trigger.
        self.worker_ok, self.ps_ok = duals.worker_ok, duals.ps_ok
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
            self.most_workers(opt.e, self.worker_ok)
            limits = _host_limits(self.server_max, self._per[opt.e.tobytes()], opt, top)
            got = self._hosts[key] = int(np.where(self.ps_ok, limits, -1).max(initial=-1))
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
            got = [fit_counts(self.omega, e, self.worker_ok)]  # [H, T]
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
