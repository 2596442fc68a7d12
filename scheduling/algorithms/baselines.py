"""Shared baselines: fifo, srtf, tiresias (list schedulers by sort key) and drf.

Their exact semantics are in each registry entry's ``semantics`` text (and so in
docs/algorithms.md, which is generated from it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

from scheduling.algorithms.common import Config
from scheduling.algorithms.configs import WORKER_RULES, FixedConfigs
from scheduling.algorithms.placement import PLACEMENTS
from scheduling.algorithms.sort_keys import fifo_key, remaining_time, srtf_key
from scheduling.algorithms.ties import PreviousOrder
from scheduling.engine import Algorithm, JobView
from scheduling.errors import InputError
from scheduling.model import Instance
from scheduling.registry import AlgorithmSpec, Param, register

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)

if TYPE_CHECKING:
    from typing import Any

    import numpy as np

    from scheduling.algorithms.drf import Drf

WORKER_RULE_NOTE = (
    " The worker count follows `worker_rule`, the same for every fixed-size baseline of a comparison "
    "(DESIGN section 9): `drawn` (the default: uniformly in [workers_min, workers_max], the "
    "[1, 30] of Zhou et al. Sec. 7 and OASiS Sec. V-A, which the edge-cloud paper's simulator follows for "
    "what its trace does not give), `most` (workers_max), `chunks` (D_j: one worker per data chunk, as "
    "wide as an elastic algorithm may go) or `request` (a job whose trace states `gpu_request` gets that "
    "many workers, the edge-cloud paper's testbed rule; other jobs drawn); always capped at D_j and at "
    "what an empty cluster holds."
)

RIGID_NOTE = (
    " Rigid jobs (imported production traces) always get exactly the GPUs the trace requested, as "
    "one-GPU workers, and run for their recorded duration."
)

RESERVATION_NOTE = (
    " On a cluster that declares Zhou et al.'s (2i) (`network.ps_bandwidth_reservation`), a PS job's "
    "PSs go on one server, as many (at least `ps`) as the bandwidth of its workers on other servers "
    "needs, and the ideal case is the worker type with the highest rate among those whose count an "
    "empty cluster holds under (2i)."
)

WORKER_RULE_PARAM = Param(
    "worker_rule",
    str,
    "drawn",
    "Worker count of an elastic job: drawn in [workers_min, workers_max], most (workers_max), chunks "
    "(D_j, one worker per chunk) or request (the trace's gpu_request where given, else drawn); "
    "capped at D_j and at what an empty cluster holds. Give every fixed-size baseline of a comparison the same.",
    choices=WORKER_RULES,
)
PS_PARAM = Param("ps", int, 1, "Parameter servers per PS-architecture job.", min=1, max=100)
WORKER_PARAMS = (
    Param("workers_min", int, 1, "Fewest workers an elastic job is given (drawn per job).", min=1, max=1000),
    Param(
        "workers_max", int, 30, "Most workers an elastic job is given (drawn per job; capped at D_j).", min=1, max=1000
    ),
    PS_PARAM,
    WORKER_RULE_PARAM,
)

PLACEMENT_PARAM = Param(
    "placement",
    str,
    "pool",
    "Where a job's GPUs go: "
    + "; ".join(f"{p.name}: {p.summary}" for p in PLACEMENTS.values())
    + " (docs/formats.md, Placement).",
    choices=tuple(PLACEMENTS),
)
PLACEMENT_NOTE = (
    " `placement` chooses where a job goes (docs/formats.md, Placement): `pool` (the default, as "
    "described), `consolidated` (the Tiresias simulator's `yarn`: a job of up to one server's GPUs "
    "on one server, a larger one on whole idle servers and one server for the rest, else it waits; "
    "a preemptive walk then re-places every job from an empty cluster at each decision, so running "
    "jobs may move) or `packed` (best-fit onto the fullest server that holds the job)."
)

# DRF's worker counts come from progressive filling (up to D_j), not from this range: the drawn count
# only chooses the ideal-case worker type under (2i) (the type whose rate at that count is highest).
DRF_WORKER_PARAMS = (
    Param(
        "workers_min",
        int,
        1,
        "Not DRF's worker count (progressive filling gives up to D_j): with workers_max, the drawn "
        "count for which the ideal-case worker type is chosen under Zhou et al.'s (2i); no effect elsewhere.",
        min=1,
        max=1000,
    ),
    Param("workers_max", int, 30, "See workers_min: no effect on DRF's worker counts.", min=1, max=1000),
    PS_PARAM,
)


def check_worker_range(params: Mapping[str, Any]) -> None:
    """The registry check of every algorithm with WORKER_PARAMS: the drawn range is not empty."""
    lo, hi = params["workers_min"], params["workers_max"]
    if lo > hi:
        raise InputError(f"workers_min {lo} is above workers_max {hi}", field="param workers_min")


def fixed_configs(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> FixedConfigs:
    check_worker_range(params)
    rule = params.get("worker_rule", "drawn")
    return FixedConfigs(instance, rng, params["workers_min"], params["workers_max"], params.get("ps", 1), rule)


def make_fifo(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> Algorithm:
    """fifo: the list scheduler by arrival, non-preemptive (scheduling/policy.py)."""
    from scheduling.policy import list_scheduler  # it imports this module's worker parameters

    return list_scheduler(
        instance, params, rng, fifo_key, placement=params["placement"], preemptive=False, backfill=params["backfill"]
    )


def make_srtf(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> Algorithm:
    """srtf: the list scheduler by remaining time, preemptive; the key falls by one per slot run."""
    from scheduling.policy import list_scheduler

    return list_scheduler(
        instance,
        params,
        rng,
        srtf_key(remaining_time(instance)),
        placement=params["placement"],
        preemptive=True,
        running="remaining",
        ties=PreviousOrder() if params["ties"] == "previous" else None,
    )


def parse_thresholds(raw: str) -> tuple[float, ...]:
    """Queue limits from "a,b,..." (GPU-seconds): positive and increasing, else InputError."""
    try:
        values = tuple(float(x) for x in raw.split(",") if x.strip())
    except ValueError:
        raise InputError(f"{raw!r} is not a comma-separated list of numbers", field="param queue_thresholds") from None
    if any(b <= a for a, b in itertools.pairwise(values)) or any(v <= 0 for v in values):
        raise InputError(f"{raw!r} must be positive and increasing", field="param queue_thresholds")
    return values


def check_tiresias(params: Mapping[str, Any]) -> None:
    check_worker_range(params)
    if params["order"] == "start" and params["promote_knob"] > 0:
        raise InputError("promote_knob needs order=queue (order=start has no promotion)", field="param promote_knob")


def make_tiresias_dlas(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> Algorithm:
    """The `tiresias` entry: the authors' simulator's discipline (order=queue: the list scheduler's
    preemptive walk ordered by the queues, tiresias.DlasQueues, an order with a memory), or
    make_tiresias (order=start)."""
    if params["order"] == "start":
        return make_tiresias(instance, params, rng)
    from scheduling.algorithms.priority import ListScheduler
    from scheduling.algorithms.tiresias import DlasQueues, Tiresias  # loaded by the runs that use it (not fifo's)
    from scheduling.policy import list_scheduler

    order = DlasQueues(instance, parse_thresholds(params["queue_thresholds"]), params["promote_knob"])
    walk = list_scheduler(instance, params, rng, order, placement=params["placement"], preemptive=True)
    assert isinstance(walk, ListScheduler)
    return Tiresias(walk, order)  # the walk, or its change-based path (tiresias_changes.py)


def make_tiresias(
    instance: Instance, params: Mapping[str, Any], rng: np.random.Generator, ready: Mapping[str, int] | None = None
) -> Algorithm:
    """2D-LAS (Tiresias, NSDI'19 Sec. 4.2) read as a sort key (`tiresias` order=start, `tiresias-l`):
    queue = number of thresholds the attained GPU-time passed; FIFO by first start, then arrival.
    ``ready``: see ListScheduler (tiresias-l)."""
    from scheduling.policy import list_scheduler

    slot = instance.cluster.slot_seconds
    thresholds = tuple(x / slot for x in parse_thresholds(params["queue_thresholds"]))  # GPU-slots

    def queue(jv: JobView) -> int:
        return sum(1 for x in thresholds if jv.attained_gpu_slots >= x - 1e-9)

    def key(jv: JobView, cfg: Config) -> tuple[float, ...]:
        return (queue(jv), jv.start if jv.start is not None else jv.job.arrival, jv.job.arrival)

    def key_change(jv: JobView, gpus: float, t: int) -> int | None:
        # The slot a running job's attained service crosses its next threshold (the run decides again then).
        nxt = next((x for x in thresholds if x > jv.attained_gpu_slots + 1e-9), None)
        if gpus <= 0 or nxt is None:
            return None
        return t + max(1, math.ceil((nxt - jv.attained_gpu_slots) / gpus - 1e-9))

    return list_scheduler(
        instance,
        params,
        rng,
        key,
        placement=params.get("placement", "pool"),
        preemptive=True,
        running="steps",
        key_change=key_change,
        ready=ready,
    )


def make_drf(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> Drf:
    from scheduling.algorithms.drf import Drf  # loaded by the runs that use it (not fifo's)

    return Drf(instance, fixed_configs(instance, params, rng), resize=not params["fixed"])


register(
    AlgorithmSpec(
        name="fifo",
        summary="First in, first out; fixed worker count per job; non-preemptive.",
        semantics=(
            "Jobs start in arrival order (ties by job id). Each elastic job gets the ideal-case "
            "configuration (fastest worker type, fastest PS type) with a worker count drawn once "
            "per job uniformly in [workers_min, workers_max] (capped at D_j and at what an empty "
            "cluster holds) and `ps` PSs; placement is all-or-nothing, on one server if possible, "
            "else first-fit. Re-decides at arrivals and completions. Never preempts. Without "
            "backfill the queue head blocks the jobs behind it."
            + WORKER_RULE_NOTE
            + RESERVATION_NOTE
            + RIGID_NOTE
            + PLACEMENT_NOTE
        ),
        reference="Zhou et al. (TCC'23) Sec. 7, baseline (i); OASiS Sec. V-A",
        factory=make_fifo,
        check=check_worker_range,
        params=(
            *WORKER_PARAMS,
            Param("backfill", bool, False, "Let later jobs start when the head does not fit."),
            PLACEMENT_PARAM,
        ),
    )
)

register(
    AlgorithmSpec(
        name="srtf",
        summary="Preemptive shortest remaining time first.",
        semantics=(
            "At every arrival and completion, jobs are ordered by remaining time (remaining work "
            "divided by the rate of the job's fixed configuration when not co-located), ties in the "
            "order of the previous decision (`ties=previous`, as the stable re-sort of the Tiresias "
            "authors' loop: looking back from now, the first moment two tied jobs' histories differ "
            "decides, a job that waited before one that ran before one not yet arrived; jobs arriving "
            "now after the others, in trace order) or by arrival, then job id (`ties=arrival`), and "
            "walked in that order with every running job still booked: a "
            "running job keeps its servers (never moved); a waiting job is placed with its fixed "
            "configuration (as in fifo) in free capacity; if it does not fit, the running jobs after "
            "it in that order are evicted one at a time, the longest remaining first, until it fits, "
            "and the evicted ones are retried at their own place later in the walk (back on their "
            "own servers if those are free again, else placed again elsewhere, or suspended: a "
            "preemption; they resume later from where they stopped). A job that would not fit even "
            "with every later running job evicted evicts none and is skipped. With GPU counting "
            "(rigid one-GPU workers) this starts exactly the jobs of the Tiresias authors' `shortest` "
            "loop (sort, place in order, skip what does not fit; docs/architecture.md)."
            + WORKER_RULE_NOTE
            + RIGID_NOTE
            + PLACEMENT_NOTE
        ),
        reference="Edge-cloud paper Sec. V-A baseline SRTF",
        factory=make_srtf,
        check=check_worker_range,
        params=(
            *WORKER_PARAMS,
            Param(
                "ties",
                str,
                "previous",
                "Jobs of equal remaining time: previous: in the previous decision's order (the Tiresias "
                "authors' stable re-sort); arrival: by arrival, then job id.",
                choices=("previous", "arrival"),
            ),
            PLACEMENT_PARAM,
        ),
    )
)

register(
    AlgorithmSpec(
        name="tiresias",
        summary="Tiresias 2D-LAS: discretised priority queues on attained GPU-time, preemptive.",
        semantics=(
            "As the Tiresias authors' simulator runs `dlas-gpu` (checked job by job against it on Philly "
            "windows, bench/RESULTS-tiresias.md; choices in docs/algorithms-tiresias.md). Queues are "
            "ordered lists: an arriving job joins the "
            "tail of Q0, a demoted job the tail of the next queue, and after every decision the jobs "
            "left waiting move behind the running ones of their queue. Each decision walks Q0, Q1, ... "
            "front to back on the committed ledger: a running job keeps its servers; a waiting job goes "
            "first-fit into free capacity, else evicts running jobs after it, last first, only if that "
            "makes it fit (an evicted job is retried at its own place, else suspended: a preemption); "
            "under GPU counting this starts the simulator's jobs. Demotion is checked at decisions only, "
            "one queue at a time: a job moves down when its executed time x GPUs reaches the queue's "
            "`queue_thresholds` entry (GPU-seconds). Besides arrivals and completions, decisions happen "
            "where the simulator places them: now + floor((threshold - executed slots) / GPUs) for each "
            "running job (the simulator subtracts executed time, not GPU-time, so a multi-GPU job is "
            "typically demoted later than at its threshold). No starvation promotion unless "
            "`promote_knob` K > 0: a waiting lower-queue job whose wait since it last ran reaches K x "
            "its executed time returns to Q0 with executed time 0. With `order=start` (the earlier "
            "reading, also `tiresias-l`'s): queue = number of thresholds the attained GPU-time passed, "
            "detected at the slot it is crossed, FIFO by first start then arrival within a queue, no "
            "promotion, and the walk of srtf (running jobs keep their servers; a job that does not "
            "fit evicts running jobs after it, lowest priority first, only if that makes it fit). "
            "Configurations are fixed per job as in fifo. Jobs whose workers hold no GPUs never "
            "leave the first queue."
            + RIGID_NOTE
            + PLACEMENT_NOTE
            + " The authors' `dlas-gpu` counts GPUs whatever its `--scheme`, so only `pool` has a reference there."
        ),
        reference=(
            "Gu et al., Tiresias, NSDI'19 Sec. 4.2; authors' simulator SymbioticLab/Tiresias "
            "(dlas-gpu); Zhou et al. Sec. 7 baseline (iv)"
        ),
        factory=make_tiresias_dlas,
        check=check_tiresias,
        params=(
            *WORKER_PARAMS,
            Param(
                "queue_thresholds",
                str,
                "3250,7200",
                "Queue limits in GPU-seconds, comma-separated, increasing (the authors' simulator: 3250,7200).",
                check=parse_thresholds,
            ),
            Param(
                "order",
                str,
                "queue",
                "queue: the authors' simulator's queue discipline; start: FIFO by first start within a queue, "
                "demotion at the crossing slot (the earlier reading).",
                choices=("queue", "start"),
            ),
            Param(
                "promote_knob",
                float,
                0.0,
                "Tiresias' PromoteKnob K (order=queue): a waiting job returns to Q0 once its wait reaches K x "
                "its executed time; 0 = off, as in the authors' dlas-gpu.",
                min=0.0,
                max=1000.0,
            ),
            PLACEMENT_PARAM,
        ),
    )
)

register(
    AlgorithmSpec(
        name="drf",
        summary="Dominant resource fairness; a started job keeps its workers (fixed=false re-divides at every event).",
        semantics=(
            "Elastic jobs: at every arrival and completion, workers are handed out one at a time "
            "(progressive filling) to the job with the smallest dominant share (its largest share "
            "of any cluster resource; ties by arrival), up to D_j workers per job, with the "
            "ideal-case worker and PS types and `ps` PSs per PS job. By default (`fixed=true`, the "
            "baseline of record: Zhou et al.'s problem (2) fixes y_jhm for a job's run) a running job "
            "keeps the workers it started with and only waiting jobs are filled, from the free "
            "capacity; it is never resized or suspended. With `fixed=false` (re-dividing DRF) every "
            "job's share is recomputed at every event: a job keeps the servers it had where they "
            "still fit, and one left with no worker is suspended (a preemption). Under (2i) (see "
            "fifo) a worker beyond what the PSs' bandwidth carries brings more PSs onto the job's PS "
            "server, or is not added. "
            "Rigid jobs are not resized: waiting jobs start, non-preemptively, in order of their "
            "group's dominant share (DRF across groups/users), ties by arrival."
        ),
        reference="Ghodsi et al., DRF, NSDI'11; Zhou et al. Sec. 7 baseline (ii); OASiS Sec. V-A",
        factory=make_drf,
        check=check_worker_range,
        params=(
            *DRF_WORKER_PARAMS,
            Param(
                "fixed",
                bool,
                True,
                "A running job keeps the workers it started with; only waiting jobs are filled "
                "(Zhou et al.'s y_jhm, fixed for a job's run: the default). false: re-divide at every event.",
            ),
        ),
    )
)
