"""Exact GPU mapping of one job: minimise alpha of eqs. (4)-(7) by an ILP (Table II, Sec. V-B-2-e).

The paper compares Heavy-Edge with an ILP "based on [47]" solved by Gurobi; we formulate the
mapping directly on the counts x_s^m (the replicas of stage s on server m), which is all that eq.
(7) depends on, and solve it with HiGHS (scipy.optimize.milp):

* one-hot z_{s,m,v} in {0, 1} for v = 0..min(k_s, free_m): x_s^m = sum_v v z_{s,m,v}, sum_v z = 1;
* every replica placed: sum_m x_s^m = k_s; GPUs: sum_s x_s^m <= free_m;
* beta_s^m (7) is affine in the one-hot variables: comp (4) is a constant, comm (5) is
  remote * g / B_inter + local / B_intra with remote and local linear in the neighbours' counts
  x_{s+-1}^m (x cancels in x / ((x/g) B_inter)), AllReduce (6) is a function f(x_s^m) = sum_v f(v) z_v;
* alpha >= beta_s^m - M z_{s,m,0} (the max of (7) over the (s, m) that host replicas: big-M with
  M an upper bound of beta_s^m); minimise alpha.

Server ids the links do not know cost no communication (as in ``pipeline.alpha``). The optimum is
re-evaluated with ``pipeline.alpha`` so that the reported value is eq. (7) itself, not the model's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix

from scheduling.model import Stage
from scheduling.pipeline import Link, alpha

_NO_COST = Link(1.0, None, None)


@dataclass(frozen=True)
class ExactMapping:
    counts: list[dict[str, int]]  # x_s^m of the best placement found (0-based stages)
    alpha: float  # eq. (7) of ``counts``
    optimal: bool  # False if the solver stopped at its time limit with a feasible placement


def _allreduce(st: Stage, x: int, link: Link) -> float:
    """f(x): AllReduce time (6) of a stage with x > 0 of its k replicas on a server."""
    k = st.replicas
    share = 2.0 * (k - 1) / k * st.params
    if k <= 1 or share <= 0:
        return 0.0
    if x < k:
        return share * link.gpus / (x * link.nic) if link.nic else 0.0
    return share / link.intra if link.intra else 0.0


def exact_mapping(
    stages: Sequence[Stage],
    servers: Sequence[tuple[str, int]],
    server_links: Mapping[str, Link],
    time_limit: float | None = None,
) -> ExactMapping:
    """The placement of the replicas of ``stages`` on ``servers`` (id, free GPUs) minimising alpha.

    The free GPUs may exceed the job's g_i (the ILP chooses the servers). Raises ValueError if
    they are fewer, RuntimeError if the solver finds no placement within ``time_limit`` seconds.
    """
    need = sum(st.replicas for st in stages)
    if sum(max(0, c) for _, c in servers) < need:
        raise ValueError(f"servers offer {sum(c for _, c in servers)} free GPUs for {need} replicas")
    cells = [(s, m) for s in range(len(stages)) for m in range(len(servers)) if servers[m][1] > 0]
    index: dict[tuple[int, int, int], int] = {}  # (s, m, v) -> column of z_{s,m,v}
    for s, m in cells:
        for v in range(min(stages[s].replicas, servers[m][1]) + 1):
            index[(s, m, v)] = len(index)
    n = len(index) + 1  # last column: alpha
    a_col = n - 1
    rows: list[tuple[dict[int, float], float, float]] = []  # (coefficients, lower, upper)

    for s, st in enumerate(stages):  # every replica placed
        placed = {col: float(v) for (s2, _m, v), col in index.items() if s2 == s and v}
        rows.append((placed, st.replicas, st.replicas))
    for m, (_, free) in enumerate(servers):  # GPUs of server m
        used = {col: float(v) for (_s, m2, v), col in index.items() if m2 == m and v}
        if used:
            rows.append((used, -np.inf, free))
    for s, m in cells:  # one value of x_s^m
        rows.append(({col: 1.0 for (s2, m2, _), col in index.items() if (s2, m2) == (s, m)}, 1, 1))

    for s, m in cells:  # alpha >= beta_s^m - M z_{s,m,0}
        st, (server, _) = stages[s], servers[m]
        link = server_links.get(server, _NO_COST)
        inv_nic = link.gpus / link.nic if link.nic else 0.0  # (5): x / ((x/g) B_inter) = g / B_inter
        inv_intra = 1.0 / link.intra if link.intra else 0.0
        const: float = st.forward + st.backward  # (4)
        coef: dict[int, float] = {}
        bound = const
        for j, d in ((s - 1, st.activation_in), (s + 1, st.activation_out)):
            if 0 <= j < len(stages) and d > 0:
                kj = stages[j].replicas
                const += 2.0 * d * inv_nic  # remote data if no replica of stage j is here
                per = 2.0 * d / kj * (inv_intra - inv_nic)  # each replica of j here: remote -> local
                bound += 2.0 * d * max(inv_nic, inv_intra)
                for v in range(1, min(kj, servers[m][1]) + 1):
                    col = index.get((j, m, v))
                    if col is not None:
                        coef[col] = coef.get(col, 0.0) + per * v
        f = [_allreduce(st, v, link) for v in range(1, min(st.replicas, servers[m][1]) + 1)]
        for v, fv in enumerate(f, start=1):
            coef[index[(s, m, v)]] = coef.get(index[(s, m, v)], 0.0) + fv
        big_m = bound + max(f, default=0.0)
        # alpha - sum coef z + M z0 >= const: alpha >= beta_s^m if x_s^m > 0, void if z0 = 1.
        row = {col: -c for col, c in coef.items()}
        row[index[(s, m, 0)]] = row.get(index[(s, m, 0)], 0.0) + big_m
        row[a_col] = 1.0
        rows.append((row, const, np.inf))

    mat = lil_matrix((len(rows), n))
    lower, upper = np.empty(len(rows)), np.empty(len(rows))
    for r, (coef_r, lo, hi) in enumerate(rows):
        for col, c in coef_r.items():
            mat[r, col] = c
        lower[r], upper[r] = lo, hi
    cost = np.zeros(n)
    cost[a_col] = 1.0
    integrality = np.ones(n)
    integrality[a_col] = 0
    res = milp(
        cost,
        constraints=LinearConstraint(mat.tocsr(), lower, upper),
        integrality=integrality,
        bounds=Bounds(np.zeros(n), np.r_[np.ones(n - 1), np.inf]),
        options={"time_limit": time_limit} if time_limit else {},
    )
    if res.x is None:
        raise RuntimeError(f"no placement found: {res.message}")
    counts: list[dict[str, int]] = [{} for _ in stages]
    for (s, m, v), col in index.items():
        if v and res.x[col] > 0.5:
            counts[s][servers[m][0]] = v
    return ExactMapping(counts, alpha(stages, counts, server_links), res.status == 0)


def placements(stages: Sequence[Stage], servers: Sequence[tuple[str, int]]) -> Iterator[list[dict[str, int]]]:
    """Every x_s^m with sum_m x_s^m = k_s and sum_s x_s^m <= free_m (brute force, tiny cases only)."""

    def splits(k: int, caps: list[int]) -> Iterator[tuple[int, ...]]:
        for combo in itertools.product(*(range(min(k, c) + 1) for c in caps)):
            if sum(combo) == k:
                yield combo

    def rec(s: int, caps: list[int]) -> Iterator[list[tuple[int, ...]]]:
        if s == len(stages):
            yield []
            return
        for combo in splits(stages[s].replicas, caps):
            for rest in rec(s + 1, [c - x for c, x in zip(caps, combo, strict=True)]):
                yield [combo, *rest]

    for rows in rec(0, [c for _, c in servers]):
        yield [{servers[m][0]: x for m, x in enumerate(row) if x} for row in rows]
