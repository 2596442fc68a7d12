"""A readable transcription of the per-job subroutines of Zhou et al. (seeds/002; Alg. 4 as printed
in seeds/000 lines ~1700-1760): the cheapest schedule l_j of one job under the current prices.

* ``a_mincost2`` (Alg. 5): PS job, every worker and PS on one server (q_j = 1);
* ``a_mincost1`` (Alg. 4): PS job, workers spread cheapest server first, PSs on one server n
  sized by the bandwidth constraint (13d) (q_j = 0);
* ``a_ramincost1`` (Alg. 6): all-reduce job, every worker on one server (q_j = 1);
* ``a_ramincost2`` (Alg. 7): all-reduce job, workers spread cheapest server first (q_j = 0).

Each scans its candidates in the pseudo-code's loop order and keeps the first strictly cheapest
(``cheaper``); a zero-cost candidate cannot be beaten, so the scan stops there. ``scheduling.
algorithms.zhou.fast`` computes the same schedules with numpy; tests check they agree.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from scheduling.algorithms.zhou.duals import TOL, Duals, Plan
from scheduling.algorithms.zhou.spec import EPS, JobSpec, Option

TIE = 1e-9  # relative: a cost replaces the best only when smaller by more than this
MANY = 1 << 30  # "any number fits": an instance demanding nothing of every resource


def cheaper(cost: float, best: Plan | None, end: int = 0, by_end: bool = False) -> bool:
    """Alg. 4 line 30 (and 5 line 8, 6 line 16, 7 line 19): cost < cost_m.

    ``by_end`` (tie="completion"): a candidate whose cost equals cost_m (within TIE) also replaces
    it when it completes earlier (``end`` = t^+ < the best's), see docs/algorithms-zhou.md."""
    if best is None:
        return True
    tol = TIE * max(1.0, abs(best.cost))
    if cost < best.cost - tol:
        return True
    return by_end and cost <= best.cost + tol and end < best.end


def better(plan: Plan, best: Plan | None, duals: Duals) -> bool:
    """``cheaper`` for a whole candidate under the sub-round's tie rule."""
    return cheaper(plan.cost, best, plan.end, duals.tie == "completion")


def settled(best: Plan | None, duals: Duals, end: int) -> bool:
    """No candidate completing at ``end`` or later can replace ``best`` any more.

    A zero-cost best cannot be beaten on cost (prices are >= 0); under tie="loop" it cannot be
    beaten at all, under tie="completion" only by a candidate that completes earlier."""
    if best is None or best.cost != 0:
        return False
    return duals.tie != "completion" or end >= best.end


def fit(free: np.ndarray, demand: np.ndarray) -> int:
    """min over r, t of floor(omega_h^r(t) / e^r) (Alg. 4 line 12): instances that fit in every slot."""
    counts = [math.floor((float(free[r].min()) + TOL) / d) for r, d in enumerate(demand) if d > 0]
    return max(0, min(counts)) if counts else MANY


def ps_needed(elsewhere: int, opt: Option) -> float:
    """PSs on server n so that s B_p' >= (workers on other servers) b_m' (13d), and at least one (13e)."""
    traffic = elsewhere * opt.b
    if traffic <= 0:
        return 1
    if opt.B <= 0:
        return math.inf
    return max(1, math.ceil(traffic / opt.B - EPS))


def window_cost(duals: Duals, h: int, t: int, length: int, demand: np.ndarray) -> float:
    """sum over t in [t^-, t^+) and r of delta_h^r(t) x demand^r."""
    return float(np.sum(duals.delta[:, h, t : t + length] * demand[:, None]))


def a_mincost2(spec: JobSpec, duals: Duals, tau: int) -> Plan | None:
    """Alg. 5: all workers and PSs of the job on one server h (q_j = 1, rho = 1/(v_jm + U_j^p))."""
    omega = duals.free()  # line 2
    best: Plan | None = None
    for opt in spec.options:  # line 3: m', p' ...
        rho = spec.rho(opt, 1, colocated=True)
        for length, n_j in spec.ps_lengths(rho, tau):  # ... L_j ...
            demand = n_j * opt.e + opt.z  # one PS: the right-hand side of (13d) is zero
            for t in range(tau - length):  # ... t^- = 1 .. tau_i - L_j
                if settled(best, duals, t + length):
                    break
                for h in range(duals.servers):  # line 4
                    if not (duals.worker_ok[h] and duals.ps_ok[h]):
                        continue
                    if fit(omega[:, h, t : t + length], demand) < 1:  # line 6: (2h) and (13a)
                        continue
                    cost = window_cost(duals, h, t, length, demand)  # line 7
                    plan = Plan(cost, t, length, opt.worker_type, opt.ps_type, ((h, n_j),), ((h, 1),), True)
                    if better(plan, best, duals):  # lines 8-9
                        best = plan
                        if settled(best, duals, 0):
                            return best
    return best


def plan_cost(duals: Duals, plan: Plan, e: np.ndarray, z: np.ndarray) -> float:
    """Alg. 4 line 28 (7 line 17): sum over the window, servers and resources of delta x f_jh^r(l)."""
    f = plan.usage(e, z, duals.servers)
    return float(np.sum(duals.delta[:, :, plan.start : plan.start + plan.length] * f[:, :, None]))


def cheapest_first(duals: Duals, omega: np.ndarray, e: np.ndarray, t: int, length: int) -> tuple[list[int], list[int]]:
    """Alg. 4 line 8 (7 lines 7-8): servers by Omega_h = sum over the window of delta_h^r(t) e^r
    (stable: ties in cluster order), and how many workers fit on each in every slot of the window."""
    costs = [window_cost(duals, h, t, length, e) for h in range(duals.servers)]
    order = sorted(range(duals.servers), key=lambda h: costs[h])
    window = omega[:, :, t : t + length]
    caps = [fit(window[:, k], e) if duals.worker_ok[k] else 0 for k in range(duals.servers)]
    return order, caps


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
    """Alg. 4 lines 10-29 for one PS server n: workers cheapest server first, the PSs on n."""
    y = [0] * duals.servers  # line 10
    s = 0
    left = n_j
    window = omega[:, n, t : t + length]
    for k in order:  # line 11
        y[k] = min(caps[k], left)  # lines 12-13
        if k == n and duals.ps_ok[n]:  # lines 14-22: the most workers g that leave room for the PSs
            for g in range(y[k] + 1):
                s_hat = fit(window - g * opt.e[:, None], opt.z)  # line 16
                need = ps_needed(n_j - g, opt)
                if s_hat >= need:  # line 17: s_hat B_p' >= (N_j - g) b_m'
                    y[n], s = g, int(need)  # lines 18-19
        left -= y[k]  # line 23
    if left > 0 or s < 1:  # lines 25-26
        return None
    workers = tuple((h, c) for h, c in enumerate(y) if c > 0)
    plan = Plan(0.0, t, length, opt.worker_type, opt.ps_type, workers, ((n, s),), False)
    return replace(plan, cost=plan_cost(duals, plan, opt.e, opt.z))  # line 28


def a_mincost1(spec: JobSpec, duals: Duals, tau: int) -> Plan | None:
    """Alg. 4: workers on the cheapest servers, the PSs on server n (q_j = 0, rho with 2 pi_j / b_m)."""
    omega = duals.free()  # line 2
    best: Plan | None = None
    for opt in spec.options:  # lines 3-4: m', p'
        rho = spec.rho(opt, 1, colocated=False)
        for length, n_j in spec.ps_lengths(rho, tau):  # lines 5-6: L_j, N_j
            for t in range(tau - length):  # line 7: t^-
                if settled(best, duals, t + length):
                    break
                order, caps = cheapest_first(duals, omega, opt.e, t, length)  # line 8
                for n in range(duals.servers):  # line 9: the server of the PSs
                    plan = spread_with_ps(duals, omega, opt, t, length, n_j, n, order, caps)
                    if plan is not None and better(plan, best, duals):  # lines 30-31
                        best = plan
                        if settled(best, duals, 0):
                            return best
    return best


def ra_counts(spec: JobSpec, ascending: bool) -> range:
    """Phi' of Algs. 6/7 line 4: 1 .. D_j as printed, or D_j .. 1 (most workers first)."""
    return range(1, spec.chunks + 1) if ascending else range(spec.chunks, 0, -1)


def a_ramincost1(spec: JobSpec, duals: Duals, tau: int, ascending: bool = True) -> Plan | None:
    """Alg. 6: all Phi' workers of an all-reduce job on one server h (q_j = 1)."""
    omega = duals.free()
    best: Plan | None = None
    for opt in spec.options:  # line 3
        for phi in ra_counts(spec, ascending):  # line 4
            length = spec.duration(spec.rho(opt, phi, colocated=True), phi)  # line 5
            for t in range(tau - length):  # line 6
                if settled(best, duals, t + length):
                    break
                for h in range(duals.servers):  # line 8
                    y = min(fit(omega[:, h, t : t + length], opt.e), phi) if duals.worker_ok[h] else 0  # lines 9-10
                    if phi > y:  # lines 11-12
                        continue
                    cost = window_cost(duals, h, t, length, phi * opt.e)  # line 14
                    plan = Plan(cost, t, length, opt.worker_type, None, ((h, phi),), (), True)
                    if better(plan, best, duals):  # lines 16-17
                        best = plan
                        if settled(best, duals, 0):
                            return best
    return best


def spread(duals: Duals, omega: np.ndarray, opt: Option, t: int, length: int, phi: int) -> Plan | None:
    """Alg. 7 lines 7-18 for one start: Phi' workers, cheapest server first."""
    order, caps = cheapest_first(duals, omega, opt.e, t, length)  # lines 7-8
    y = [0] * duals.servers
    left = phi
    for h in order:  # lines 9-13
        y[h] = min(caps[h], left)
        left -= y[h]
    if left > 0:  # lines 14-15
        return None
    plan = Plan(0.0, t, length, opt.worker_type, None, tuple((h, c) for h, c in enumerate(y) if c > 0), (), False)
    return replace(plan, cost=plan_cost(duals, plan, opt.e, opt.z))  # line 17


def a_ramincost2(spec: JobSpec, duals: Duals, tau: int, ascending: bool = True) -> Plan | None:
    """Alg. 7: Phi' workers of an all-reduce job on the cheapest servers (q_j = 0)."""
    omega = duals.free()
    best: Plan | None = None
    for opt in spec.options:  # line 3
        for phi in ra_counts(spec, ascending):  # line 4
            length = spec.duration(spec.rho(opt, phi, colocated=False), phi)  # line 5 (N-hat = Phi')
            for t in range(tau - length):  # line 6
                if settled(best, duals, t + length):
                    break
                plan = spread(duals, omega, opt, t, length, phi)
                if plan is not None and better(plan, best, duals):  # lines 19-20
                    best = plan
                    if settled(best, duals, 0):
                        return best
    return best
