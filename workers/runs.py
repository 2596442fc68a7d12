"""What a simulation task needs, independent of where runs are stored.

The dependency runs one way (webapp -> workers -> scheduling): a task does not import the Django
models. It reads and records a run through a ``RunStore``, whose implementation the settings name
(``MLSCHED_RUN_STORE``, the Django one is ``webapp.runstore.DjangoRunStore``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from scheduling import loaders
from scheduling.errors import InputError
from scheduling.model import Instance


@dataclass(frozen=True)
class RunInput:
    cluster_name: str  # label used in error messages, e.g. "cluster.json"
    cluster_text: str  # cluster spec, JSON
    trace_name: str  # "....csv" or "....json": also selects the trace format
    trace_text: str
    algorithm: str  # registry name
    params: Mapping[str, Any] = field(default_factory=dict)  # parsed against the registry again
    seed: int = 0
    window: tuple[int, int] | None = None  # [start, end) arrival slots of the trace to keep (a repetition)


class TransientStoreError(Exception):
    """The run store could not be reached (database restarting, connection dropped): worth a retry."""


class RunStore(Protocol):
    def claim(self, run_id: int) -> RunInput | None:
        """Mark a queued run as running and return its input; None if it is not queued any more.

        Raises TransientStoreError when the store cannot be reached (the task is then retried)."""

    def beat(self, run_id: int, progress: float) -> str | None:
        """Record that the run is alive and how far it got (0..1).

        Returns None to go on, "cancel" when the user asked to cancel, "gone" when the run is no
        longer this worker's (declared lost and re-queued, deleted)."""

    def finish(self, run_id: int, result: Mapping[str, Any]) -> None:
        """Record a validated result document and mark the run done."""

    def fail(self, run_id: int, message: str) -> None:
        """Mark the run failed with a message for the user."""

    def cancelled(self, run_id: int, message: str) -> None:
        """Mark the run cancelled (it stopped at the user's request)."""

    def release(self) -> None:
        """Free what the calling thread holds (database connection); called by helper threads."""


def trace_format(name: str) -> str:
    return "json" if name.lower().endswith(".json") else "csv"


def load_instance(
    cluster_text: str, cluster_name: str, trace_text: str, trace_name: str, window: Sequence[int] | None = None
) -> Instance:
    """Parse a cluster spec and a trace; InputError names the file, line, job and field at fault.
    ``window``: keep only the jobs arriving in [start, end), as ``cut_window`` does."""
    cluster = loaders.parse_cluster(cluster_text, cluster_name)
    instance = Instance(cluster, loaders.parse_trace(trace_text, cluster, trace_name, trace_format(trace_name)))
    return instance if window is None else cut_window(instance, window[0], window[1], trace_name)


def cut_window(instance: Instance, start: int, end: int, label: str = "trace") -> Instance:
    """The jobs arriving in slots [start, end), their arrivals shifted so the window starts at slot 0
    (every other time of a job, such as a utility target, is relative to its arrival). InputError if
    the window holds no job."""
    jobs = tuple(replace(j, arrival=j.arrival - start) for j in instance.jobs if start <= j.arrival < end)
    if not jobs:
        raise InputError(f"no job arrives in the window [{start}, {end})", file=label, field="window")
    return Instance(instance.cluster, jobs)


def even_windows(arrivals: Sequence[int], k: int, label: str = "trace") -> list[tuple[int, int]]:
    """``k`` consecutive windows [start, end) of arrival slots holding about len(arrivals) / k jobs
    each: window i starts at the arrival of job i * n // k (in arrival order) and the last ends after
    the last arrival. Jobs arriving in the same slot stay together, so counts can differ a little.
    InputError when the trace cannot be cut so (fewer distinct arrival slots than windows)."""
    slots = sorted(arrivals)
    n = len(slots)
    if k < 1:
        raise InputError("the number of windows must be at least 1", file=label, field="windows")
    starts = [slots[i * n // k] for i in range(k)] if n else []
    bounds = [*starts, slots[-1] + 1] if n else []
    windows = list(itertools.pairwise(bounds))
    if n < k or any(a >= b for a, b in windows):
        raise InputError(
            f"{n} jobs in {len(set(slots))} distinct arrival slots cannot be cut into {k} windows",
            file=label,
            field="windows",
        )
    return windows
