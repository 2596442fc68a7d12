"""The heavy part of a submission, done by a worker instead of the web request: cutting a large trace
into the windows of a window repetition and adapting it to a paper's model ("Run as the model of").

The request stores the experiment with its runs queued but not sent, and a note that they wait for
this preparation (``webapp.submit_worker``); once the trace's own check has passed when it has one
(``webapp.inputchecks``), ``prepare_submission`` loads the trace, cuts it (``scheduling.repeat.
window_cases``, as every run's worker cuts it again) and adapts it (``scheduling.adapt``, as every
run's worker adapts it again), and records the outcome: each window's span of arrival slots, each
adapted instance's adapt.json record, and the runs that cannot go ahead with the reason (a window
that holds no job, a model the trace does not adapt to, an algorithm the adapted instance does not
support). The other runs are then sent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from scheduling import collector, registry, repeat
from scheduling.errors import InputError
from scheduling.model import Instance
from workers.celery import app
from workers.runs import adapted, load_instance

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SubmissionInput:
    """What the preparation reads: the inputs, the cut (None: no windows), the model choice (None:
    as given) and the runs as (id, algorithm, parameters)."""

    cluster_name: str
    cluster_text: str
    trace_name: str
    trace_text: str
    runs: Sequence[tuple[int, str, Mapping[str, Any]]]
    cut: int | Sequence[Sequence[int]] | None = None
    adapt: Mapping[str, Any] | None = None  # {"model", "seed", "history_fraction"}
    history: tuple[str, str] | None = None  # (name, text) of a separate history


@dataclass
class Prepared:
    """The outcome: ``spans`` of the windows, adapt.json ``records``, ``refused`` runs (id -> reason);
    ``error``: a reason every run fails with (nothing else is then set)."""

    spans: list[tuple[int, int]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    refused: dict[int, str] = field(default_factory=dict)
    error: str = ""


class SubmissionStore(Protocol):
    def claim(self, experiment_id: int) -> SubmissionInput | None:
        """The experiment's inputs if its preparation is still to be done (taken now); else None."""

    def beat(self, experiment_id: int) -> bool:
        """A sign that the preparation taken by ``claim`` goes on; False: it is no longer this
        worker's (done, failed or deleted)."""

    def finish(self, experiment_id: int, outcome: Prepared) -> None:
        """Record the outcome, fail the refused runs (every run on ``outcome.error``), send the others."""

    def release(self) -> None:
        """Free what the calling thread holds (database connection)."""


def submission_store() -> SubmissionStore:
    store: SubmissionStore = import_string(settings.MLSCHED_SUBMISSION_STORE)()
    return store


def prepare(data: SubmissionInput) -> Prepared:
    """Load, cut and adapt as the runs' workers will; InputError and unsupported instances become the
    reasons of the outcome (the request could not tell them without loading the trace)."""
    out = Prepared()
    try:
        rigid = load_instance(data.cluster_text, data.cluster_name, data.trace_text, data.trace_name,
                              history=data.history)  # fmt: skip
    except InputError as exc:
        out.error = str(exc)
        return out
    parts: list[tuple[Instance, int | None]] = [(rigid, None)]
    if data.cut is not None:
        spec = data.cut if isinstance(data.cut, int) else [(int(a), int(b)) for a, b in data.cut]
        try:
            cases = repeat.window_cases(rigid, spec, [0])
        except InputError as exc:
            out.error = f"the windows ({_cut_text(data.cut)}): {exc.problem}"
            return out
        for case in cases:
            start, _, end = (case.window or "0:0").partition(":")
            out.spans.append((int(start), int(end)))
        parts = [(case.instance, i) for i, case in enumerate(cases)]
    instances = [p for p, _ in parts]
    if data.adapt is not None:
        model = str(data.adapt["model"])
        names = {"cluster": data.cluster_name, "trace": data.trace_name}
        instances = []
        for part, window in parts:
            try:
                files = adapted(part, data.adapt, names, window)
            except InputError as exc:
                where = "" if window is None else f"window {window + 1}: "
                out.error = f"as the model of {model}: {where}{exc.problem}"
                out.records = []
                return out
            out.records.append(files.record)
            instances.append(files.instance())
    seen: dict[tuple[str, str], str | None] = {}
    for run_id, algorithm, params in data.runs:
        key = (algorithm, repr(sorted(params.items())))
        if key not in seen:
            seen[key] = next((w for inst in instances if (w := _refusal(algorithm, params, inst))), None)
        if why := seen[key]:
            out.refused[run_id] = f"as the model of {data.adapt['model']}: {why}" if data.adapt else why
    return out


def _refusal(algorithm: str, params: Mapping[str, Any], instance: Instance) -> str | None:
    """Why ``algorithm`` cannot run ``instance`` (asrpt: also a fitted predictor with no history)."""
    try:
        spec = registry.get(algorithm)
    except InputError as exc:
        return exc.problem
    why = spec.unsupported(instance)
    if why or algorithm != "asrpt":
        return why
    from scheduling.algorithms.asrpt.spec import without_history

    return without_history(instance, spec.parse_params(dict(params)))


def _cut_text(cut: int | Sequence[Sequence[int]]) -> str:
    return str(cut) if isinstance(cut, int) else ", ".join(f"{a}:{b}" for a, b in cut)


@app.task(name="workers.prepare_submission", ignore_result=True)
def prepare_submission(experiment_id: int) -> str:
    """Cut and adapt a submission's trace (see the module docstring), then send its runs."""
    store = submission_store()
    data = store.claim(experiment_id)
    if data is None:
        logger.warning("experiment %s has no preparation waiting (done, or deleted): skipped", experiment_id)
        return "skipped"
    from workers.tasks import Control, Heartbeat

    # Beats while the trace is cut and adapted: the recovery tells a long preparation from a lost one.
    beat = Heartbeat(f"preparation of experiment {experiment_id}",
                     lambda: None if store.beat(experiment_id) else "gone", store.release, Control(),
                     settings.MLSCHED_HEARTBEAT)  # fmt: skip
    beat.start()
    error: Exception | None = None
    try:
        with collector.fewer_collections():
            outcome = prepare(data)
    except Exception as exc:
        outcome = Prepared(error=f"internal error while preparing the runs: {type(exc).__name__}: {exc}")
        error = exc
    finally:
        beat.stop()  # before the outcome is recorded (also on a BaseException: no beat outlives its preparation)
    store.finish(experiment_id, outcome)
    if error is not None:
        raise error
    return "failed" if outcome.error else "done"


def send_preparation(experiment_id: int) -> None:
    """Send the preparation of one experiment. Raises kombu's OperationalError when the broker
    cannot be reached or does not answer."""
    from workers.tasks import broker_connection

    with broker_connection() as connection:
        prepare_submission.si(experiment_id).apply_async(producer=app.amqp.Producer(connection))
