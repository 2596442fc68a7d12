"""The OASiS paper's baselines (seeds/001, Sec. V-A) besides fifo and drf: ``rrh`` and ``dorm``.

* RRH, the risk-reward heuristic (Irwin et al. [38]): admission when the job's utility minus the
  delay cost its admission inflicts on the admitted jobs exceeds a threshold; at arrivals and
  completions every unfinished job continues (with its fixed workers/PSs) or pauses, by its future
  utility gain minus the delay cost it inflicts. Round-robin placement.
* Dorm (Sun et al. [18]): every job is admitted; at arrivals and completions the numbers of workers
  and PSs of all unfinished jobs are re-solved by a MILP maximising resource utilisation with a
  fairness constraint (a share of the equal dominant share) and an adjustment-overhead constraint
  (how many running jobs may be resized), with HiGHS (scipy.optimize.milp).

The exact rules, where the paper's one-sentence descriptions leave choices, are in the registry
semantics below and in docs/algorithms-oasis.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from scheduling.algorithms.baselines import fixed_configs
from scheduling.algorithms.common import OWN_DEMAND_TYPE, Config, keep, place, planned_rate
from scheduling.algorithms.oasis.online import per_worker_rate
from scheduling.capacity import Ledger
from scheduling.engine import Decision, JobView, View
from scheduling.model import Cluster, Instance, Job
from scheduling.speed import Allocation, demand_of


class RoundRobin:
    """Round-robin placement (Sec. V-A, schemes (i)-(iii)): instances go one at a time to the
    servers of their pool in cyclic order, continuing where the previous placement stopped."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.pools = {
            role: [s.id for s in cluster.servers if s.accepts(role) and s.pool != "any"]
            or [s.id for s in cluster.servers if s.accepts(role)]
            for role in ("worker", "ps")
        }
        self.shared = bool(set(self.pools["worker"]) & set(self.pools["ps"]))  # both on "any" servers
        self.next = {"worker": 0, "ps": 0}

    def place(self, ledger: Ledger, job: Job, parts: Sequence[tuple[str, int]]) -> list[Allocation] | None:
        """Book ``count`` instances per (role, count) part all-or-nothing; None if they do not fit
        (and then the ledger and the round-robin position are exactly as before)."""
        plan = self.plan(ledger, job, parts)
        if any(len(taken) < count for taken, (_role, count) in zip(plan, parts, strict=True)):
            return None
        return self.commit(ledger, job, [(role, taken) for taken, (role, _count) in zip(plan, parts, strict=True)])

    def plan(self, ledger: Ledger, job: Job, parts: Sequence[tuple[str, int]]) -> list[list[int]]:
        """Where ``place`` would put each part's instances now: positions in the role's pool, in
        booking order. A part that does not fit gets fewer positions than its count, and the
        parts after it none. Nothing is booked (the instances go on a copy of ``ledger``: releasing
        them would subtract what was added, and (u + a) - a is not always u in floating point)
        and the round-robin position stays.

        Per part, instances go one at a time to the pool's servers in cyclic order until ``count``
        are placed or a whole cycle places none. Only the part's own takes change its pool's
        bookings meanwhile, each only its server's, so a server takes instances until its first
        refusal and refuses from then on (it is not asked again): a part places min(count, what
        the pool holds one instance after another), and a plan for fewer instances is a prefix of
        the same positions.
        """
        scratch, pointers, short = ledger.copy(), dict(self.next), False
        plan: list[list[int]] = []
        for role, count in parts:
            if short:
                plan.append([])
                continue
            servers, demand = self.pools[role], self._demand(job, role)
            start = pointers[role] % len(servers) if servers else 0
            ring = list(range(start, len(servers))) + list(range(start))  # cyclic order from the pointer
            taken: list[int] = []
            while len(taken) < count and ring:
                taking = []
                for i in ring:
                    if scratch.take(servers[i], role, demand, 1):
                        taken.append(i)
                        taking.append(i)
                        if len(taken) == count:
                            break
                ring = taking
            plan.append(taken)
            pointers[role] = taken[-1] + 1 if taken else pointers[role]
            short = len(taken) < count
        return plan

    def commit(self, ledger: Ledger, job: Job, plan: Sequence[tuple[str, list[int]]]) -> list[Allocation]:
        """Book a plan's (role, positions) parts, in its order (the copy's additions in the copy's
        order: the same sums), and move each role's position past its last instance."""
        merged: dict[tuple[str, str], int] = {}
        for role, taken in plan:
            servers, demand = self.pools[role], self._demand(job, role)
            for i in taken:
                ledger.book(servers[i], demand, 1)
                merged[(servers[i], role)] = merged.get((servers[i], role), 0) + 1
            if taken:
                self.next[role] = (taken[-1] + 1) % len(servers)
        return [Allocation(job.job_id, s, r, OWN_DEMAND_TYPE, n) for (s, r), n in merged.items()]

    def _demand(self, job: Job, role: str) -> dict[str, float]:
        return dict(demand_of(self.cluster, job, role, OWN_DEMAND_TYPE) or {})


def _ps_for(job: Job, workers: int) -> int:
    """PSs for ``workers`` workers under (6)-(7): ceil(workers b_i / B_i), at least one."""
    b, big_b = (job.worker_demand or {}).get("bw", 0.0), (job.ps_demand or {}).get("bw", 0.0)
    if workers <= 0:
        return 0
    return max(1, min(workers, math.ceil(workers * b / big_b - 1e-9))) if big_b > 0 else 1


def _bandwidth_config(cluster: Cluster, job: Job, cfg: Config) -> Config:
    """``cfg`` with ceil(workers b_i / B_i) PSs (constraints (6)-(7)); fewer workers if an empty
    cluster cannot hold that."""
    if cfg.ps_type is None:
        return cfg
    workers = cfg.workers
    while True:
        out = Config(cfg.worker_type, workers, cfg.ps_type, _ps_for(job, workers))
        if workers <= 1 or place(Ledger(cluster), job, out) is not None:
            return out
        workers -= 1


# ---- RRH ----------------------------------------------------------------------------------------


class Rrh:
    def __init__(self, instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> None:
        self.cluster = instance.cluster
        self.configs = fixed_configs(instance, params, rng)
        if params["ps_rule"] == "bandwidth":  # the fewest PSs that honour (6) and (7) of the model
            for job in instance.jobs:
                self.configs.configs[job.job_id] = _bandwidth_config(self.cluster, job, self.configs[job.job_id])
        self.threshold = float(params["threshold"])
        self.rr = RoundRobin(self.cluster)
        capacity = {r: self.cluster.total_capacity(r) for r in self.cluster.resource_names()}
        self.share: dict[str, float] = {}  # dominant share of each job's fixed configuration
        for job in instance.jobs:
            cfg = self.configs[job.job_id]
            used: dict[str, float] = {}
            for role, type_id, n in (("worker", cfg.worker_type, cfg.workers), ("ps", cfg.ps_type, cfg.ps)):
                for r, a in (demand_of(self.cluster, job, role, type_id or "") or {}).items():
                    used[r] = used.get(r, 0.0) + a * n
            self.share[job.job_id] = max((a / capacity[r] for r, a in used.items() if capacity.get(r)), default=0.0)
        self.resume = params["pause"] == "resume"
        self.paused: set[str] = set()  # paused for good (pause=final only)

    def _duration(self, job: Job, remaining: float) -> int:
        r = planned_rate(self.cluster, job, self.configs[job.job_id])
        return max(1, math.ceil(remaining / r - 1e-9)) if r > 0 else 1 << 20

    def _delay_cost(self, delay: float, others: Sequence[tuple[Job, int]]) -> float:
        """Utility the ``others`` (job, estimated completion) lose if each finishes ``delay`` later."""
        return sum(
            job.utility.value(end - job.arrival) - job.utility.value(end + delay - job.arrival) for job, end in others
        )

    def decide(self, view: View) -> Decision:
        t = view.t
        est = {jv.job.job_id: t + self._duration(jv.job, jv.remaining) for jv in view.jobs}
        admitted = [jv for jv in view.jobs if jv.admitted and jv.job.job_id not in self.paused]
        admit, reject = [], []
        for job in view.arrived:  # admission: utility minus delay cost above the threshold
            dur = self._duration(job, job.work_required)
            reward = job.utility.value(t + dur - job.arrival)
            cost = self._delay_cost(dur * self.share[job.job_id], [(jv.job, est[jv.job.job_id]) for jv in admitted])
            if reward - cost > self.threshold:
                admit.append(job.job_id)
                admitted.append(JobView(job, 0.0, 0.0, True, None, False))
            else:
                reject.append(job.job_id)
        # continue or pause: future utility gain minus the delay cost inflicted on the others
        score: dict[str, float] = {}
        for jv in admitted:
            job_id = jv.job.job_id
            rem = est[job_id] - t
            gain = jv.job.utility.value(est[job_id] - jv.job.arrival)
            others = [(o.job, est[o.job.job_id]) for o in admitted if o.job.job_id != job_id]
            score[job_id] = gain - self._delay_cost(rem * self.share[job_id], others)
        ledger = view.ledger()
        current: dict[str, list[Allocation]] = {}
        for a in view.allocations:
            current.setdefault(a.job_id, []).append(a)
        chosen: list[Allocation] = []
        for jv in admitted:  # running jobs keep their servers unless they pause
            job_id = jv.job.job_id
            if not jv.running:
                continue
            if score[job_id] > 0 and keep(ledger, jv.job, current[job_id]):
                chosen += current[job_id]
            elif not self.resume:
                self.paused.add(job_id)
        # waiting jobs (with pause=resume also those paused earlier) start when their score is positive
        waiting = [jv for jv in admitted if not jv.running and score[jv.job.job_id] > 0]
        waiting.sort(key=lambda jv: (-score[jv.job.job_id], jv.job.arrival, jv.job.job_id))
        for jv in waiting:
            cfg = self.configs[jv.job.job_id]
            placed = self.rr.place(ledger, jv.job, [("worker", cfg.workers), ("ps", cfg.ps if cfg.ps_type else 0)])
            if placed is not None:
                chosen += placed
        return Decision(tuple(chosen), tuple(admit), tuple(reject))  # the engine counts the pauses

    def report(self) -> Mapping[str, Any]:
        return {}


# ---- Dorm ---------------------------------------------------------------------------------------


def _ps_count(job: Job, workers: int, ps: int) -> int:
    """Dorm's PSs for ``workers`` workers: the MILP's ``ps`` (at most one per worker), and at least
    the PSs (6)-(7) need; it never falls as ``workers`` grows."""
    return max(_ps_for(job, workers), min(ps, workers))


class Dorm:
    def __init__(self, instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> None:
        self.cluster = instance.cluster
        self.resources = list(self.cluster.resource_names())
        self.cap = {
            role: np.array(
                [sum(s.capacity.get(r, 0.0) for s in self.cluster.servers if s.pool == role) for r in self.resources]
            )
            for role in ("worker", "ps")
        }
        self.fairness = float(params["fairness"])
        self.adjust = float(params["adjust"])
        self.time_limit = float(params["time_limit"])
        self.gap = float(params["mip_gap"])
        self.rr = RoundRobin(self.cluster)
        self.solves = 0
        self.fallbacks = 0  # solves where the fairness constraint had to be dropped
        self.rate = {j.job_id: per_worker_rate(self.cluster, j) for j in instance.jobs}
        self.stepwise = False  # True: a full try per worker count, from the MILP's down (see _place)

    def _vec(self, demand: Mapping[str, float] | None) -> np.ndarray:
        return np.array([float((demand or {}).get(r, 0.0)) for r in self.resources])

    def solve(
        self, jobs: Sequence[JobView], current: Mapping[str, int], fair: bool
    ) -> dict[str, tuple[int, int]] | None:
        """The MILP: worker counts n_i, PS counts m_i, change flags c_i (running jobs)."""
        from scipy.optimize import LinearConstraint, milp  # SciPy loads only when Dorm solves

        obj, matrix, hi, bounds = self.model(jobs, current, fair)
        res = milp(
            obj,
            constraints=LinearConstraint(matrix, np.full(len(hi), -np.inf), hi),
            integrality=np.ones(len(obj)),
            bounds=bounds,
            options={"time_limit": self.time_limit, "mip_rel_gap": self.gap, "disp": False},
        )
        self.solves += 1
        if res.x is None:
            return None
        x = np.round(res.x).astype(int)
        n = len(jobs)
        return {jv.job.job_id: (int(x[i]), int(x[n + i])) for i, jv in enumerate(jobs)}

    def model(
        self, jobs: Sequence[JobView], current: Mapping[str, int], fair: bool, dense: bool = False
    ) -> tuple[np.ndarray, Any, np.ndarray, Any]:
        """The MILP's objective, constraint matrix (rows <= ``hi``), upper bounds and variable bounds.

        The matrix is built from its non-zero entries, as sparse CSC: the form ``scipy.optimize.milp``
        hands HiGHS, and what it makes of a dense matrix too (zeros dropped). ``dense`` builds the
        dense array instead (the reference the tests compare against: the same CSC arrays)."""
        from scipy.optimize import Bounds
        from scipy.sparse import coo_array

        n = len(jobs)
        running = [i for i, jv in enumerate(jobs) if current.get(jv.job.job_id, 0) > 0]
        nv = 2 * n + len(running)  # [n_0..n_{n-1}, m_0..m_{n-1}, c_...]
        cw, cp = self.cap["worker"], self.cap["ps"]
        obj = np.zeros(nv)
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        hi: list[float] = []

        def add(entries: Sequence[tuple[int, float]], upper: float) -> None:
            for col, value in entries:
                rows.append(len(hi))
                cols.append(col)
                vals.append(value)
            hi.append(upper)

        w = [self._vec(jv.job.worker_demand) for jv in jobs]
        s = [self._vec(jv.job.ps_demand) for jv in jobs]
        for i in range(n):  # maximise utilisation: sum of normalised resource use
            obj[i] = -sum(w[i][r] / cw[r] for r in range(len(self.resources)) if cw[r] > 0)
            obj[n + i] = -sum(s[i][r] / cp[r] for r in range(len(self.resources)) if cp[r] > 0)
        for r in range(len(self.resources)):  # aggregate capacities (4)-(5)
            add([(i, float(w[i][r])) for i in range(n)], cw[r])
            add([(n + i, float(s[i][r])) for i in range(n)], cp[r])
        for i, jv in enumerate(jobs):  # (6) PS bandwidth, (7) PSs <= workers
            b, big_b = (jv.job.worker_demand or {}).get("bw", 0.0), (jv.job.ps_demand or {}).get("bw", 0.0)
            add([(i, b), (n + i, -big_b)], 0.0)
            add([(n + i, 1.0), (i, -1.0)], 0.0)
        upper = np.array([float(jv.job.max_workers()) for jv in jobs])
        lower = np.zeros(n)
        if fair:  # fairness: at least `fairness` x the workers of an equal dominant share (capped)
            for i in range(n):
                dom = max((w[i][r] / cw[r] for r in range(len(self.resources)) if cw[r] > 0), default=0.0)
                equal = (1.0 / n) / dom if dom > 0 else upper[i]
                lower[i] = math.floor(self.fairness * min(upper[i], equal))
        limit = max(1, math.ceil(self.adjust * len(running))) if running else 0
        for k, i in enumerate(running):  # adjustment overhead: |n_i - n_i^old| <= N_i c_i
            old = current[jobs[i].job.job_id]
            for sign in (1.0, -1.0):
                add([(i, sign), (2 * n + k, -upper[i])], sign * old)
        if running:
            add([(2 * n + k, 1.0) for k in range(len(running))], float(limit))
        bounds = Bounds(
            np.concatenate([lower, np.zeros(n), np.zeros(len(running))]),
            np.concatenate([upper, upper, np.ones(len(running))]),
        )
        shape = (len(hi), nv)
        if dense:
            matrix: Any = np.zeros(shape)
            matrix[rows, cols] = vals  # every (row, column) is set once
        else:
            matrix = coo_array((np.array(vals, dtype=float), (rows, cols)), shape=shape).tocsc()
            matrix.eliminate_zeros()  # a dense matrix's zeros are not entries
            matrix.sort_indices()
        return obj, matrix, np.array(hi), bounds

    def decide(self, view: View) -> Decision:
        jobs = list(view.jobs)
        current: dict[str, list[Allocation]] = {}
        for a in view.allocations:
            current.setdefault(a.job_id, []).append(a)
        counts = {j: sum(a.count for a in al if a.role == "worker") for j, al in current.items()}
        target = self.solve(jobs, counts, fair=True)
        if target is None:
            self.fallbacks += 1
            target = self.solve(jobs, counts, fair=False) or {j: (c, c) for j, c in counts.items()}
        ledger = view.ledger()
        chosen: list[Allocation] = []
        order = sorted(jobs, key=lambda jv: (counts.get(jv.job.job_id, 0) == 0, jv.job.arrival, jv.job.job_id))
        for jv in order:  # unchanged running jobs keep their servers; the others are placed anew
            job_id = jv.job.job_id
            n, m = target.get(job_id, (0, 0))
            if n > 0 and n == counts.get(job_id, 0) and keep(ledger, jv.job, current[job_id]):
                chosen += current[job_id]
                continue
            placed = self._place(ledger, jv.job, n, m)
            if placed is not None:
                chosen += placed
        admit = tuple(job.job_id for job in view.arrived)
        return Decision(tuple(chosen), admit)

    def _place(self, ledger: Ledger, job: Job, n: int, m: int) -> list[Allocation] | None:
        """Round-robin placement of the most workers, at most the MILP's ``n`` (the MILP sees
        aggregate capacity only), with their ``_ps_count`` PSs; None if not one worker fits.

        The rule is to try n, n - 1, ... until a try fits (``stepwise``, kept for the tests). With
        separate worker and PS pools (the only layout Dorm runs on, OASIS_MODEL; with shared ones
        the rule itself runs) two plans give the same count and the same servers
        (``RoundRobin.plan``: a part places min(count, what its pool holds), and a plan for fewer
        instances is a prefix of the same positions):
        * workers: w fit exactly when w <= len(workers), whatever the PSs;
        * PSs: they go to servers no worker uses, so their room R does not depend on w, and the
          PSs of w workers fit exactly when _ps_count(w) <= R; as _ps_count never falls with w,
          that is _ps_count(w) <= len(ps) for a plan of at least _ps_count(w) PSs.
        So the first count from the top that passes both is the rule's; tries that fail or are
        skipped book nothing and leave the round-robin position (plans work on a copy).
        """
        if self.stepwise or self.rr.shared:
            while n > 0:  # the MILP sees aggregate capacity: shrink until round-robin places it
                placed = self.rr.place(ledger, job, [("worker", n), ("ps", _ps_count(job, n, m))])
                if placed is not None:
                    return placed
                n -= 1
            return None
        if n <= 0:
            return None
        workers, ps = self.rr.plan(ledger, job, [("worker", n), ("ps", _ps_count(job, n, m))])
        w = len(workers)
        if 0 < w < n:  # the plan stopped at the workers: the PSs' room, for w workers' PSs
            ps = self.rr.plan(ledger, job, [("ps", _ps_count(job, w, m))])[0]
        while w > 0 and _ps_count(job, w, m) > len(ps):
            w -= 1
        if w == 0:
            return None
        return self.rr.commit(ledger, job, [("worker", workers[:w]), ("ps", ps[: _ps_count(job, w, m)])])

    def report(self) -> Mapping[str, Any]:
        return {"dorm": {"solves": self.solves, "fairness_dropped": self.fallbacks}}
