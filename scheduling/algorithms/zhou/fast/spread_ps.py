"""``spread_with_ps``: Alg. 4 lines 10-29 for one candidate (t^-, PS server n), the exact rebuild of
``mincost.spread_with_ps`` without its per-g Python loop.

Line 16's s_hat(g) = min_r floor((min_t(omega_n^r(t) - g e^r) + TOL) / z^r) is computed for every g
at once from the window minima of omega on n: x -> fl(x - c) is monotone (IEEE rounding is), so
min_t fl(omega(t) - c) = fl(min_t omega(t) - c), float for float. need(g) is ``_ps_needed`` (the
same operations as ``mincost.ps_needed``). The loop of lines 14-22 keeps the last g that passes
line 17, so the largest feasible g is taken; the fill of lines 11-13 and 23 is the same integer
arithmetic, and the cost (line 28) is ``mincost.plan_cost`` itself.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from scheduling.algorithms.zhou import mincost
from scheduling.algorithms.zhou.duals import TOL, Duals, Plan
from scheduling.algorithms.zhou.spec import Option

from .tables import _ps_needed


def spread_with_ps(
    duals: Duals,
    omega: np.ndarray,
    opt: Option,
    t: int,
    length: int,
    n_j: int,
    n: int,
    order: list[int],
    caps: list[int],
) -> Plan | None:
    """``mincost.spread_with_ps`` (the same plan or None)."""
    if not duals.ps_ok[n]:
        return None  # s stays 0 (line 26)
    y = [0] * duals.servers
    left = n_j
    placed_n = False
    for k in order:  # line 11
        if left <= 0 and placed_n:
            break  # every later y[k] is min(caps, 0) = 0
        y_k = min(caps[k], left)  # lines 12-13
        if k == n:  # lines 14-22
            g = np.arange(y_k + 1)
            s_hat = np.full(y_k + 1, float(mincost.MANY))
            wmin = omega[:, n, t : t + length].min(axis=1)
            counted = False
            for r, d in enumerate(opt.z.tolist()):
                if d > 0:
                    row = np.floor((wmin[r] - g * opt.e[r] + TOL) / d)
                    s_hat = row if not counted else np.minimum(s_hat, row)
                    counted = True
            if counted:
                s_hat = np.maximum(s_hat, 0)
            need = _ps_needed(n_j, opt)[: y_k + 1]
            ok = np.flatnonzero(s_hat >= need)
            if ok.size == 0:
                return None  # s stays 0 (line 26)
            y_k = int(ok[-1])
            s = int(need[y_k])
            placed_n = True
        y[k] = y_k
        left -= y_k  # line 23
    if left > 0:  # line 25
        return None
    workers = tuple((h, c) for h, c in enumerate(y) if c > 0)
    plan = Plan(0.0, t, length, opt.worker_type, opt.ps_type, workers, ((n, s),), False)
    return replace(plan, cost=mincost.plan_cost(duals, plan, opt.e, opt.z))  # line 28
