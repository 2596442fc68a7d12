"""The offline batch problem of Zhou et al. Sec. 5.1 (problem (7): the largest total weight of jobs
that complete by a deadline) as engine algorithms, for Fig. 8: A_maxweight (Alg. 3) alone, and
Jain et al.'s greedy [44] (ACM TOPC 2015), the paper's comparison.

Every slot t where jobs arrive makes one batch phi of those jobs with deadline tau slots later: each
job gets a window inside [t, t + tau - 1), so it completes by slot t + tau - 1 (the paper's time tau,
times being 1-based there; the last slot of the batch stays empty, as in a sub-round of Alg. 2), or
is rejected, once; nothing waits for a later batch. Committed windows of earlier batches are load in
the later ones. With every job arriving at slot 0 this is exactly problem (7), and the result's
weight of jobs completed is the figure Fig. 8 plots.

- ``zhou-maxweight``: Alg. 3 with the prices of eq. (11) (lambda = 2 T H R F + 1 unless given),
  A_mincost2 then A_mincost1 (or A_RAmincost1/2), admitted iff u_j = w_j - cost_j > 0.
- ``jain-greedy``: jobs by value density w_j / (the job's GPU-slots in its fastest configuration),
  largest first; each gets the earliest-completing schedule the same subroutines find at zero
  prices (lambda = 1 keeps every delta at 0 while beta tracks the load; A_mincost2's or
  A_mincost1's, whichever completes earlier, as Alg. 3 lines 3-7 compare them under
  tie=completion) and keeps it; a job that fits is never turned away.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduling.algorithms.zhou.duals import Duals, Plan
from scheduling.algorithms.zhou.online import Params, Zhou, _logger
from scheduling.engine import Decision, View
from scheduling.model import Instance, Job


class Batch(Zhou):
    """One batch per arrival slot, deadline ``tau`` slots later (problem (7))."""

    DECLINED = None  # each job is decided once: admitted=false is a rejection (the log's default wording)

    def __init__(self, instance: Instance, params: Params, tau: int, greedy: bool) -> None:
        super().__init__(instance, params)
        self.tau = tau
        self.greedy = greedy
        self.batches: list[dict[str, int]] = []

    def decide(self, view: View) -> Decision:
        reject = self.batch(list(view.arrived), view.t) if view.arrived else []
        return self._decision(view, reject, None)

    def batch(self, jobs: list[Job], t: int) -> list[str]:
        """Schedule the batch ``jobs`` at slot ``t``; returns the jobs left out (rejected)."""
        base = self._base(t, self.tau)
        duals = Duals(self.capacity, self.worker_ok, self.ps_ok, 1.0 if self.greedy else self.lam, base, self.p.tie)
        if self.greedy:
            plans = self.jain_greedy(jobs, duals)
        else:
            events: list[tuple[int, str, bool, list[tuple[int, int, int, float]]]] = []
            plans = self.a_maxweight(self._ordered(jobs), duals, self.tau, _logger(events, 1))
            for _, job_id, admitted, changes in events:  # sub-round slot s is absolute slot t + s
                self.price_events.append((t, job_id, admitted, [(r, h, t + s, v) for r, h, s, v in changes]))
        for job in jobs:
            if job.job_id in plans:
                self._commit(job, plans[job.job_id], t + plans[job.job_id].start, len(self.batches))
        left = [j.job_id for j in jobs if j.job_id not in plans]
        self.rejected += left
        self.batches.append({"t": t, "jobs": len(jobs), "scheduled": len(plans)})
        return left

    def jain_greedy(self, jobs: list[Job], duals: Duals) -> dict[str, Plan]:
        """Value density order; each job's earliest-completing feasible schedule at zero prices."""
        chosen: dict[str, Plan] = {}
        for job in sorted(jobs, key=lambda j: -self.density(j)):
            spec = self.spec(job)
            plan = self.best_schedule(spec, duals, self.tau)  # at zero prices: the earliest-completing
            if plan is None:
                continue
            opt = spec.option(plan.worker_type, plan.ps_type)
            duals.commit(plan, opt.e, opt.z)
            chosen[job.job_id] = plan
        return chosen

    def density(self, job: Job) -> float:
        """w_j over the job's GPU-slots in its first (fastest) option at one worker's rate (eq. (1)/(14)
        with one worker): the worker's GPUs x D_j (``chunks``) workers x the whole slots D_j workers at
        that rate need, i.e. its work over that rate, rounded up to whole slots of D_j workers."""
        spec = self.spec(job)
        opt = spec.options[0]
        gpus = float(opt.e[self.resources.index("gpu")]) if "gpu" in self.resources else 1.0
        gpu_slots = gpus * spec.chunks * spec.duration(spec.rho(opt, 1, False), spec.chunks)
        return job.weight / max(gpu_slots, 1e-12)

    def report(self) -> Mapping[str, Any]:
        out = dict(super().report())
        zhou = out.pop("zhou")
        out["batch"] = {
            "tau": self.tau,
            "batches": self.batches,
            "rejected": zhou["rejected"],
            "overrun_decisions": zhou["overrun_decisions"],
            "jobs": zhou["jobs"],
        }
        if self.greedy:
            del out["prices"]  # every delta stays 0
        else:
            out["batch"]["lambda"] = zhou["lambda"]
        return out
