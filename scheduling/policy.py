"""The author's interface: a list-scheduling algorithm from an order, a placement and an admission.

As in Blox, the three are separate pieces (docs/plugins.md has a complete plugin of 24 lines):

* **order**: a sort key ``order(job, config)`` of a job's view (``JobView``: the job, work done,
  attained GPU-slots, first start, running) and its configuration (``Config``: worker type and
  count, PS type and count), smallest first; a number or a tuple of numbers. Ties go by arrival,
  then job id. An order that depends on past decisions is an object (``MemoryOrder``: the key,
  plus ``observe`` before each walk and ``decided`` after it), as Tiresias' queues
  (scheduling/algorithms/tiresias.py ``DlasQueues``).
* **placement**: a name. ``"pool"`` (the baselines': every worker and PS on one server if one
  holds them, else first-fit over the servers in cluster order, honouring server pools), or
  another of ``PLACEMENTS`` where the list scheduler offers it. The algorithm takes it as its
  ``placement`` parameter too (``--param placement=...``), the author's choice as the default.
* **admission**: ``admission(job, config) -> bool``, asked once per job when it arrives; a job it
  refuses is rejected then and never runs. None admits every job.

Each job's configuration is fixed for its lifetime, as for fifo (``FixedConfigs``: rigid jobs get
their GPUs; elastic jobs the ideal-case types and a worker count drawn in [workers_min,
workers_max]); the algorithm takes the baselines' worker parameters. The walk is the list
scheduler's (scheduling/algorithms/priority.py): non-preemptive by default (running jobs keep their
place; waiting jobs start in order, with backfill unless it is turned off), or preemptive (a job
earlier in the order evicts later running ones).

An algorithm outside this frame implements the engine's protocol itself (``decide(view) ->
Decision``, ``report()``) and returns the complete allocation from now on,
``Decision(allocations=..., reject=..., wake_at=...)``: that is the one form for authors (the
change-based form, ``Decision.changes``, is the engine's internal fast path for its own schedulers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from scheduling.algorithms.baselines import WORKER_PARAMS, check_worker_range, fixed_configs
from scheduling.algorithms.common import Config
from scheduling.algorithms.placement import PLACEMENT_NAMES, PlacementName
from scheduling.algorithms.priority import RUNNING_KEYS, ListScheduler, MemoryOrder, RunningKey
from scheduling.engine import Algorithm, Decision, JobView, View
from scheduling.errors import InputError
from scheduling.model import Instance
from scheduling.records import replace
from scheduling.registry import AlgorithmSpec, Param, register
from scheduling.speed import Allocation, demand_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)

if TYPE_CHECKING:
    from typing import Any, cast

    import numpy as np

    from scheduling.algorithms.ties import PreviousOrder
else:
    from scheduling.runtime_typing import cast


__all__ = [
    "PLACEMENTS",
    "WORKER_PARAMS",
    "AlgorithmSpec",
    "Allocation",
    "Config",
    "Decision",
    "JobView",
    "MemoryOrder",
    "Param",
    "Placement",
    "View",
    "list_algorithm",
    "list_scheduler",
    "register",
]

Order = Callable[[JobView, Config], "float | tuple[float, ...]"]
Admission = Callable[[JobView, Config], bool]
KeyChange = Callable[[JobView, float, int], "int | None"]
"""(view of a running job, GPUs it holds, slot t) -> the slot its order key next changes, or None."""
Placement = PlacementName
"""The names of scheduling/algorithms/placement.py's PLACEMENTS."""
PLACEMENTS: tuple[str, ...] = PLACEMENT_NAMES


def placement_available(name: str) -> bool:
    """Whether the list scheduler offers ``name``: one of scheduling/algorithms/placement.py's
    PLACEMENTS."""
    return name in PLACEMENTS


def list_scheduler(
    instance: Instance,
    params: Mapping[str, Any],
    rng: np.random.Generator,
    order: Order | MemoryOrder,
    *,
    placement: str = "pool",
    admission: Admission | None = None,
    preemptive: bool = False,
    backfill: bool = True,
    running: RunningKey | None = None,
    key_change: KeyChange | None = None,
    ties: PreviousOrder | None = None,
    ready: Mapping[str, int] | None = None,
) -> Algorithm:
    """The algorithm of one run: for a factory of one's own (e.g. an order that reads a parameter).
    ``params`` holds at least the baselines' worker parameters (workers_min, workers_max, ps,
    workers_from).

    The rest describe the order to the list scheduler's change-based path (priority.ListScheduler;
    without them a preemptive walk takes the full walk at every event, with the same schedule):
    ``running``, how the key may change while a job runs (priority.RunningKey: srtf's
    ``"remaining"``, Tiresias' ``"steps"``); ``key_change``, the slot a running job's key next
    changes (``"steps"`` keys), at which the run is also woken to decide again; ``ties``, ties by
    the previous decision's order (ties.PreviousOrder) instead of arrival; ``ready``, job id -> the
    first slot the job may start (tiresias-l).

    ``order`` may also be an order with a memory (``MemoryOrder``: a sort key that depends on past
    decisions, told each decision's view before the walk and its allocations after, as Tiresias'
    queues); the walk is then the full walk at every event."""
    if not placement_available(placement):
        raise InputError(
            f"placement {placement!r} is not offered by this version (offered: "
            f"{', '.join(p for p in PLACEMENTS if placement_available(p))})",
            field="param placement",
        )
    configs = fixed_configs(instance, params, rng)
    memory = cast("MemoryOrder", order) if hasattr(order, "observe") and hasattr(order, "decided") else None

    def key(jv: JobView, cfg: Config) -> tuple[float, ...]:
        k = order(jv, cfg)
        return k if isinstance(k, tuple) else (k,)

    walk = ListScheduler(
        instance,
        configs,
        key,
        preemptive=preemptive,
        backfill=backfill,
        wake=None if key_change is None else wake_at_key_changes(key_change),
        running_key=running,
        key_change=key_change,
        ready=ready,
        ties=ties,
        placement=cast("PlacementName", placement),
        memory=memory,
    )
    return walk if admission is None else Admitting(walk, admission, configs)


def wake_at_key_changes(key_change: KeyChange) -> Callable[[View, tuple[Allocation, ...]], int | None]:
    """The full walk's wake-up: the earliest slot a job it runs changes its key (``key_change`` of
    the GPUs the decision gives it), so that the run decides again then."""

    def wake(view: View, decided: tuple[Allocation, ...]) -> int | None:
        gpus: dict[str, float] = {}
        jobs = {jv.job.job_id: jv for jv in view.jobs}
        for a in decided:
            d = demand_of(view.cluster, jobs[a.job_id].job, a.role, a.type) or {}
            gpus[a.job_id] = gpus.get(a.job_id, 0.0) + a.count * d.get("gpu", 0.0)
        best: int | None = None
        for job_id, g in gpus.items():
            at = key_change(jobs[job_id], g, view.t)
            if at is not None:
                best = at if best is None else min(best, at)
        return best

    return wake


class Admitting:
    """Admission in front of a walk: each arriving job is asked once; the refused ones are rejected
    then, and the walk decides on a view without them (the full walk: a filtered view has no
    change-based accessors, see View.direct)."""

    def __init__(self, walk: ListScheduler, admission: Admission, configs: Any) -> None:
        self.walk = walk
        self.admission = admission
        self.configs = configs

    def decide(self, view: View) -> Decision:
        refused = {job.job_id for job in view.arrived if not self._admits(view, job.job_id)}
        if not refused:
            return self.walk.decide(view)
        jobs = tuple(jv for jv in view.jobs if jv.job.job_id not in refused)
        arrived = tuple(job for job in view.arrived if job.job_id not in refused)
        decision = self.walk.decide(replace(view, jobs=jobs, arrived=arrived))
        return replace(decision, reject=(*decision.reject, *sorted(refused)))

    def _admits(self, view: View, job_id: str) -> bool:
        jv = view.job(job_id) if view.direct else next(j for j in view.jobs if j.job.job_id == job_id)
        return bool(self.admission(jv, self.configs[job_id]))

    def report(self) -> Mapping[str, Any]:
        return self.walk.report()


def list_algorithm(
    name: str,
    summary: str,
    order: Order,
    *,
    placement: Placement = "pool",
    admission: Admission | None = None,
    preemptive: bool = False,
    backfill: bool = True,
    running: RunningKey | None = None,
    semantics: str = "",
    reference: str = "",
) -> AlgorithmSpec:
    """The registry entry of a list-scheduling algorithm (pass it to ``register``). ``running``: how
    a preemptive order's key may change while a job runs (see list_scheduler)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement {placement!r}: one of {', '.join(PLACEMENTS)}")
    if running is not None and running not in RUNNING_KEYS:
        raise ValueError(f"running {running!r}: one of {', '.join(RUNNING_KEYS)} or None")
    if hasattr(order, "observe") and hasattr(order, "decided"):
        raise ValueError(
            "an order with a memory holds one run's state: make it in the run's factory and pass it to list_scheduler"
        )

    def factory(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> Algorithm:
        return list_scheduler(
            instance,
            params,
            rng,
            order,
            placement=params["placement"],
            admission=admission,
            preemptive=preemptive,
            backfill=backfill,
            running=running,
        )

    walk = "preemptive (a job earlier in the order evicts later running ones)" if preemptive else "non-preemptive"
    described = (
        f"A list scheduler (scheduling/policy.py): jobs in the order of `{getattr(order, '__name__', 'order')}`, "
        f"ties by arrival then job id; {walk}"
        f"{', with backfill' if backfill and not preemptive else ''}; placement `placement`"
        + (f"; admission `{getattr(admission, '__name__', 'admission')}` at arrival" if admission else "")
        + "; a fixed configuration per job as in fifo."
    )
    return AlgorithmSpec(
        name=name,
        summary=summary,
        semantics=semantics or described,
        reference=reference or "docs/plugins.md",
        factory=factory,
        params=(
            *WORKER_PARAMS,
            Param(
                "placement",
                str,
                placement,
                "Where a job's workers and PSs go: pool (one server if possible, else first-fit), or "
                "another placement the list scheduler offers.",
                choices=PLACEMENTS,
            ),
        ),
        check=check_worker_range,
    )
