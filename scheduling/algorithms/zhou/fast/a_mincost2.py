"""``mincost2``: A_mincost2 (Alg. 5) with numpy -- workers and PS on one server."""

from __future__ import annotations

import numpy as np

from scheduling.algorithms.zhou import mincost
from scheduling.algorithms.zhou.duals import Duals, Plan
from scheduling.algorithms.zhou.spec import JobSpec, Option

from .lengths import _lengths
from .tables import BAND, _limit, fits_one, pick, tables_for


def mincost2(spec: JobSpec, duals: Duals, tau: int, best: Plan | None = None) -> Plan | None:
    """``mincost.a_mincost2``: candidates (t, h) in loop order, one server for everything (``best``:
    the scan's starting best, see ``bound``)."""
    tables = tables_for(duals)
    both = duals.worker_ok & duals.ps_ok
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
