"""AntMan (Xiao et al., OSDI'20) as Zhou et al.'s baseline (iii) (seeds/002 Sec. 7).

Two classes of jobs: *resource-guarantee* jobs, admitted in arrival order while their GPUs stay
within a guaranteed quota of the cluster, and *opportunistic* jobs, which run best-effort on what
the guaranteed jobs leave and are suspended when a guaranteed job needs their place. A guaranteed
job that has waited ``max_wait`` slots without starting runs as an opportunistic one. Without
GPU memory sharing (the model has none) "opportunistic" means preemptible and backfilled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scheduling.algorithms.baselines import WORKER_PARAMS, check_worker_range, fixed_configs
from scheduling.algorithms.common import FitMemo, keep
from scheduling.algorithms.priority import FixedConfigs
from scheduling.engine import Decision, JobView, View
from scheduling.model import Instance
from scheduling.registry import AlgorithmSpec, Param, register
from scheduling.speed import Allocation, demand_of

if TYPE_CHECKING:
    import numpy as np


class AntMan:
    def __init__(self, instance: Instance, configs: FixedConfigs, quota: float, max_wait: int) -> None:
        self.cluster = instance.cluster
        self.configs = configs
        self.quota = quota * self.cluster.total_capacity("gpu")  # guaranteed GPUs
        self.max_wait = max_wait
        self.opportunistic_runs = 0  # decisions that started or kept a job as opportunistic
        self.shapes: dict[str, tuple[object, ...]] = {}

    def gpus(self, jv: JobView) -> float:
        cfg = self.configs[jv.job.job_id]
        per = (demand_of(self.cluster, jv.job, "worker", cfg.worker_type) or {}).get("gpu", 0.0)
        return per * cfg.workers

    def decide(self, view: View) -> Decision:
        ledger = view.ledger()
        current: dict[str, list[Allocation]] = {}
        for a in view.allocations:
            current.setdefault(a.job_id, []).append(a)
        guaranteed, opportunistic, used = [], [], 0.0
        for jv in view.jobs:  # arrival order
            waited = view.t - jv.job.arrival
            starved = jv.start is None and waited >= self.max_wait
            if not starved and used + self.gpus(jv) <= self.quota + 1e-9:
                guaranteed.append(jv)
                used += self.gpus(jv)
            else:
                opportunistic.append(jv)
        chosen: list[Allocation] = []
        memo = FitMemo(ledger, self.shapes)  # the ledger only fills below: a shape that failed stays failed
        for jv in guaranteed + opportunistic:  # guaranteed first: they displace opportunistic jobs
            job_id = jv.job.job_id
            if jv.running and keep(ledger, jv.job, current[job_id]):
                chosen.extend(current[job_id])
                continue
            placed = memo.place(jv.job, self.configs[job_id])
            if placed is not None:
                chosen.extend(placed)
        self.opportunistic_runs += sum(1 for jv in opportunistic if any(a.job_id == jv.job.job_id for a in chosen))
        wake = [
            jv.job.arrival + self.max_wait
            for jv in guaranteed
            if jv.start is None and jv.job.arrival + self.max_wait > view.t
        ]
        return Decision(allocations=tuple(chosen), wake_at=min(wake, default=None))

    def report(self) -> Mapping[str, Any]:
        return {"antman": {"opportunistic_runs": self.opportunistic_runs}}


def make_antman(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> AntMan:
    return AntMan(instance, fixed_configs(instance, params, rng), params["quota"], params["max_wait"])


register(
    AlgorithmSpec(
        name="antman",
        summary="AntMan: resource-guarantee jobs within a GPU quota first, opportunistic jobs on the rest.",
        semantics=(
            "At every arrival, completion and waiting-limit event, jobs are walked in arrival order; a job is "
            "resource-guarantee while the GPUs of the guarantee jobs before it plus its own stay within "
            "`quota` x the cluster's GPUs, and has not waited `max_wait` slots without starting; every other "
            "job is opportunistic. Guarantee jobs are booked first (keeping their servers), then opportunistic "
            "ones on what is left; an opportunistic job that no longer fits is suspended (a preemption) and "
            "resumes later, possibly elsewhere. Configurations are fixed per job as in fifo (ideal-case types, "
            "a worker count drawn in [workers_min, workers_max]). No GPU sharing (the model has none)."
        ),
        reference="Xiao et al., AntMan, OSDI'20; Zhou et al. (TCC'23) Sec. 7 baseline (iii)",
        factory=make_antman,
        check=check_worker_range,
        params=(
            *WORKER_PARAMS,
            Param(
                "quota",
                float,
                0.5,
                "Share of the cluster's GPUs guaranteed to resource-guarantee jobs.",
                min=0.0,
                max=1.0,
            ),
            Param("max_wait", int, 24, "Slots a guarantee job may wait before it runs as opportunistic.", min=1),
        ),
    )
)
