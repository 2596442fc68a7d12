"""What a simulation task needs, independent of where runs are stored.

The dependency runs one way (webapp -> workers -> scheduling): a task does not import the Django
models. It reads and records a run through a ``RunStore``, whose implementation the settings name
(``MLSCHED_RUN_STORE``, the Django one is ``webapp.runstore.DjangoRunStore``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from scheduling import loaders, repeat
from scheduling.model import Instance, Job


@dataclass(frozen=True)
class RunInput:
    cluster_name: str  # label used in error messages, e.g. "cluster.json"
    cluster_text: str  # cluster spec, JSON
    trace_name: str  # "....csv" or "....json": also selects the trace format
    trace_text: str
    algorithm: str  # registry name
    params: Mapping[str, Any] = field(default_factory=dict)  # parsed against the registry again
    seed: int = 0
    # A repetition over windows of the trace: how it is cut (K, or [start, end) arrival-slot ranges, as
    # scheduling.repeat.window_cases takes them) and the number of the window this run sees.
    windows: int | Sequence[Sequence[int]] | None = None
    window: int | None = None
    # A separate trace of past jobs that the algorithm may learn from (Instance.history), same
    # format rules as the trace: the one given with the experiment's trace, or a preset
    # experiment's own (presets.own_history); None for an algorithm that learns from none.
    history_name: str | None = None
    history_text: str | None = None


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

    def finish(self, run_id: int, result: Mapping[str, Any]) -> str:
        """Record a validated result document and mark the run done; "done" when it was.

        Idempotent completion: the first complete result wins. It is recorded while the run is
        running (whichever worker claimed it last), queued again, or failed as lost (declared lost
        while its worker was only slow); otherwise (another worker's result is already recorded,
        the user cancelled it, it was deleted) nothing is recorded and the returned text says what
        the run holds instead."""

    def fail(self, run_id: int, message: str) -> None:
        """Mark the run failed with a message for the user."""

    def give_back(self, run_id: int, note: str) -> None:
        """Put a running run back in the queue, unsent (``recover_runs`` sends it to another
        worker), with ``note`` as its error: its worker cannot store results."""

    def cannot_store(self, worker: str, problem: str) -> None:
        """Record that ``worker`` stopped taking runs because it cannot store results."""

    def probe(self, worker: str) -> None:
        """Write and delete a small file where results go; raise the storage's OSError if it refuses.
        On success, clear what ``cannot_store`` recorded of ``worker``."""

    def cancelled(self, run_id: int, message: str) -> None:
        """Mark the run cancelled (it stopped at the user's request)."""

    def release(self) -> None:
        """Free what the calling thread holds (database connection); called by helper threads."""


def trace_format(name: str) -> str:
    return "json" if name.lower().endswith(".json") else "csv"


def load_instance(
    cluster_text: str,
    cluster_name: str,
    trace_text: str,
    trace_name: str,
    checkpoint: Callable[[], None] | None = None,
    *,
    windows: int | Sequence[Sequence[int]] | None = None,
    window: int | None = None,
    history: tuple[str, str] | None = None,
) -> Instance:
    """Parse a cluster spec and a trace; InputError names the file, line, job and field at fault.
    ``checkpoint`` is called between the files and every few rows of the trace, and may raise to
    stop the load (``loaders.parse_trace``). ``windows``, ``window``: keep only window number
    ``window`` of the trace cut as ``scheduling.repeat.window_cases`` cuts it (K windows of equal job
    counts, or arrival-slot ranges), its arrivals shifted to start at slot 0. ``history``: (name,
    text) of a separate trace of past jobs (``Instance.history``), read against the same cluster."""
    cluster = loaders.parse_cluster(cluster_text, cluster_name)
    if checkpoint is not None:
        checkpoint()
    jobs = loaders.parse_trace(trace_text, cluster, trace_name, trace_format(trace_name), checkpoint)
    past: tuple[Job, ...] = ()
    if history is not None:
        name, text = history
        past = loaders.parse_trace(text, cluster, name, trace_format(name), checkpoint)
    instance = Instance(cluster, jobs, history=past)
    if windows is None or window is None:
        return instance
    spec = windows if isinstance(windows, int) else [(int(a), int(b)) for a, b in windows]
    return repeat.window_cases(instance, spec, [0])[window].instance
