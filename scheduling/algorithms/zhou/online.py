"""A_online (Alg. 1), A_dual (Alg. 2) and A_maxweight (Alg. 3) of Zhou et al. (seeds/002, Secs. 4-6)
as an engine algorithm.

Rounds run at the slots tau_i = 2^(i-1) (1, 2, 4, ...) whenever jobs wait. Round i takes the jobs
J_i that arrived by tau_i and are not scheduled yet; A_dual calls A_maxweight for up to alpha_i
sub-rounds of tau_i slots each; every job A_maxweight schedules gets its window, worker/PS type and
counts per server for good (no preemption, no resizing); the others wait for round i + 1.

``start`` (where a round's schedule of iota* sub-rounds, iota* tau_i slots, runs; every variant but
"now" starts each sub-round from zero prices, Alg. 2 line 1, and so never lets rounds share a slot):
"early" (default): from tau_i, or when every earlier round's schedule has ended if that is later;
"paper": from iota* tau_i (Sec. 4.1: "from alpha tau_i to alpha tau_(i+1)", alpha = the sub-rounds
used), and not before the earlier rounds' schedules end; "now": from tau_i with prices starting from
the load earlier rounds committed there (not in the paper). docs/algorithms-zhou.md gives the reasons.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduling.algorithms.common import keep
from scheduling.algorithms.zhou import fast, mincost
from scheduling.algorithms.zhou.duals import Duals, Plan
from scheduling.algorithms.zhou.pricelog import SparsePriceLog
from scheduling.algorithms.zhou.spec import JobSpec, job_spec
from scheduling.engine import Decision, View
from scheduling.errors import InputError
from scheduling.model import Instance, Job
from scheduling.speed import Allocation

Solver = Callable[[JobSpec, Duals, int], Plan | None]


# Entries of one sub-round's price array (resources x servers x slots): a sub-round of 4,444 slots on
# 150 servers with 3 resources (the paper's T: 100-300). With the fast path's tables a run whose
# rounds reached 4,096 slots there peaked at 0.6 GB; without the bound a late arrival exhausts memory.
MAX_PRICE_CELLS = 2_000_000


@dataclass(frozen=True)
class Scheduled:
    """A job's committed schedule in absolute slots."""

    job: Job
    start: int
    end: int
    allocations: tuple[Allocation, ...]
    usage: np.ndarray  # per-slot demand on every server while it runs, [R, H]
    cost: float
    round: int


@dataclass
class Params:
    F: float  # upper bound of a job's weight over its resource consumption (Sec. 5.1)
    lam: float  # lambda of (11); 0: 2 T H R F + 1
    T: int  # T in lambda = 2 T H R F + 1
    alpha: int  # sub-rounds of A_dual; 0: the bound of Sec. 5.3 per round
    order: str  # order of the jobs in A_maxweight's loop (line 2)
    start: str  # "early" | "paper" | "now"
    ra_order: str  # Phi' of Algs. 6/7 line 4: "ascending" (as printed) | "descending"
    fast: bool  # numpy subroutines instead of the transcription
    tie: str = "completion"  # equal costs: "completion" (earliest t^+) | "loop" (first in loop order)


class Zhou:
    # The price log's wording of a decision with admitted=false. A_online: a job A_maxweight leaves
    # out of a sub-round waits for the next sub-round or round (Batch overrides it).
    DECLINED: str | None = "not scheduled in this sub-round"

    def __init__(self, instance: Instance, params: Params) -> None:
        cluster = instance.cluster
        self.cluster = cluster
        self.p = params
        self.resources = cluster.resource_names()
        self.server_ids = [s.id for s in cluster.servers]
        self.capacity = np.array([[s.capacity.get(r, 0.0) for s in cluster.servers] for r in self.resources])
        self.worker_ok = np.array([s.accepts("worker") for s in cluster.servers])
        self.ps_ok = np.array([s.accepts("ps") for s in cluster.servers])
        R, H = len(self.resources), len(self.server_ids)
        self.lam = params.lam if params.lam > 0 else 2.0 * params.T * H * R * params.F + 1.0
        self.gamma = 2.0 * math.log2(self.lam)  # approximation ratio of A_maxweight (Theorem 3)
        self.specs: dict[str, JobSpec] = {}
        self.waiting: dict[str, Job] = {}  # J_i: arrived, not scheduled, in arrival order
        self.scheduled: dict[str, Scheduled] = {}
        self.rejected: list[str] = []
        self.rounds: list[dict[str, Any]] = []
        self.price_events: list[tuple[int, str, bool, list[tuple[int, int, int, float]]]] = []
        self.extended = 0  # decisions where a job outran its planned window (should stay 0)

    # ---- the engine's view ------------------------------------------------------------------

    def decide(self, view: View) -> Decision:
        t = view.t
        for job in view.arrived:
            self.waiting[job.job_id] = job
        reject: list[str] = []
        if self.waiting and _is_round(t):
            reject = self.a_online_round(t)
        return self._decision(view, reject, _next_round(t) if self.waiting else None)

    def _decision(self, view: View, reject: list[str], next_round: int | None) -> Decision:
        """Run every committed schedule in its window; wake at the next start, end or ``next_round``."""
        t = view.t
        active = {jv.job.job_id for jv in view.jobs}
        allocations: list[Allocation] = []
        for job_id, s in self.scheduled.items():
            if job_id in active and s.start <= t < s.end:
                allocations.extend(s.allocations)
        allocations += self._overruns(view, t)
        wake = [s.start for s in self.scheduled.values() if s.start > t]
        wake += [s.end for s in self.scheduled.values() if s.end > t and s.job.job_id in active]
        if next_round is not None:
            wake.append(next_round)
        return Decision(allocations=tuple(allocations), reject=tuple(reject), wake_at=min(wake, default=None))

    def _overruns(self, view: View, t: int) -> list[Allocation]:
        """A job still unfinished after its window (rounding) keeps its servers where they are free."""
        late = [jv for jv in view.jobs if (s := self.scheduled.get(jv.job.job_id)) is not None and s.end <= t]
        if not late:
            return []
        ledger = view.ledger()
        active = {jv.job.job_id for jv in view.jobs}
        for s in self.scheduled.values():
            if s.start <= t < s.end and s.job.job_id in active:
                keep(ledger, s.job, s.allocations)
        out: list[Allocation] = []
        for jv in late:
            s = self.scheduled[jv.job.job_id]
            if keep(ledger, jv.job, s.allocations):
                out.extend(s.allocations)
                self.extended += 1
        return out

    # ---- A_online (Alg. 1) ------------------------------------------------------------------

    def a_online_round(self, tau: int) -> list[str]:
        """Alg. 1 lines 3-10 for the round at tau_i = ``tau``; returns jobs that can never run."""
        jobs = self._ordered(list(self.waiting.values()))  # J_i (lines 3-5)
        alpha = self.p.alpha if self.p.alpha > 0 else self.alpha_bound(jobs)
        fresh = self.p.start != "now"  # every sub-round starts from zero prices (Alg. 2 line 1)
        origin = tau  # "now": sub-round iota covers [tau + (iota-1) tau, tau + iota tau)
        plans, events, used = self.a_dual(jobs, tau, alpha, None if fresh else origin)
        if fresh and used:
            # Never before the end of every earlier round's schedule (rounds do not share slots, so
            # fresh prices are right); "paper": from alpha tau_i with alpha = the sub-rounds used;
            # "early": as soon as that is free, but not before tau_i (the round's decision time).
            earlier = max((s.end for s in self.scheduled.values()), default=0)
            origin = max(used * tau if self.p.start == "paper" else tau, earlier)
        for job_id, (iota, plan) in plans.items():  # lines 7-9
            start = origin + (iota - 1) * tau + plan.start
            self._commit(self.waiting.pop(job_id), plan, start, len(self.rounds))
        for iota, job_id, admitted, changes in events:
            base = origin + (iota - 1) * tau
            self.price_events.append((tau, job_id, admitted, [(r, h, base + s, v) for r, h, s, v in changes]))
        fresh_duals: list[Duals] = []  # one zero-price state for every check of the round (read only)
        never = [j.job_id for j in jobs if j.job_id in self.waiting and self._hopeless(j, tau, fresh_duals)]
        for job_id in never:
            del self.waiting[job_id]
            self.rejected.append(job_id)
        self.rounds.append(
            {"tau": tau, "jobs": len(jobs), "alpha": alpha, "subrounds": used, "scheduled": len(plans), "start": origin}
        )
        return never

    def alpha_bound(self, jobs: list[Job]) -> int:
        """Sec. 5.3: alpha = floor((log w(J_i) - log w_min) / (log gamma - log(gamma - 1))) + 1."""
        weights = [max(j.weight, 1e-12) for j in jobs]
        if self.gamma <= 1.0:
            return 1
        spread = math.log(sum(weights)) - math.log(min(weights))
        return math.floor(spread / math.log(self.gamma / (self.gamma - 1))) + 1

    # ---- A_dual (Alg. 2) --------------------------------------------------------------------

    def a_dual(
        self, jobs: list[Job], tau: int, alpha: int, origin: int | None
    ) -> tuple[dict[str, tuple[int, Plan]], list[tuple[int, str, bool, list[tuple[int, int, int, float]]]], int]:
        """Alg. 2: up to ``alpha`` calls of A_maxweight, sub-round iota on slots ((iota-1) tau, iota tau].

        ``origin`` None: every sub-round starts from zero prices (the paper); else the absolute
        slot of sub-round 1, whose committed load the prices start from. Returns the plans (with
        their sub-round), the price changes and the number of sub-rounds used.
        """
        plans: dict[str, tuple[int, Plan]] = {}
        events: list[tuple[int, str, bool, list[tuple[int, int, int, float]]]] = []
        used = 0
        for iota in range(1, alpha + 1):  # line 2
            left = [j for j in jobs if j.job_id not in plans]
            if not left:
                break  # Sec. 5.3: J_i^s = J_i ends the round early
            base = self._base(None if origin is None else origin + (iota - 1) * tau, tau)
            fresh = not base.any()
            duals = Duals(self.capacity, self.worker_ok, self.ps_ok, self.lam, base, self.p.tie)
            got = self.a_maxweight(left, duals, tau, _logger(events, iota))
            for job_id, plan in got.items():
                plans[job_id] = (iota, plan)
            if got:
                used = iota
            elif fresh:
                break  # the next sub-round would be the same problem again
        return plans, events, used

    # ---- A_maxweight (Alg. 3) ---------------------------------------------------------------

    def a_maxweight(
        self,
        jobs: list[Job],
        duals: Duals,
        tau: int,
        log: Callable[[str, bool, list[tuple[int, int, int, float]]], None],
    ) -> dict[str, Plan]:
        chosen: dict[str, Plan] = {}
        turned_away = False  # the previous job was: prices are high, try the bar first (fast path)
        # An older numpy package loaded by bench/zhou_scale.py --against has no weight bar.
        declines = getattr(fast, "declines", None) if self.p.fast else None
        for job in jobs:  # line 2
            spec = self.spec(job)
            if declines is not None and turned_away and declines(spec, duals, tau, self.p.ra_order == "ascending"):
                log(job.job_id, False, [])  # every schedule costs more than w_j: line 9 fails
                continue
            best = self.best_schedule(spec, duals, tau)  # lines 3-7
            # Line 9: u_j = w_j - cost_j > 0. A free schedule is also taken (a zero-weight job
            # would otherwise never run); it raises no price another job has paid.
            turned_away = best is None or not (job.weight - best.cost > 0 or best.cost == 0)
            if best is None or turned_away:
                log(job.job_id, False, [])
                continue
            opt = spec.option(best.worker_type, best.ps_type)
            before = duals.delta.copy()
            duals.commit(best, opt.e, opt.z)  # lines 10-14
            chosen[job.job_id] = best
            log(job.job_id, True, _changes(before, duals.delta, best))
        return chosen

    def best_schedule(self, spec: JobSpec, duals: Duals, tau: int) -> Plan | None:
        """Alg. 3 lines 3-7: A_mincost2's schedule, or A_mincost1's if better under the tie rule."""
        first, second = self._solvers(spec)
        best = first(spec, duals, tau)  # line 3 (A_mincost2: q_j = 1; all-reduce: A_RAmincost1)
        other = second(spec, duals, tau)  # line 4 (A_mincost1: q_j = 0; all-reduce: A_RAmincost2)
        if other is not None and (best is None or mincost.better(other, best, duals)):  # lines 5-7
            best = other
        return best

    def _solvers(self, spec: JobSpec) -> tuple[Solver, Solver]:
        asc = self.p.ra_order == "ascending"
        if self.p.fast:
            if spec.allreduce:
                return (lambda s, d, t: fast.ra_mincost(s, d, t, True, asc)), (
                    lambda s, d, t: fast.ra_mincost(s, d, t, False, asc)
                )
            return fast.mincost2, fast.mincost1
        if spec.allreduce:
            return (
                lambda s, d, t: mincost.a_ramincost1(s, d, t, asc),
                lambda s, d, t: mincost.a_ramincost2(s, d, t, asc),
            )
        return mincost.a_mincost2, mincost.a_mincost1

    # ---- helpers ----------------------------------------------------------------------------

    def spec(self, job: Job) -> JobSpec:
        s = self.specs.get(job.job_id)
        if s is None:
            s = self.specs[job.job_id] = job_spec(self.cluster, job)
        return s

    def _ordered(self, jobs: list[Job]) -> list[Job]:
        """The batch order of A_maxweight's loop (line 2: "for each job j in phi", order not given)."""
        if self.p.order == "weight":
            return sorted(jobs, key=lambda j: -j.weight)
        if self.p.order == "density":
            return sorted(jobs, key=lambda j: -j.weight / max(j.work_required, 1e-12))
        return jobs  # arrival order (the engine's (arrival, job id) order)

    def _base(self, start: int | None, slots: int) -> np.ndarray:
        """The committed load (resources x servers x ``slots`` from slot ``start``; None: none), the
        start of a sub-round's prices: refused beyond MAX_PRICE_CELLS entries (a clear error, not
        an exhausted memory, for traces spanning far more slots than the paper's T = 300)."""
        cells = len(self.resources) * len(self.server_ids) * slots
        if cells > MAX_PRICE_CELLS:
            raise InputError(
                f"a sub-round of {slots:,} slots on {len(self.server_ids):,} servers needs prices for {cells:,} "
                f"(resource, server, slot) entries, more than the {MAX_PRICE_CELLS:,} this implementation "
                "allows (the doubling rounds of zhou follow the latest arrival and the longest job, the "
                "batch algorithms' sub-round is tau): use longer slots (slot_seconds) or a smaller tau",
                field="trace",
            )
        base = np.zeros((len(self.resources), len(self.server_ids), slots))
        if start is None:
            return base
        for s in self.scheduled.values():
            lo, hi = max(s.start, start), min(s.end, start + slots)
            if lo < hi:
                base[:, :, lo - start : hi - start] += s.usage[:, :, None]
        return base

    def _commit(self, job: Job, plan: Plan, start: int, round_no: int) -> None:
        spec = self.spec(job)
        opt = spec.option(plan.worker_type, plan.ps_type)
        allocs = [Allocation(job.job_id, self.server_ids[h], "worker", plan.worker_type, c) for h, c in plan.workers]
        if plan.ps_type is not None:
            allocs += [Allocation(job.job_id, self.server_ids[h], "ps", plan.ps_type, c) for h, c in plan.ps]
        usage = plan.usage(opt.e, opt.z, len(self.server_ids))
        self.scheduled[job.job_id] = Scheduled(
            job, start, start + plan.length, tuple(allocs), usage, plan.cost, round_no
        )

    def _hopeless(self, job: Job, tau: int, shared: list[Duals] | None = None) -> bool:
        """A job no fresh sub-round of this length could place: it never fits the cluster.

        ``shared`` holds the zero-price state of the round's checks once made (nothing commits to
        it, so every job sees the same prices and the numpy path's tables are built once)."""
        spec = self.spec(job)
        if tau - 1 < spec.longest():
            return False
        if shared:
            duals = shared[0]
        else:
            duals = Duals(self.capacity, self.worker_ok, self.ps_ok, self.lam, self._base(None, tau))
            if shared is not None:
                shared.append(duals)
        first, second = self._solvers(spec)
        return first(spec, duals, tau) is None and second(spec, duals, tau) is None

    def report(self) -> Mapping[str, Any]:
        slots = max((s.end for s in self.scheduled.values()), default=1)
        slots = max([slots, *(c[2] + 1 for e in self.price_events for c in e[3])])
        log = SparsePriceLog(self.resources, self.server_ids, slots, label="delta", declined=self.DECLINED)
        for t, job_id, admitted, changes in self.price_events:
            log.record_changes(t, job_id, admitted, changes)
        return {
            "prices": log.to_dict(),
            "zhou": {
                "lambda": self.lam,
                "gamma": self.gamma,
                "rounds": self.rounds,
                "rejected": self.rejected,
                "overrun_decisions": self.extended,
                "jobs": {
                    j: {"round": s.round, "start": s.start, "end": s.end, "cost": s.cost}
                    for j, s in sorted(self.scheduled.items())
                },
            },
        }


def _is_round(t: int) -> bool:
    """tau_i = 2^(i-1): 1, 2, 4, 8, ..."""
    return t >= 1 and t & (t - 1) == 0


def _next_round(t: int) -> int:
    nxt = 1
    while nxt <= t:
        nxt *= 2
    return nxt


def _logger(
    events: list[tuple[int, str, bool, list[tuple[int, int, int, float]]]], iota: int
) -> Callable[[str, bool, list[tuple[int, int, int, float]]], None]:
    return lambda job, admitted, changes: events.append((iota, job, admitted, changes))


def _changes(before: np.ndarray, after: np.ndarray, plan: Plan) -> list[tuple[int, int, int, float]]:
    """Price entries the plan changed, as (resource, server, sub-round slot, new delta)."""
    window = slice(plan.start, plan.start + plan.length)
    r, h, s = np.nonzero(after[:, :, window] != before[:, :, window])
    return [
        (int(a), int(b), int(c) + plan.start, float(after[a, b, c + plan.start]))
        for a, b, c in zip(r, h, s, strict=True)
    ]
