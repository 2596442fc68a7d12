"""Registry entries of the OASiS package: ``oasis``, ``rrh``, ``dorm`` and ``offline-opt``.

Declared here, apart from the algorithms, so that listing them imports neither the algorithms nor
SciPy: each entry names its factory as "module:function" (scheduling.registry).
"""

from __future__ import annotations

from scheduling.algorithms.baselines import WORKER_RULE_PARAM, check_worker_range
from scheduling.model import Instance
from scheduling.registry import AlgorithmSpec, Feature, Param, register

UTILITY_FLOOR = 1e-2
HISTORY_SHARE = 1.0  # W = T: the whole history trace's first T slots (docs/algorithms-oasis.md section 4a)
HISTORY_MIN_JOBS = 20  # fewer jobs in the history window: no history to speak of, bounds=arrived


def _missing(instance: Instance) -> str | None:
    cluster = instance.cluster
    if cluster.horizon is None:
        return "the cluster has no horizon T (prices and utilities are defined over slots 1..T)"
    pools = {s.pool for s in cluster.servers}
    if "any" in pools or not {"worker", "ps"} <= pools:
        return "every server must be in pool worker or pool ps, with at least one of each (Sec. III-A)"
    if any(s.unlimited for s in cluster.servers):
        return "unlimited servers have no capacity to price"
    for job in instance.jobs:
        wd, pd = job.worker_demand, job.ps_demand
        if job.rigid or job.arch != "ps" or wd is None or pd is None:
            return f"job {job.job_id!r} is not a PS job with per-job worker_demand and ps_demand"
        if wd.get("bw", 0.0) <= 0 or pd.get("bw", 0.0) <= 0:
            return f"job {job.job_id!r} lacks a positive worker and PS bandwidth (bw: b_i and B_i)"
    return None


OASIS_MODEL = Feature(
    "oasis-model",
    "separate worker/PS server pools, a horizon T and PS jobs with per-job worker and PS demands (bw > 0)",
    _missing,
)


MAX_VARIABLES = 50_000


def _too_big(instance: Instance) -> str | None:
    horizon = instance.cluster.horizon or 0
    servers = sum(1 for s in instance.cluster.servers if s.pool in ("worker", "ps"))
    size = sum(max(0, horizon - j.arrival) * (servers + 1) for j in instance.jobs)
    if size > MAX_VARIABLES:
        return f"the ILP would have {size:,} integer variables (jobs x slots x servers), above {MAX_VARIABLES:,}"
    return None


SMALL = Feature("small-instance", "a small instance (about 10 jobs, 10 slots, a few servers)", _too_big)


register(
    AlgorithmSpec(
        name="oasis",
        kind="paper",
        prices=True,
        history=True,  # bounds=history
        summary="OASiS: admit a job iff its utility beats its priced resources; per-slot worker/PS scaling.",
        semantics=(
            "At each arrival (Alg. 1) the job's best schedule is computed by Alg. 2: every completion "
            "slot is tried, the workload (work units) is spread over the slots by dynamic programming "
            "(DP_COST) and each slot's workers go greedily to the cheapest worker servers and its PSs "
            "(ceil(workers b_i/B_i), constraints (6)-(7)) to the cheapest PS servers (COST_t). The job "
            "is admitted iff utility minus priced cost is positive; its workers/PSs per slot are then "
            "fixed (the count may change every slot) and prices rise by (22). Rejected jobs never run. "
            "Under a restart cost (the engine charges every change of a job's allocation) Alg. 2 is asked for "
            "the workload plus what its own plan's restarts lose, re-planned until the plan delivers the "
            'workload, so the payoff prices the real schedule (docs/algorithms-oasis.md, "Restart cost"); '
            "with restart cost 0 this is Alg. 2 itself. "
            "U and L of (23)-(26) need every job; an online run may use only the jobs arrived so far and a "
            'separate history (docs/algorithms-oasis.md, "What oasis may see"). `bounds=arrived` (default): '
            "U and L over the history trace's jobs (if one is given) and every job of the trace as it arrives, "
            "updated before the arriving job's Alg. 2; when they move, every price of (22) is recomputed from "
            "the booked load (the price log marks a rebase). `bounds=history`: the separate history trace's "
            "jobs arriving in its first `history_share` x T slots are resampled into a synthetic past period of "
            "the same length and arrival rate, U and L are computed on it, OASiS is run on it for a grid of "
            "scales on U/L (1 to 1e-12) and the best scale is used from slot 0 (no history trace: an error; "
            "fewer than `history_min_jobs` jobs in the window: `bounds=arrived`). `bounds=trace` (offline "
            "reading, sees future jobs): U and L from the trace's jobs arriving before `bounds_window` (0: the "
            "whole trace, the paper's actual values). `ratio_scale` multiplies U/L on top of any of them by dividing L "
            "(`scale_moves=L`) or multiplying U (`scale_moves=U`) (Fig. 6). `dp=transcription` runs the literal "
            "O(T W^2) recursion (small instances only)."
        ),
        reference="Bao et al., OASiS, INFOCOM'18, Algs. 1-2, eqs. (22)-(26) (seeds/001)",
        factory="scheduling.algorithms.oasis.online:make_oasis",
        params=(
            Param("ratio_scale", float, 1.0, "Factor on the estimated U/L (Fig. 6).", min=1e-12),
            Param("scale_moves", str, "L", "Which bound ratio_scale moves.", choices=("L", "U")),
            Param(
                "utility_floor",
                float,
                UTILITY_FLOOR,
                "Floor on f_i(T - a_i) in (25)-(26), as a share of the priority gamma_1 (0: as written).",
                min=0.0,
                max=1.0,
            ),
            Param(
                "eta",
                str,
                "bound",
                "1/eta_1, 1/eta_2 of (25)-(26): the largest value Sec. IV-B allows (bound) or 1 (one).",
                choices=("bound", "one"),
            ),
            Param(
                "bounds",
                str,
                "arrived",
                "Where U and L of (23)-(26) come from: the jobs arrived so far (arrived, online), a replay of "
                "the separate history trace with the scale on U/L chosen there (history), or the trace's jobs "
                "before bounds_window (trace: offline, sees future jobs).",
                choices=("arrived", "history", "trace"),
            ),
            Param(
                "history_share",
                float,
                HISTORY_SHARE,
                "bounds=history: the window is the first share x T slots of the history trace.",
                min=0.01,
                max=1.0,
            ),
            Param(
                "history_min_jobs",
                int,
                HISTORY_MIN_JOBS,
                "bounds=history: fewer history jobs in the window fall back to bounds=arrived.",
                min=1,
            ),
            Param("history_seed", int, 0, "bounds=history: replay seed (0: a hash of the window's jobs).", min=0),
            Param(
                "bounds_window",
                int,
                0,
                "bounds=trace: estimate U and L from jobs arriving before this slot (0: all).",
                min=0,
            ),
            Param("dp", str, "fast", "Alg. 2 implementation.", choices=("fast", "transcription")),
        ),
        needs=(OASIS_MODEL,),
    )
)

RRH_WORKER_PARAMS = (
    Param("workers_min", int, 1, "Fewest workers a job is given (drawn per job).", min=1, max=1000),
    Param("workers_max", int, 30, "Most workers a job is given (drawn per job; capped at N_i).", min=1, max=1000),
    Param("ps", int, 1, "Parameter servers per job (rrh: with ps_rule=fixed).", min=1, max=100),
    WORKER_RULE_PARAM,
)

register(
    AlgorithmSpec(
        name="rrh",
        summary="Risk-reward heuristic: utility-aware admission and continue/pause, fixed workers/PSs.",
        semantics=(
            "Each job gets a fixed configuration as in fifo (workers drawn in [workers_min, "
            "workers_max], capped at N_i; PSs ceil(workers b_i/B_i), the fewest that satisfy the model's "
            "PS bandwidth constraint (6) and (7), or `ps` PSs with `ps_rule=fixed`). At its arrival a "
            "job is admitted iff its utility if started now (JCT = its duration on that "
            "configuration) minus the delay cost exceeds `threshold`; the delay cost is the utility "
            "the admitted unfinished jobs lose if each completes later by the new job's duration "
            "times its dominant share. At every "
            "arrival and completion each admitted unfinished job scores its future utility "
            "(completion at now + remaining duration) minus the delay cost it inflicts on the others "
            "(remaining duration times dominant share); a running job with a positive score continues "
            "on its servers, one with a non-positive score pauses; waiting and paused jobs with "
            "positive scores start (resume) in score order when their configuration fits, placed "
            "round-robin over the servers of each pool. With `pause=final` a paused job never "
            "resumes (nor counts in the others' delay cost). Rejected jobs never run."
        ),
        reference="OASiS Sec. V-A scheme (iii); Irwin et al., HPDC'04 [38]",
        factory="scheduling.algorithms.oasis.baselines:Rrh",
        check=check_worker_range,
        params=(
            *RRH_WORKER_PARAMS,
            Param(
                "ps_rule",
                str,
                "bandwidth",
                "PSs per job: ceil(workers b_i/B_i), the fewest that honour (6)-(7) (bandwidth), or `ps` (fixed).",
                choices=("bandwidth", "fixed"),
            ),
            Param("threshold", float, 0.0, "Admission threshold on utility minus delay cost."),
            Param(
                "pause",
                str,
                "resume",
                "A paused job may resume at a later arrival/completion (resume) or never (final).",
                choices=("resume", "final"),
            ),
        ),
        needs=(OASIS_MODEL,),
    )
)

register(
    AlgorithmSpec(
        name="dorm",
        summary="Dorm: every job admitted; workers/PSs re-solved by a utilisation MILP at arrivals and completions.",
        semantics=(
            "At every arrival and completion a MILP (HiGHS) chooses the workers n_i <= N_i and PSs "
            "m_i of every unfinished job, maximising the summed share of worker-pool and PS-pool "
            "capacity in use, subject to aggregate pool capacities, (6) m_i B_i >= n_i b_i, (7) "
            "m_i <= n_i, fairness n_i >= floor(`fairness` x min(N_i, workers of an equal dominant "
            "share 1/J)), and adjustment overhead: at most ceil(`adjust` x running jobs) running "
            "jobs change their worker count. If fairness makes it infeasible it is dropped for that "
            "solve. A job whose count is unchanged keeps its servers; the others are placed "
            "round-robin, shrinking a job one worker at a time when the per-server capacities do "
            "not hold it. All jobs are admitted; a job may wait with 0 workers."
        ),
        reference="OASiS Sec. V-A scheme (iv); Sun et al., Dorm, SoCC'17 [18]",
        factory="scheduling.algorithms.oasis.baselines:Dorm",
        params=(
            Param(
                "fairness", float, 0.5, "Share of the equal-dominant-share worker count each job gets.", min=0, max=1
            ),
            Param("adjust", float, 0.5, "Share of running jobs whose worker count may change per solve.", min=0, max=1),
            Param("time_limit", float, 2.0, "HiGHS time limit per solve, seconds.", min=0.01),
            Param("mip_gap", float, 0.01, "HiGHS relative MIP gap at which a solve stops.", min=0.0, max=1.0),
        ),
        needs=(OASIS_MODEL,),
    )
)

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
        factory="scheduling.algorithms.oasis.opt:OfflineOpt",
        params=(Param("time_limit", float, 60.0, "HiGHS time limit, seconds.", min=0.1),),
        needs=(OASIS_MODEL, SMALL),
    )
)
