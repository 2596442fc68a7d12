"""Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed ML Jobs" (TCC'23, seeds/002).

``online`` holds A_online / A_dual / A_maxweight, ``mincost`` the transcription of the per-job
subroutines (Algs. 4-7), ``fast`` their numpy version, ``batch`` the offline batch problem (7) of
Fig. 8; this module registers ``zhou``, ``zhou-maxweight`` and ``jain-greedy``, whose factories
import ``online`` and ``batch`` when called (the registry is lazy: listing the algorithms, or running
another one, does not import them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scheduling.model import Instance
from scheduling.registry import AlgorithmSpec, Feature, Param, register
from scheduling.speed import is_edge_cloud

if TYPE_CHECKING:
    import numpy as np

    from scheduling.algorithms.zhou.batch import Batch
    from scheduling.algorithms.zhou.online import Params, Zhou


def _missing(instance: Instance) -> str | None:
    cluster = instance.cluster
    if not cluster.worker_types:
        return "the cluster defines no worker types"
    if is_edge_cloud(cluster):
        return "edge-site servers follow the edge-cloud paper's model"
    if any(s.unlimited for s in cluster.servers):
        return "a server with unlimited capacity has no price (eq. (11) needs C_h^r)"
    for job in instance.jobs:
        if job.rigid or job.arch not in ("ps", "allreduce") or job.gpus is not None:
            return f"job {job.job_id!r} is not an elastic PS or all-reduce job (rigid or pipeline jobs are not)"
    return None


ZHOU_MODEL = Feature("zhou-model", "elastic PS/all-reduce jobs on typed workers and PSs", _missing)


def _params(params: Mapping[str, Any], **fixed: Any) -> Params:
    """The registry's parameters as ``Params``: a parameter the algorithm does not declare (the batch
    algorithms declare only some of ``zhou``'s) takes its default in ``ZHOU_PARAMS``; ``fixed`` overrides."""
    from scheduling.algorithms.zhou.online import Params

    values = {p.name: params.get(p.name, p.default) for p in ZHOU_PARAMS}
    return Params(**{**values, **fixed})


def make_zhou(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> Zhou:
    from scheduling.algorithms.zhou.online import Zhou

    return Zhou(instance, _params(params))


def make_maxweight(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> Batch:
    from scheduling.algorithms.zhou.batch import Batch

    return Batch(instance, _params(params), params["tau"], greedy=False)


def make_jain(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> Batch:
    from scheduling.algorithms.zhou.batch import Batch

    # The greedy's rule is the earliest-completing schedule: tie=completion whatever zhou's default.
    return Batch(instance, _params(params, tie="completion"), params["tau"], greedy=True)


P_F = Param("F", float, 1.0, "Upper bound of a job's weight over its resource consumption (lambda of (11)).", min=1e-9)
P_LAM = Param("lam", float, 0.0, "lambda of eq. (11); 0 = 2 T H R F + 1.", min=0.0)
P_T = Param("T", int, 300, "T in lambda = 2 T H R F + 1 (the paper's timespan; Fig. 2 uses 300).", min=1)
P_ORDER = Param(
    "order",
    str,
    "arrival",
    "Order of the jobs in A_maxweight's loop: arrival, weight (largest first) or density (w_j/work).",
    choices=("arrival", "weight", "density"),
)
P_RA_ORDER = Param(
    "ra_order",
    str,
    "ascending",
    "All-reduce worker counts Phi' in Algs. 6/7: ascending (as printed) or descending.",
    choices=("ascending", "descending"),
)
P_TIE = Param(
    "tie",
    str,
    "completion",
    "Among equal-cost schedules: completion (earliest completion, then loop order) or loop "
    "(the first in the pseudo-code's loop order, as printed).",
    choices=("completion", "loop"),
)
P_FAST = Param("fast", bool, True, "Numpy subroutines (same schedules as the transcription).")
P_TAU = Param(
    "tau",
    int,
    300,
    "Deadline of a batch: jobs arriving at slot t must complete by slot t + tau - 1 (the paper's time tau; "
    "the batch's last slot stays empty, as in a sub-round of Alg. 2) or are rejected (problem (7)).",
    min=2,
    max=100000,
)
P_ALPHA = Param("alpha", int, 0, "Sub-rounds of A_dual per round; 0 = the bound of Sec. 5.3.", min=0, max=100000)
P_START = Param(
    "start",
    str,
    "early",
    "Where a round's schedule runs: paper (alpha tau_i, alpha = sub-rounds used), early (tau_i "
    "or when the earlier rounds' schedules end) or now (tau_i, prices from committed load).",
    choices=("paper", "early", "now"),
)
ZHOU_PARAMS = (P_F, P_LAM, P_T, P_ALPHA, P_ORDER, P_START, P_RA_ORDER, P_TIE, P_FAST)
"""``zhou``'s parameters; every field of ``Params``."""


register(
    AlgorithmSpec(
        name="zhou",
        kind="paper",
        prices=True,
        summary="A_online: doubling rounds, A_dual sub-rounds, primal-dual A_maxweight with exponential prices (11).",
        semantics=(
            "Rounds at slots tau_i = 1, 2, 4, ... whenever jobs wait (Alg. 1). A round takes the waiting jobs "
            "J_i and calls A_maxweight (Alg. 3) for up to alpha sub-rounds of tau_i slots (Alg. 2; alpha=0: "
            "the bound of Sec. 5.3 per round, floor((ln w(J_i) - ln w_min)/ln(gamma/(gamma-1))) + 1 with "
            "gamma = 2 log2 lambda; a round stops early once every job is scheduled or a fresh sub-round "
            "schedules nothing). A_maxweight takes the jobs in `order` and gives each the cheapest schedule "
            "under the prices delta = lambda^(beta/C) - 1 of eq. (11), lambda = 2 T H R F + 1 unless `lam` "
            "is set: A_mincost2 (Alg. 5, everything on one server, q_j = 1) first, A_mincost1 (Alg. 4, "
            "workers cheapest server first, PSs on one server sized by (13d)) if strictly cheaper; for "
            "all-reduce jobs A_RAmincost1/2 (Algs. 6, 7). Candidates are scanned in the pseudo-code's "
            "loop order (worker types fastest first, PS types fastest first, windows shortest first, "
            "earliest start, server order) and the first strictly cheapest is kept; with tie=completion "
            "(default) a candidate of equal cost (relative 1e-9) also wins when it completes earlier (at "
            "zero prices: the earliest-completing window, most workers). A job is scheduled when "
            "u_j = w_j - cost > 0 (or its schedule costs nothing); it then runs its window with its worker/PS "
            "counts and types fixed, never preempted. start=early (default): a round's schedule runs from "
            "tau_i on, or from the end of every earlier round's schedule if later (rounds never overlap, every "
            "sub-round starts from zero prices); start=paper: from (sub-rounds used) x tau_i on, also after "
            "every earlier round's schedule; start=now: from tau_i on, with prices starting from the load "
            "earlier rounds committed. A job "
            "that fits no fresh window long enough for one worker is rejected. fast=true computes the same "
            "schedules with numpy. The result carries the delta prices (prices) and per-round figures (zhou)."
        ),
        reference="Zhou et al. (TCC'23, seeds/002) Secs. 4-6, Algs. 1-7, eqs. (1), (11), (13), (14)",
        factory=make_zhou,
        params=ZHOU_PARAMS,
        needs=(ZHOU_MODEL,),
    )
)

register(
    AlgorithmSpec(
        name="zhou-maxweight",
        kind="paper",
        prices=True,
        summary="A_maxweight (Alg. 3) alone on the offline batch problem (7): Fig. 8's algorithm.",
        semantics=(
            "Every slot t where jobs arrive makes one batch due by slot t + `tau` - 1 (the paper's deadline tau)."
            " A_maxweight takes the batch in `order` and gives each job the cheapest schedule completing by the "
            "deadline under the prices of eq. (11) (lambda = 2 T H R F + 1 unless `lam` is set; prices start from"
            " the load earlier batches committed), with the same subroutines and tie rule as `zhou`; a job is "
            "admitted iff u_j = w_j - cost > 0 (or its schedule costs nothing) and otherwise rejected, once. With"
            " every job at slot 0 the weight of completed jobs is Fig. 8's total scheduled weight. The result "
            "carries the delta prices (prices) and per-batch figures (batch)."
        ),
        reference="Zhou et al. (TCC'23, seeds/002) Sec. 5.1 problem (7), Alg. 3, Sec. 7.2 Figs. 8, 11, 12",
        factory=make_maxweight,
        params=(P_TAU, P_F, P_LAM, P_T, P_ORDER, P_RA_ORDER, P_TIE, P_FAST),
        needs=(ZHOU_MODEL,),
    )
)

register(
    AlgorithmSpec(
        name="jain-greedy",
        kind="baseline",
        summary="Jain et al.'s greedy for jobs with deadlines (value density first): Fig. 8's comparison.",
        semantics=(
            "Every slot t where jobs arrive makes one batch due by slot t + `tau` - 1 (the paper's deadline tau)."
            " Jobs are taken by value density, w_j over the job's GPU-slots at one worker's rate in its fastest "
            "configuration, largest first; each gets the earliest-completing schedule that completes by the "
            "deadline on the capacity left (the subroutines of `zhou` at zero prices: the earlier-completing of "
            "Alg. 5's and Alg. 4's schedules, or of Algs. 6/7's) and keeps it. A job that fits is never turned "
            "away; one that does not is rejected, once."
        ),
        reference="Jain et al. (ACM TOPC 2015) as used by Zhou et al. (TCC'23, seeds/002) Sec. 7.2, Fig. 8",
        factory=make_jain,
        params=(P_TAU, P_FAST),
        needs=(ZHOU_MODEL,),
    )
)
