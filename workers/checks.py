"""A trace checked against a cluster spec, once, in the background: what the dataset page and the
experiment form need of it (docs/architecture.md, "Trace checks").

The check loads the trace exactly as a run does (every job validated against the cluster) and keeps
a small summary: job count, arrival span, binned histograms, the offered load, and which registered
algorithms cannot run the pair and why. Pages read the summary instead of loading the trace again;
a real trace (82,000 jobs) takes seconds to load, a summary milliseconds to read.

As for runs, a task reads and records a check through a store named by the settings
(``MLSCHED_CHECK_STORE``, the Django one is ``webapp.tracechecks.DjangoCheckStore``).
"""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from scheduling import importers, loaders, registry
from scheduling.errors import InputError
from scheduling.model import Cluster, Instance, Job
from workers.runs import trace_format

ARRIVAL_BINS = 60  # bars of the arrivals histogram, whatever the trace's length
IDLE_LOAD = 0.05  # offered load below which the cluster is called nearly idle
OVERLOAD = 3.0  # offered load above which the cluster is called hopelessly overloaded

Report = Callable[[float, str], None]  # (progress 0..1, phase shown to the user)


@dataclass(frozen=True)
class CheckInput:
    cluster_name: str
    cluster_text: str
    trace_name: str  # its extension selects CSV or JSON
    trace_text: str
    raw: bytes | None = None  # a raw GPU-job trace to import first (then trace_text is empty)
    raw_name: str = ""  # the uploaded file's name, for error messages
    import_options: Mapping[str, Any] = field(default_factory=dict)  # importers.run keyword arguments


class CheckStore(Protocol):
    def claim(self, check_id: int) -> CheckInput | None:
        """Mark a queued check as running and return its input; None if it is not queued any more."""

    def beat(self, check_id: int) -> bool:
        """Record that the check's worker is alive; False when the check is no longer running."""

    def release(self) -> None:
        """Free what the calling thread holds (database connection); called by the heartbeat thread."""

    def progress(self, check_id: int, progress: float, phase: str) -> None: ...

    def finish(self, check_id: int, summary: dict[str, Any]) -> None: ...

    def fail(self, check_id: int, error: str, line: int | None) -> None:
        """Record the error (naming file, line and field) of a running check. A check that imports a
        raw upload also discards what was stored of it: no half of an import stays usable."""

    def imported(self, check_id: int, text: str) -> None:
        """Store the trace imported from the check's raw file as its dataset's text."""


def gpu_demand(job: Job, cluster: Cluster) -> float:
    """GPUs a job asks for: its ``gpus`` column, else its maximum workers x its own worker demand
    (OASiS traces) or the smallest GPU demand of a worker type (0 when workers need no GPU)."""
    if job.gpus is not None:
        return float(job.gpus)
    if job.worker_demand is not None:
        return job.max_workers() * float(job.worker_demand.get("gpu", 0.0))
    per = min((t.demand.get("gpu", 0.0) for t in cluster.worker_types), default=0.0)
    return job.max_workers() * per


def offered_load(jobs: tuple[Job, ...], cluster: Cluster) -> float | None:
    """GPU-time the trace asks for over the GPU-time the cluster offers during its arrival span
    (last arrival - first arrival + the longest job, in slots). Only for traces whose jobs all state
    GPUs and a recorded duration (rigid, production traces); None otherwise or without GPUs."""
    if not jobs or not all(j.rigid for j in jobs):
        return None
    capacity = cluster.total_capacity("gpu") if "gpu" in cluster.resource_names() else 0.0
    if not capacity or math.isinf(capacity):
        return None
    asked = sum(float(j.gpus or 0) * float(j.duration or 0) for j in jobs)
    span = max(j.arrival for j in jobs) - min(j.arrival for j in jobs) + max(int(j.duration or 0) for j in jobs)
    return asked / (capacity * max(span, 1))


def load_warning(load: float | None) -> str:
    if load is None:
        return ""
    if load < IDLE_LOAD:
        return (
            f"The trace asks for {load:.1%} of the cluster's GPU-time over its span: the cluster is nearly idle, "
            "so every algorithm is likely to give the same schedule."
        )
    if load > OVERLOAD:
        return (
            f"The trace asks for {load:.1f}x the cluster's GPU-time over its span: hopelessly overloaded, "
            "queues grow without bound whatever the algorithm."
        )
    return ""


def summarize(jobs: tuple[Job, ...], cluster: Cluster) -> dict[str, Any]:
    """The stored summary of a loaded trace (JSON-ready, a few KB whatever the trace's size)."""
    arrivals = np.fromiter((j.arrival for j in jobs), dtype=np.int64, count=len(jobs))
    lo, hi = int(arrivals.min()), int(arrivals.max())
    counts, edges = np.histogram(arrivals, bins=min(ARRIVAL_BINS, hi - lo + 1), range=(lo, hi + 1))
    gpus = Counter(gpu_demand(j, cluster) for j in jobs)
    instance = Instance(cluster, jobs)
    load = offered_load(jobs, cluster)
    return {
        "jobs": len(jobs),
        "span": [lo, hi],
        "slot_seconds": cluster.slot_seconds,
        "arrivals": {
            "start": [float(e) for e in edges[:-1]],
            "width": float(edges[1] - edges[0]),
            "count": [int(c) for c in counts],
        },
        "gpu_demand": [[g, n] for g, n in sorted(gpus.items())],
        "offered_load": load,
        "load_warning": load_warning(load),
        "unsupported": {name: spec.unsupported(instance) for name, spec in registry.all_specs().items()},
    }


def run_import(fmt: str, data: bytes, name: str, suffix: str, options: Mapping[str, Any] | None = None) -> str:
    """The text ``importers.run`` makes of the raw file ``data`` in format ``fmt`` (the CLI's import;
    ``options`` are its flags); InputError names the uploaded file ``name``, its line and column."""
    with tempfile.TemporaryDirectory(prefix="mlsched-import-") as tmp:
        raw = Path(tmp) / (Path(name).name or "raw.csv")
        raw.write_bytes(data)
        out = Path(tmp) / f"imported{suffix}"
        try:
            importers.run(fmt, raw, out, **dict(options or {}))
        except InputError as exc:
            raise InputError(exc.problem, file=name, line=exc.line, job=exc.job, field=exc.field) from None
        return out.read_text(encoding="utf-8")


def import_raw(data: CheckInput) -> str:
    """The job trace imported from ``data.raw`` (generic-gpu, as the dashboard's "import-gpu")."""
    assert data.raw is not None
    return run_import("generic-gpu", data.raw, data.raw_name, ".csv", data.import_options)


def check_trace(data: CheckInput, report: Report) -> dict[str, Any]:
    """Load the trace against the cluster (InputError names the file, line, job and field) and
    summarize it."""
    report(0.05, "reading the cluster spec")
    cluster = loaders.parse_cluster(data.cluster_text, data.cluster_name)
    report(0.1, "loading and validating every job")
    jobs = loaders.parse_trace(data.trace_text, cluster, data.trace_name, trace_format(data.trace_name))
    report(0.9, "summarizing")
    return summarize(jobs, cluster)
