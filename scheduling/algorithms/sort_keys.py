"""Orders of the list scheduler: the two forms an order takes (``SortKey``, ``MemoryOrder``) and
the baselines' sort keys (fifo's arrival, srtf's remaining time)."""

from __future__ import annotations

import math
from collections.abc import Callable

from scheduling.algorithms.common import Config, planned_rate
from scheduling.engine import JobView
from scheduling.model import Instance, Job

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)

if TYPE_CHECKING:
    from typing import Protocol

    from scheduling.engine import View
    from scheduling.speed import Allocation
else:
    from scheduling.runtime_typing import Protocol  # MemoryOrder: a protocol for the type checker


SortKey = Callable[[JobView, Config], tuple[float, ...]]
"""A job's priority from its view and configuration (smaller first); not time-dependent, so a
key is computed once per job view."""


class MemoryOrder(Protocol):
    """An order with a memory: a sort key that depends on the past decisions, not only on each job's
    own state (Tiresias' queues, where a demoted job joins the tail of the next queue and the jobs
    left waiting move behind the running ones). The list scheduler calls, at every decision:

    1. ``observe(view, config)`` before its walk: the order brings its state up to date (the
       arrivals, completions and time passed that ``view`` shows; ``config(job_id)`` is a job's
       fixed configuration);
    2. ``order(job, config)`` for the walk's sort key (smallest first), which must not change
       during the walk;
    3. ``decided(view, allocations)`` after it, with every allocation of the decision (the jobs
       it runs from now on); it returns the slot at which to decide again, or None.

    The list scheduler walks every active job at every decision for such an order (its full walk:
    it has no change-based form)."""

    def __call__(self, job: JobView, config: Config) -> tuple[float, ...]: ...

    def observe(self, view: View, config: Callable[[str], Config]) -> None: ...

    def decided(self, view: View, allocations: tuple[Allocation, ...]) -> int | None: ...


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
