"""Worker blocks of the numpy path, shared by A_mincost1 and A_RAmincost1/2.

* ``_Workers`` / ``_block``: per (worker demand, L_j) and price state, the fit counts, unit costs
  and cheapest-first fills (``_sorted_fill``, ``_fill_cost``) for the scanned starts;
* ``cheapest_first`` (Alg. 4 line 8) and ``spread`` (Alg. 7 lines 9-17) for the candidates
  rebuilt exactly.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from scheduling.algorithms.zhou import mincost
from scheduling.algorithms.zhou.duals import Duals, Plan
from scheduling.algorithms.zhou.spec import Option

from .tables import KEEP, Tables


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
