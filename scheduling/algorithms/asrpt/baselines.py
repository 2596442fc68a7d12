"""The predicted-duration list baselines of Luo et al. Sec. V-A (SPJF, SPWF, WCS-*) as list schedulers.

Each is the one list scheduler (priority.ListScheduler, non-preemptive) with an order (a sort key
on the job's profile) and the Heavy-Edge placement (cluster.heavy_edge_placement): nothing else of
its own. Without backfill the head of the order blocks the jobs behind it (SPJF, SPWF); with it
(work-conserving, WCS) every waiting job that fits is started, in order. A started job keeps its
GPUs and its Heavy-Edge mapping until it completes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from scheduling.algorithms.asrpt.cluster import Profile, Selection, heavy_edge_placement
from scheduling.algorithms.common import Config
from scheduling.algorithms.priority import ListScheduler, SortKey
from scheduling.engine import JobView
from scheduling.model import RIGID_WORKER_TYPE, Instance
from scheduling.pipeline import stage_type

Order = Literal["duration", "workload", "subtime"]
"""The baselines' orders: predicted duration n~_i alpha~_i^min, predicted workload g_i n~_i
alpha~_i^min, submission time."""
ORDERS: tuple[Order, ...] = get_args(Order)


def predicted_order(profiles: Mapping[str, Profile], order: Order) -> SortKey:
    """The sort key of ``order`` (ties: arrival, then job id, the list scheduler's)."""
    if order == "duration":
        return lambda jv, cfg: (profiles[jv.job.job_id].predicted * profiles[jv.job.job_id].alpha_min,)
    if order == "workload":

        def workload(jv: JobView, cfg: Config) -> tuple[float, ...]:
            p = profiles[jv.job.job_id]
            return (p.gpus * p.predicted * p.alpha_min,)

        return workload
    if order == "subtime":
        return lambda jv, cfg: (float(jv.job.arrival),)
    raise ValueError(f"order {order!r}: one of {', '.join(ORDERS)}")


def gpu_configs(profiles: Mapping[str, Profile]) -> dict[str, Config]:
    """Each job's g_i one-GPU workers (the type only names the demand: one GPU per replica)."""
    return {
        job_id: Config(RIGID_WORKER_TYPE if p.graph is None else stage_type(0), p.gpus)
        for job_id, p in profiles.items()
    }


class PredictedList(ListScheduler):
    """SPJF, SPWF and the WCS variants (module docstring). ``readable``: the list scheduler's full
    walk at every event and Heavy-Edge run at every placement instead of the change-based path and
    the reused plans (tests/test_asrpt_paths.py: the same schedule)."""

    def __init__(
        self,
        instance: Instance,
        profiles: Mapping[str, Profile],
        order: Order,
        backfill: bool,
        selection: Selection,
        report: Mapping[str, Any],
        readable: bool = False,
    ) -> None:
        super().__init__(
            instance,
            gpu_configs(profiles),
            predicted_order(profiles, order),
            preemptive=False,
            backfill=backfill,
            incremental=not readable,
            placement=heavy_edge_placement(instance.cluster, profiles, selection, fast=not readable),
        )
        self._report = dict(report)

    def report(self) -> Mapping[str, Any]:
        return self._report
