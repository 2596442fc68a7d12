"""``declines``: a proof that A_maxweight turns a job away (Alg. 3 line 9 fails), found by scanning
its candidates against a bar at the job's weight instead of searching for its cheapest schedule.

The subroutines scan from a starting best; started from a placeholder ``Plan`` of cost
c = w_j + SLACK max(1, w_j) that completes at slot -1 (so the tie rule of ``mincost.cheaper`` never
prefers a candidate to it), the scan replaces it exactly when some candidate costs less than
c - TIE max(1, c), and the numpy path prunes every block whose lower bounds exceed the bar at once.
When neither A_mincost2 nor A_mincost1 (A_RAmincost1/2) replaces it, every candidate costs more than
c - TIE max(1, c) > w_j > 0, so the cheapest schedule (or none) fails u_j = w_j - cost_j > 0 and is
not free: the job is declined with no price change, as the full search would decide. When a
candidate does replace it, nothing is concluded and the caller runs the full search, so the
schedules are the transcription's either way; ``online.Zhou.a_maxweight`` tries this first only
after a job of the same sub-round was turned away (when prices are high).
"""

from __future__ import annotations

from scheduling.algorithms.zhou.duals import Duals, Plan
from scheduling.algorithms.zhou.spec import JobSpec

from .a_mincost1 import mincost1
from .a_mincost2 import mincost2
from .a_ramincost import ra_mincost

SLACK = 1e-6  # relative: the bar sits this far above w_j (far more than mincost.TIE = 1e-9)


def declines(spec: JobSpec, duals: Duals, tau: int, ascending: bool) -> bool:
    """True only if every schedule of the job costs more than its weight w_j > 0 (or none fits)."""
    weight = spec.job.weight
    if not weight > 0:
        return False  # line 9 may still take a free schedule
    bar = Plan(weight + SLACK * max(1.0, weight), 0, -1, "", None, (), (), False)
    if spec.allreduce:
        return (
            ra_mincost(spec, duals, tau, True, ascending, best=bar) is bar
            and ra_mincost(spec, duals, tau, False, ascending, best=bar) is bar
        )
    return mincost2(spec, duals, tau, best=bar) is bar and mincost1(spec, duals, tau, best=bar) is bar
