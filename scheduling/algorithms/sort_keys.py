"""The baselines' sort keys for the list scheduler: fifo's arrival, srtf's remaining time."""

from __future__ import annotations

import math
from collections.abc import Callable

from scheduling.algorithms.common import Config, planned_rate
from scheduling.engine import JobView
from scheduling.model import Instance, Job

SortKey = Callable[[JobView, Config], tuple[float, ...]]
"""A job's priority from its view and configuration (smaller first); not time-dependent, so a
key is computed once per job view."""


def fifo_key(jv: JobView, cfg: Config) -> tuple[float, ...]:
    return (jv.job.arrival,)


def srtf_key(cluster_rate: Callable[[Job, Config], float]) -> SortKey:
    """Remaining time at the planned rate; ties are the scheduler's (arrival and job id, or
    PreviousOrder)."""
    rates: dict[str, float] = {}  # a job's configuration is fixed, so is its planned rate

    def key(jv: JobView, cfg: Config) -> tuple[float, ...]:
        r = rates.get(jv.job.job_id)
        if r is None:
            r = rates[jv.job.job_id] = cluster_rate(jv.job, cfg)
        return (jv.remaining / r if r > 0 else math.inf,)

    return key


def remaining_time(instance: Instance) -> Callable[[Job, Config], float]:
    return lambda job, cfg: planned_rate(instance.cluster, job, cfg)
