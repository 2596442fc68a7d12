"""What the views do: create experiments, queue their runs, report status and assemble pages."""

from __future__ import annotations

import gzip
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.shortcuts import get_object_or_404
from django.utils import timezone
from kombu.exceptions import OperationalError

from webapp import charts
from webapp.models import Experiment, Run
from webapp.runstore import decode_result
from workers.tasks import simulate_run

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Inputs:
    """A validated cluster spec and trace, and where they came from."""

    source: str  # Experiment.Source
    cluster_name: str
    cluster_text: str
    trace_name: str
    trace_text: str
    preset: str = ""
    preset_options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Submission:
    name: str
    inputs: Inputs
    runs: Sequence[tuple[str, Mapping[str, Any]]]  # (algorithm, parsed parameters), in order
    seed: int


# ---------------------------------------------------------------------------------------------
# Access helpers: the one way views fetch objects.


def get_experiment(pk: int) -> Experiment:
    """The experiment with its runs, after failing those whose worker was lost."""
    expire_lost_runs()
    exp: Experiment = get_object_or_404(Experiment.objects.prefetch_related("runs"), pk=pk)
    return exp


def get_result_file(pk: int) -> tuple[Run, bytes]:
    """A done run and its result document as JSON bytes (404 for any other run)."""
    run = get_object_or_404(Run, pk=pk, status=Run.Status.DONE)
    with run.result.open("rb") as f:
        return run, gzip.decompress(f.read())


def list_experiments() -> list[Experiment]:
    expire_lost_runs()
    return list(Experiment.objects.prefetch_related("runs"))


# ---------------------------------------------------------------------------------------------
# Creating and running


def create_experiment(sub: Submission) -> Experiment:
    """Store the experiment and one queued run per algorithm; the runs are queued after commit."""
    with transaction.atomic():
        inputs = sub.inputs
        exp = Experiment.objects.create(
            name=sub.name,
            source=inputs.source,
            preset=inputs.preset,
            preset_options=dict(inputs.preset_options),
            cluster_name=inputs.cluster_name,
            cluster_text=inputs.cluster_text,
            trace_name=inputs.trace_name,
            trace_text=inputs.trace_text,
        )
        for algorithm, params in sub.runs:
            run = Run.objects.create(experiment=exp, algorithm=algorithm, params=dict(params), seed=sub.seed)
            transaction.on_commit(partial(enqueue, run.pk))
    return exp


def enqueue(run_id: int) -> None:
    """Hand a run to the workers; if the broker cannot be reached the run fails with that reason."""
    try:
        simulate_run.delay(run_id)
    except OperationalError as exc:
        logger.exception("could not queue run %s", run_id)
        Run.objects.filter(pk=run_id, status=Run.Status.QUEUED).update(
            status=Run.Status.FAILED, error=f"could not reach the task queue: {exc}", finished=timezone.now()
        )


def expire_lost_runs() -> int:
    """Fail runs "running" for longer than the time limit allows: their worker died or was killed."""
    limit = settings.MLSCHED_RUN_TIME_LIMIT
    cutoff = timezone.now() - timedelta(seconds=limit + settings.MLSCHED_STALE_GRACE)
    return Run.objects.filter(status=Run.Status.RUNNING, started__lt=cutoff).update(
        status=Run.Status.FAILED,
        error=f"lost: no result within the {limit} s time limit (the worker stopped or was killed)",
        finished=timezone.now(),
    )


def load_result(run: Run) -> dict[str, Any]:
    with run.result.open("rb") as f:
        return decode_result(f.read())


# ---------------------------------------------------------------------------------------------
# Pages


def status(exp: Experiment) -> dict[str, Any]:
    """The experiment page's polling payload."""
    runs = list(exp.runs.all())
    return {
        "experiment": exp.pk,
        "finished": all(r.is_finished for r in runs),
        "runs": [
            {
                "id": r.pk,
                "algorithm": r.algorithm,
                "status": r.status,
                "error": r.error,
                "started": r.started.isoformat() if r.started else None,
                "finished": r.finished.isoformat() if r.finished else None,
            }
            for r in runs
        ],
    }


def experiment_page(exp: Experiment) -> dict[str, Any]:
    runs = list(exp.runs.all())
    results = {r.pk: load_result(r) for r in runs if r.status == Run.Status.DONE}
    slot_seconds = next(iter(results.values()))["slot_seconds"] if results else None
    return {
        "experiment": exp,
        "runs": runs,
        "finished": all(r.is_finished for r in runs),
        "metric_columns": charts.METRIC_COLUMNS,
        "metric_rows": [charts.metrics_row(r.algorithm, r.params, results[r.pk]) for r in runs if r.pk in results],
        "slot_seconds": slot_seconds,
        "gantts": [
            {
                "dom_id": f"gantt-{r.pk}",
                "script_id": f"figure-{r.pk}",
                "figure": charts.gantt(results[r.pk], r.algorithm),
            }
            for r in runs
            if r.pk in results
        ],
        "comparisons": _comparisons([(r.algorithm, results[r.pk]) for r in runs if r.pk in results]),
        "cluster_preview": preview(exp.cluster_text),
        "trace_preview": preview(exp.trace_text),
    }


def _comparisons(runs: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Figures comparing the experiment's finished runs, each with its DOM and JSON script ids."""
    if not runs:
        return []
    figures = [charts.jct_cdf(runs), *charts.utilization(runs)]
    return [{"dom_id": f"compare-{i}", "script_id": f"compare-figure-{i}", "figure": f} for i, f in enumerate(figures)]


def preview(text: str, lines: int = 25, chars: int = 5000) -> str:
    """The head of an input file for display."""
    head = "\n".join(text[:chars].splitlines()[:lines])
    return head if len(head) >= len(text.rstrip()) else head + "\n…"
