"""``ra_mincost``: A_RAmincost1/2 (Algs. 6-7) with numpy -- the all-reduce variant, no PS."""

from __future__ import annotations

import numpy as np

from scheduling.algorithms.zhou import mincost
from scheduling.algorithms.zhou.duals import TOL, Duals, Plan
from scheduling.algorithms.zhou.spec import JobSpec, Option

from .lengths import _ra_length
from .tables import _limit, pick, tables_for
from .workers import _block, _Workers, cheapest_first, spread


def ra_mincost(
    spec: JobSpec, duals: Duals, tau: int, colocated: bool, ascending: bool, best: Plan | None = None
) -> Plan | None:
    """``mincost.a_ramincost1`` (colocated) or ``a_ramincost2``.

    The fit counts, unit costs and cheapest-first fills come from the worker blocks A_mincost1
    uses (``_Workers``, per worker demand and L_j and price state, built for the scanned starts)."""
    tables = tables_for(duals)
    H = duals.servers
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
