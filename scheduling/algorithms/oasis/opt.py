"""``offline-opt``: the exact optimum of OASiS's offline problem (1) as an ILP (HiGHS), small instances.

Problem (1) with the completion slot of (8) linearised by binaries e_it ("job i completes in slot
t"; x_i = sum_t e_it):

    max  sum_i sum_t f_i(t + 1 - a_i) e_it
    s.t. sum_t sum_h y_iht >= ceil(D_i / rate_i) sum_t e_it          (2), in worker-slots
         sum_h y_iht <= N_i sum_{t' >= t} e_it'                        (3), (8): nothing after completion
         sum_i w_i^r y_iht <= c_h^r,   sum_i s_i^r z_ikt <= c_k^r       (4), (5)
         b_i sum_h y_iht <= B_i sum_k z_ikt,   sum_k z_ikt <= sum_h y_iht   (6), (7)
         y, z integer >= 0, only for t >= a_i (9), (10); e binary; sum_t e_it <= 1

Slots are 0-based and a job ending in slot t has JCT t + 1 - a_i, as in ``oasis``. The work of (2)
is counted in worker-slots, ceil(D_i / rate_i) = ceil(E_i N_i M_i (tau_i + 2 e_i / b_i)), so that
the engine, which runs the solution, completes the job by its slot. The solver knows every job in
advance (offline); its schedule is then replayed slot by slot through the engine and validated.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from scheduling.algorithms.common import OWN_DEMAND_TYPE
from scheduling.algorithms.oasis.online import OASIS_MODEL, per_worker_rate
from scheduling.engine import Decision, View
from scheduling.model import Instance
from scheduling.registry import AlgorithmSpec, Feature, Param, register
from scheduling.speed import Allocation

MAX_VARIABLES = 50_000


def _too_big(instance: Instance) -> str | None:
    horizon = instance.cluster.horizon or 0
    servers = sum(1 for s in instance.cluster.servers if s.pool in ("worker", "ps"))
    size = sum(max(0, horizon - j.arrival) * (servers + 1) for j in instance.jobs)
    if size > MAX_VARIABLES:
        return f"the ILP would have {size:,} integer variables (jobs x slots x servers), above {MAX_VARIABLES:,}"
    return None


SMALL = Feature("small-instance", "a small instance (about 10 jobs, 10 slots, a few servers)", _too_big)


class OfflineOpt:
    def __init__(self, instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> None:
        cluster = instance.cluster
        assert cluster.horizon is not None
        self.horizon = horizon = cluster.horizon
        self.time_limit = float(params["time_limit"])
        res = list(cluster.resource_names())
        ws = [s for s in cluster.servers if s.pool == "worker"]
        ps = [s for s in cluster.servers if s.pool == "ps"]
        jobs = list(instance.jobs)
        cols: dict[tuple[str, int, int, int], int] = {}  # (kind, job, server, slot) -> column
        for i, job in enumerate(jobs):
            for t in range(job.arrival, horizon):
                cols[("e", i, 0, t)] = len(cols)
                for h in range(len(ws)):
                    cols[("y", i, h, t)] = len(cols)
                for k in range(len(ps)):
                    cols[("z", i, k, t)] = len(cols)
        n = len(cols)
        obj = np.zeros(n)
        upper = np.zeros(n)
        data: list[float] = []
        row_idx: list[int] = []
        col_idx: list[int] = []
        lo: list[float] = []
        hi: list[float] = []

        def row(entries: list[tuple[int, float]], low: float, high: float) -> None:
            r = len(lo)
            for c, v in entries:
                row_idx.append(r)
                col_idx.append(c)
                data.append(v)
            lo.append(low)
            hi.append(high)

        for i, job in enumerate(jobs):
            wd, pd = job.worker_demand or {}, job.ps_demand or {}
            slots = range(job.arrival, horizon)
            need = math.ceil(job.work_required / per_worker_rate(cluster, job) - 1e-9)
            n_max = job.max_workers()
            for t in slots:
                obj[cols[("e", i, 0, t)]] = -job.utility.value(t + 1 - job.arrival)
                upper[cols[("e", i, 0, t)]] = 1
                for h in range(len(ws)):
                    upper[cols[("y", i, h, t)]] = n_max
                for k in range(len(ps)):
                    upper[cols[("z", i, k, t)]] = n_max
            row([(cols[("e", i, 0, t)], 1.0) for t in slots], -np.inf, 1.0)  # x_i <= 1
            work = [(cols[("y", i, h, t)], 1.0) for t in slots for h in range(len(ws))]  # (2)
            row(work + [(cols[("e", i, 0, t)], -float(need)) for t in slots], 0.0, np.inf)
            b, big_b = float(wd.get("bw", 0.0)), float(pd.get("bw", 0.0))
            for t in slots:
                ys = [(cols[("y", i, h, t)], 1.0) for h in range(len(ws))]
                zs = [(cols[("z", i, k, t)], 1.0) for k in range(len(ps))]
                later = [(cols[("e", i, 0, u)], -float(n_max)) for u in range(t, horizon)]
                row(ys + later, -np.inf, 0.0)  # (3), (8)
                row([(c, b) for c, _ in ys] + [(c, -big_b) for c, _ in zs], -np.inf, 0.0)  # (6)
                row(zs + [(c, -1.0) for c, _ in ys], -np.inf, 0.0)  # (7)
        for pool, kind, key in ((ws, "y", "worker_demand"), (ps, "z", "ps_demand")):  # (4), (5)
            for h, server in enumerate(pool):
                for r in res:
                    for t in range(horizon):
                        entries = []
                        for i, job in enumerate(jobs):
                            a = float((getattr(job, key) or {}).get(r, 0.0))
                            if a > 0 and t >= job.arrival:
                                entries.append((cols[(kind, i, h, t)], a))
                        if entries:
                            row(entries, -np.inf, float(server.capacity.get(r, 0.0)))
        matrix = sparse.csr_matrix((data, (row_idx, col_idx)), shape=(len(lo), n))
        started = time.perf_counter()
        result = milp(
            obj,
            constraints=LinearConstraint(matrix, np.array(lo), np.array(hi)),
            integrality=np.ones(n),
            bounds=Bounds(np.zeros(n), upper),
            options={"time_limit": self.time_limit, "disp": False},
        )
        self.seconds = time.perf_counter() - started
        self.status = int(result.status)
        self.message = str(result.message)
        x = np.round(result.x).astype(int) if result.x is not None else np.zeros(n, dtype=int)
        self.objective = float(-result.fun) if result.x is not None else 0.0
        bound = getattr(result, "mip_dual_bound", None)
        self.bound = float(-bound) if bound is not None and np.isfinite(bound) else None
        self.admitted = {jobs[i].job_id for (kind, i, _h, t), c in cols.items() if kind == "e" and x[c] > 0}
        self.plan: dict[int, list[Allocation]] = {}
        for (kind, i, h, t), c in cols.items():
            if kind != "e" and x[c] > 0 and jobs[i].job_id in self.admitted:
                sid = ws[h].id if kind == "y" else ps[h].id
                role = "worker" if kind == "y" else "ps"
                self.plan.setdefault(t, []).append(Allocation(jobs[i].job_id, sid, role, OWN_DEMAND_TYPE, int(x[c])))

    def decide(self, view: View) -> Decision:
        t = view.t
        live = {jv.job.job_id for jv in view.jobs}
        admit = tuple(j.job_id for j in view.arrived if j.job_id in self.admitted)
        reject = tuple(j.job_id for j in view.arrived if j.job_id not in self.admitted)
        allocs = tuple(a for a in self.plan.get(t, []) if a.job_id in live and a.job_id not in reject)
        later = [s for s in self.plan if s > t]
        return Decision(allocs, admit, reject, wake_at=min(later) if later else None)

    def report(self) -> Mapping[str, Any]:
        gap = None
        if self.bound is not None and self.objective > 0:
            gap = max(0.0, (self.bound - self.objective) / self.objective)
        return {
            "offline_opt": {
                "status": self.status,
                "message": self.message,
                "objective": self.objective,
                "bound": self.bound,
                "gap": gap,
                "seconds": self.seconds,
            }
        }


register(
    AlgorithmSpec(
        name="offline-opt",
        kind="reference",
        online=False,  # the optimum over the whole trace: it sees every job by definition
        summary="Exact offline optimum of OASiS's problem (1) as an ILP (HiGHS); small instances only.",
        semantics=(
            "Knows every job in advance and solves problem (1) exactly: admission x_i, workers "
            "y_iht and PSs z_ikt per server and slot, completion slot by binaries e_it, with "
            "constraints (2)-(10) (work counted in whole worker-slots). The solution is replayed "
            "through the engine. With `time_limit` reached the best solution found is used and "
            "the result's offline_opt field gives the bound and gap. Size grows as jobs x servers "
            "x slots: meant for about 10 jobs, 10 slots and a few servers (Fig. 5)."
        ),
        reference="Bao et al., OASiS, INFOCOM'18, problem (1), Fig. 5 (seeds/001)",
        factory=OfflineOpt,
        params=(Param("time_limit", float, 60.0, "HiGHS time limit, seconds.", min=0.1),),
        needs=(OASIS_MODEL, SMALL),
    )
)
