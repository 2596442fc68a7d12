"""Creating an experiment (its runs queued, sent after commit or once its trace's check passed),
cancelling its runs, running it again, deleting it with its stored files."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from webapp import figurecache, inputchecks, quotas, repetitions, submit_worker, tracechecks
from webapp.chartindex import chart_index_name
from webapp.datasets import remember
from webapp.dispatch import dispatch
from webapp.inputs import Inputs, Submission
from webapp.models import Dataset, Experiment, InputText, Run, TraceCheck
from webapp.security import fit

NAME_LENGTH = Experiment._meta.get_field("name").max_length or 200


def create_experiment(sub: Submission, owner: Any = None) -> Experiment:
    """Store the experiment and one queued run per (algorithm, parameters); after commit the runs
    are sent as one Celery group. If the broker is unreachable the experiment is kept and its runs
    wait (``pending_dispatch``); ``recover_runs`` sends them when the broker is back."""
    specs = repetitions.expand(sub.runs, sub.repetition, sub.seed)
    quotas.check_new_experiment(owner, len(specs))  # every run the workers will take, repetitions included
    with transaction.atomic():
        inputs = sub.inputs
        exp = Experiment.objects.create(
            owner=owner if owner is not None and getattr(owner, "pk", None) else None,
            name=fit(sub.name, NAME_LENGTH),  # generated names ("<cluster> + <trace>", "... (rerun)") may be longer
            source=inputs.source,
            kind=sub.kind,
            sweep=dict(sub.sweep),
            repetition=dict(sub.repetition),
            preset=inputs.preset,
            preset_options=dict(inputs.preset_options),
            cluster_name=inputs.cluster_name,
            cluster_input=InputText.intern(inputs.cluster_text),  # each file stored once, by digest
            trace_name=inputs.trace_name,
            trace_input=InputText.intern(inputs.trace_text),
            history_name=inputs.history_name,
            history_input=InputText.intern(inputs.history_text) if inputs.history_text else None,
            seed=sub.seed,
            input_check=_input_check(sub, owner),
        )
        runs = Run.objects.bulk_create(
            [
                Run(
                    experiment=exp,
                    algorithm=s.algorithm,
                    params=dict(s.params),
                    seed=s.seed,
                    dispatched=False,
                    repetition=s.repetition,
                    trace_seed=s.trace_seed,
                    window=list(s.window) if s.window else None,
                )
                for s in specs
            ]
        )
        ids = [r.pk for r in runs] or list(exp.runs.values_list("pk", flat=True))
        if exp.input_check_id is not None:  # sent once the check passes (at once if it already ended)
            transaction.on_commit(partial(inputchecks.release, exp.input_check_id))
        elif submit_worker.pending(exp):  # a worker cuts or adapts the trace first, then sends them
            transaction.on_commit(partial(submit_worker.send, exp.pk))
        else:
            transaction.on_commit(partial(dispatch, exp.pk, ids))
    return exp


def _input_check(sub: Submission, owner: Any) -> TraceCheck | None:
    """The check a submission's runs wait for (webapp/inputchecks.py), started now; None: none."""
    if not sub.check_first or owner is None or not getattr(owner, "pk", None):
        return None  # (no owner to keep the datasets: each run loads and checks the inputs itself)
    if sub.library is not None:
        trace, cluster = (Dataset.objects.get(pk=pk) for pk in sub.library)
        return tracechecks.start(trace, cluster)
    i = sub.inputs
    return upload_check(owner, (i.cluster_name, i.cluster_text), (i.trace_name, i.trace_text))


def upload_check(owner: Any, cluster: tuple[str, str], trace: tuple[str, str]) -> TraceCheck:
    """The check of an uploaded trace against its cluster spec, each (name, text), started now; the
    files join ``owner``'s datasets (as every uploaded file does: ``datasets.remember_uploads``)."""
    return tracechecks.start(
        remember(owner, Dataset.Kind.TRACE, *trace), remember(owner, Dataset.Kind.CLUSTER, *cluster)
    )


def cancel(exp: Experiment, run: Run | None = None) -> int:
    """Cancel one run or all unfinished runs of ``exp``: a queued run at once, a running one at its
    worker's next heartbeat (the worker stops at its next decision). Returns the runs affected."""
    runs = exp.runs.filter(pk=run.pk) if run is not None else exp.runs.all()
    now = timezone.now()
    n = runs.filter(status=Run.Status.QUEUED).update(
        status=Run.Status.CANCELLED, cancel_requested=True, error="cancelled by the user", finished=now
    )
    n += runs.filter(status=Run.Status.RUNNING).update(cancel_requested=True)
    return n


def delete_experiment(exp: Experiment) -> None:
    """Cancel what still runs, delete the rows and the stored result files (and Gantt indexes), and
    the input files no other experiment uses."""
    from django.core.files.storage import default_storage

    from webapp.runstore import index_name

    cancel(exp)
    names = [r.result.name for r in exp.runs.all() if r.result.name]
    digests = exp.input_digests()
    figurecache.forget(exp.pk)
    exp.delete()
    InputText.delete_unused(digests)
    for name in names:
        for path in (name, index_name(name), chart_index_name(name)):
            if default_storage.exists(path):
                default_storage.delete(path)


def rerun(exp: Experiment, owner: Any) -> Experiment:
    """A new experiment with the same frozen inputs, runs and seed."""
    sub = Submission(
        name=f"{exp.name} (rerun)",
        inputs=Inputs(
            exp.source, exp.cluster_name, exp.cluster_text, exp.trace_name, exp.trace_text, exp.preset,
            exp.preset_options, exp.history_name, exp.history_text,
        ),
        runs=[(r.algorithm, r.params) for r in exp.runs.all() if r.repetition in (None, 0)],
        seed=exp.seed,
        kind=exp.kind,
        sweep=exp.sweep,
        repetition=exp.repetition,
    )  # fmt: skip
    return create_experiment(sub, owner)
