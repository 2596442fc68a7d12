"""The offline batch problem of Sec. 5.1 (maximum total weight completed by tau) and Jain et al.'s
greedy (ACM TOPC 2015, [44]) as Fig. 8's comparison for A_maxweight.

``jain_greedy``: jobs by value density w_j / (ideal GPU-slots of the job) largest first; each gets
the schedule the same subroutines as A_mincost pick under zero prices (with tie="completion", the
default: the earliest-completing one), and keeps it; no prices, no rejection of a job that fits.
``maxweight_batch``: A_maxweight (Alg. 3) with the prices of eq. (11).
"""

from __future__ import annotations

import numpy as np

from scheduling.algorithms.zhou.duals import Duals
from scheduling.algorithms.zhou.online import Zhou
from scheduling.model import Job


def _duals(zhou: Zhou, tau: int, lam: float) -> Duals:
    base = np.zeros((len(zhou.resources), len(zhou.server_ids), tau))
    return Duals(zhou.capacity, zhou.worker_ok, zhou.ps_ok, lam, base, zhou.p.tie)


def maxweight_batch(zhou: Zhou, jobs: list[Job], tau: int) -> float:
    """Total weight A_maxweight schedules to complete by ``tau`` (jobs in ``zhou``'s batch order)."""
    chosen = zhou.a_maxweight(zhou._ordered(jobs), _duals(zhou, tau, zhou.lam), tau, lambda *_: None)
    return sum(j.weight for j in jobs if j.job_id in chosen)


def jain_greedy(zhou: Zhou, jobs: list[Job], tau: int) -> float:
    """Total weight Jain et al.'s greedy schedules to complete by ``tau``."""
    duals = _duals(zhou, tau, 1.0)  # lambda = 1: every price stays 0, beta still tracks the load

    def density(job: Job) -> float:
        spec = zhou.spec(job)
        opt = spec.options[0]
        gpu_slots = float(opt.e[0]) * spec.chunks * spec.duration(spec.rho(opt, 1, False), spec.chunks)
        return job.weight / max(gpu_slots, 1e-12)

    total = 0.0
    for job in sorted(jobs, key=lambda j: -density(j)):
        spec = zhou.spec(job)
        first, second = zhou._solvers(spec)
        plan = first(spec, duals, tau) or second(spec, duals, tau)
        if plan is None:
            continue
        opt = next(o for o in spec.options if o.worker_type == plan.worker_type and o.ps_type == plan.ps_type)
        duals.commit(plan, opt.e, opt.z)
        total += job.weight
    return total
