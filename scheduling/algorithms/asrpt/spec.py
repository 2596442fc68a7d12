"""Registry entries: asrpt and the Sec. V-A baselines spjf, spwf, wcs-duration, wcs-workload, wcs-subtime.

The factories and the feature check import the algorithm modules when called, so that listing the
algorithms (or running another one) does not import them (scheduling.registry)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scheduling.algorithms.asrpt.predictors import FITTED, PREDICTORS
from scheduling.errors import UnsupportedInstance
from scheduling.model import Instance
from scheduling.registry import AlgorithmSpec, Feature, Param, register

if TYPE_CHECKING:
    import numpy as np

    from scheduling.algorithms.asrpt.scheduler import Asrpt, PredictedList

REFERENCE = "Luo et al., Prediction-Assisted Online Distributed DL Workload Scheduling in GPU Clusters"


def _unsupported(instance: Instance) -> str | None:
    from scheduling.algorithms.asrpt.cluster import unsupported_reason

    return unsupported_reason(instance)


STAGE_JOBS = Feature(
    "stage-jobs",
    "pipeline jobs with stages (or rigid jobs on one-GPU workers) that fit the cluster's GPUs",
    _unsupported,
)

PREDICTION_PARAMS = (
    Param("predictor", str, "random-forest", "Iteration predictor n~_i (Sec. IV-C-3, V-B-2-d).", choices=PREDICTORS),
    Param(
        "history",
        float,
        1.0,
        "Fraction of the supplied history trace's jobs (latest arrivals) the predictor is fitted on; "
        "the evaluated trace is never fitted on.",
        min=0.01,
        max=1.0,
    ),
    Param("allreduce", str, "ring", "AllReduce of the job graph's edges (RAR or TAR).", choices=("ring", "tree")),
)

SHARED_SEMANTICS = (
    " Jobs: pipeline jobs with stages (one GPU per stage replica; the engine's rate is 1/alpha_i "
    "iterations per slot with alpha_i by eqs. (4)-(7) from the replicas' servers, allocations of "
    "worker type stage<s>), or rigid trace jobs (gpus one-GPU workers for their recorded duration; "
    "alpha = 1 slot per unit anywhere, never communication-heavy). alpha~_min: Heavy-Edge onto full "
    "servers plus one partial server, then eq. (7); alpha_max: every replica alone on a server with "
    "B_inter/g. Predictions n~_i of the `predictor` fitted on the latest `history` fraction of the "
    "separate history trace the user supplies (none: fitted predictors predict 0 iterations), "
    "reported with their errors under `prediction` in the result. "
    "Non-preemptive: a started job keeps its GPUs until it completes."
)


def _prepared(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> tuple[Any, Any]:
    from scheduling.algorithms.asrpt.cluster import profiles
    from scheduling.algorithms.asrpt.predictors import predict

    pred = predict(instance.history, instance.jobs, params["predictor"], params["history"], rng)
    report = {"prediction": {"predictor": params["predictor"], **pred.errors(instance.jobs)}}
    return profiles(instance, pred.values, params["allreduce"]), report


def make_asrpt(
    instance: Instance, params: Mapping[str, Any], rng: np.random.Generator, readable: bool = False
) -> Asrpt:
    """``readable``: the plain transcription instead of the incremental path (same schedule)."""
    from scheduling.algorithms.asrpt.scheduler import Asrpt

    if why := without_history(instance, params):
        raise UnsupportedInstance(why)
    profs, report = _prepared(instance, params, rng)
    return Asrpt(instance, profs, params["comm_heavy"], params["tau"], params["release"], report, readable)


def without_history(instance: Instance, params: Mapping[str, Any]) -> str | None:
    """Why asrpt refuses ``instance`` with ``params``: a fitted predictor and no history to fit it on
    (it would predict 0 iterations for every job, and A-SRPT's order would be the arrival order)."""
    if params["predictor"] not in FITTED or instance.history or params["no_history"] != "refuse":
        return None
    return (
        f"asrpt needs a history of past jobs to fit its {params['predictor']} predictor: without one every job is "
        "predicted 0 iterations and the schedule is arrival order; give a separate trace of past jobs (--history "
        "FILE; adapt --history-fraction F writes one from the trace itself), or --param predictor=perfect, or "
        "--param no_history=zero to predict 0 iterations (the paper's rule for unseen jobs)"
    )


def _list_factory(key: str, backfill: bool) -> Any:
    def make(
        instance: Instance, params: Mapping[str, Any], rng: np.random.Generator, readable: bool = False
    ) -> PredictedList:
        from scheduling.algorithms.asrpt.scheduler import PredictedList

        profs, report = _prepared(instance, params, rng)
        return PredictedList(instance, profs, key, backfill, params["selection"], report, readable)

    return make


register(
    AlgorithmSpec(
        name="asrpt",
        summary="A-SRPT: virtual single-machine SRPT order on predicted work, Heavy-Edge GPU mapping.",
        semantics=(
            "Alg. 1. Each arriving job enters a virtual single machine with processing time "
            "g_i/G * n~_i * alpha~_i^min (slots) scheduled by preemptive SRPT; with release=completion "
            "(literal line 2) jobs join pending_queue in their virtual completion order, when they "
            "complete there (a job predicted at 0 iterations joins at once); with release=arrival "
            "every arrived job is in pending_queue, ordered: virtually completed jobs in completion "
            "order, then the others by remaining virtual time (SRPT's completion order). At "
            "every event the head of pending_queue starts if its g_i GPUs are free in the cluster, "
            "else everything waits (no backfilling, line 25). A job with alpha_max/alpha~_min >= "
            "comm_heavy takes GPUs from the servers with the most free GPUs and is mapped by "
            "Heavy-Edge; it starts if its alpha/alpha~_min <= comm_heavy, else it waits at most "
            "tau * g_i/G * n~_i * alpha~_i^min slots, re-mapped at every event, and starts as soon "
            "as its alpha drops below the first one (kappa) or at the end of the wait; while it "
            "waits the queue behind it waits too (the delay loop of lines 16-19 holds the clock). "
            "Other jobs take GPUs from the servers with the fewest free GPUs (fragmentation-aware) "
            "and start at once." + SHARED_SEMANTICS
        ),
        reference=REFERENCE + ", Sec. IV, Alg. 1",
        factory=make_asrpt,
        params=(
            Param("comm_heavy", float, 1.5, "COMM_HEAVY threshold on alpha_max / alpha~_min.", min=1.0, max=1000.0),
            Param("tau", float, 1.0, "Delay factor tau of communication-heavy jobs.", min=0.0, max=100.0),
            Param(
                "release",
                str,
                "completion",
                "When a job joins pending_queue (Alg. 1 line 2): at its virtual completion (literal), or at "
                "arrival, ordered by the virtual machine's SRPT order.",
                choices=("completion", "arrival"),
            ),
            *PREDICTION_PARAMS,
            Param(
                "no_history",
                str,
                "refuse",
                "Without a history trace, a fitted predictor (random-forest, random-forest-mae, mean, median) has "
                "nothing to learn from: refuse the instance (refuse), or predict 0 iterations for every job (zero: "
                "the paper's rule for unseen jobs; the schedule is then arrival order).",
                choices=("refuse", "zero"),
            ),
        ),
        needs=(STAGE_JOBS,),
        kind="paper",
        history=True,
    )
)

_BASELINES = (
    ("spjf", "duration", False, "Shortest Predicted Job First (MLaaS): by predicted duration n~_i alpha~_i^min"),
    ("spwf", "workload", False, "Shortest Predicted Workload First (Tiresias): by g_i n~_i alpha~_i^min"),
    ("wcs-duration", "duration", True, "Work-conserving scheduler by predicted duration n~_i alpha~_i^min"),
    ("wcs-workload", "workload", True, "Work-conserving scheduler by predicted workload g_i n~_i alpha~_i^min"),
    ("wcs-subtime", "subtime", True, "Work-conserving scheduler by submission time"),
)

for _name, _key, _backfill, _summary in _BASELINES:
    register(
        AlgorithmSpec(
            name=_name,
            summary=_summary + "; Heavy-Edge mapping.",
            semantics=(
                "At every event the waiting jobs are taken in order (ties: arrival, job id); a job "
                "starts when its g_i GPUs are free, on servers chosen by `selection` (default: the "
                "servers with the most free GPUs, A-SRPT's consolidation; the paper names only the "
                "mapping, and on the asrpt preset this is the baselines' best choice), mapped by "
                "Heavy-Edge. "
                + (
                    "Work-conserving: a job that does not fit is skipped and later ones may start."
                    if _backfill
                    else "Strict order: a job that does not fit blocks the ones behind it."
                )
                + SHARED_SEMANTICS
            ),
            reference=REFERENCE + ", Sec. V-A-1-d",
            factory=_list_factory(_key, _backfill),
            params=(
                *PREDICTION_PARAMS,
                Param(
                    "selection",
                    str,
                    "most",
                    "Which servers give a job its GPUs: first fit in cluster order, most or least free GPUs first.",
                    choices=("first", "most", "least"),
                ),
            ),
            needs=(STAGE_JOBS,),
            kind="baseline",
            history=True,
        )
    )
