"""``mincost1``: A_mincost1 (Alg. 4) with numpy -- workers spread cheapest first, PSs on server n."""

from __future__ import annotations

import numpy as np

from scheduling.algorithms.zhou import mincost
from scheduling.algorithms.zhou.duals import TOL, Duals, Plan
from scheduling.algorithms.zhou.spec import JobSpec, Option

from .lengths import _lengths
from .spread_ps import spread_with_ps
from .tables import BAND, _limit, _ps_needed, fit_counts, pick, tables_for
from .workers import _block, _fill_cost, _Workers, cheapest_first


def mincost1(spec: JobSpec, duals: Duals, tau: int, best: Plan | None = None) -> Plan | None:
    """``mincost.a_mincost1``: candidates (t, n) in loop order, workers spread, PSs on n (``best``:
    the scan's starting best, see ``bound``)."""
    tables = tables_for(duals)
    H = duals.servers
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
                return spread_with_ps(duals, tables.omega, opt, t, length, n_j, n, *got)

            best, done = pick(
                approx, best, exact, tables.scale * float(opt.e.sum() * n_j + opt.z.sum() * n_j), duals, length, H
            )
            if done:
                return best
    return best
