"""Experiments whose trace is checked by a worker before their runs start: web requests never parse
a large trace (docs/architecture.md, "Creating an experiment").

A trace of more than ``limits.INLINE_ROWS`` rows, uploaded with the form or the API or picked from the
library before its check finished, is not loaded in the request. The experiment and its runs are
stored at once (the runs queued but not sent) with ``Experiment.input_check``: the ``TraceCheck``
of the pair, which a worker runs (``workers.checks``, as for a dataset; uploaded files are added to
the owner's datasets for it, where the check's progress shows). When the check ends, ``release``
sends the runs the trace supports, fails those of algorithms that cannot run it with the reason,
or, when the trace is invalid, fails every run with the check's error (file, line, job, field).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from webapp import submit_worker
from webapp.dispatch import dispatch
from webapp.models import Experiment, Run, TraceCheck


def release(check_id: int) -> None:
    """The check ``check_id`` ended: send, or fail, the queued runs of every experiment waiting on it."""
    check = TraceCheck.objects.filter(pk=check_id).first()
    if check is None or check.status not in (TraceCheck.Status.DONE, TraceCheck.Status.FAILED):
        return
    for exp_id in Experiment.objects.filter(input_check=check_id).values_list("pk", flat=True):
        with transaction.atomic():
            if not Experiment.objects.filter(pk=exp_id, input_check=check_id).update(input_check=None):
                continue  # released meanwhile by another ending of the same check
            queued = Run.objects.filter(experiment_id=exp_id, status=Run.Status.QUEUED)
            now = timezone.now()
            if check.status == TraceCheck.Status.FAILED:
                queued.update(status=Run.Status.FAILED, error=f"the trace did not pass its check: {check.error}",
                              finished=now)  # fmt: skip
                continue
            # (With a history the check, which reads the trace alone, cannot tell: each run does; run
            # as a model, the adapted instance decides: the preparation tells, webapp/submit_worker.py.)
            exp = Experiment.objects.only("history_input", "preset_options").get(pk=exp_id)
            as_given = exp.history_input_id is None and "adapt" not in (exp.preset_options or {})
            unsupported = (check.summary or {}).get("unsupported", {}) if as_given else {}
            for algorithm, why in unsupported.items():
                if why:
                    queued.filter(algorithm=algorithm).update(status=Run.Status.FAILED, error=why, finished=now)
            ids = list(queued.values_list("pk", flat=True))
            if submit_worker.pending(exp):  # windows cut, model adapted first: webapp/submit_worker.py
                transaction.on_commit(partial(submit_worker.send, exp_id))
            else:
                transaction.on_commit(partial(dispatch, exp_id, ids))


def state(exp: Experiment) -> dict[str, Any] | None:
    """What the experiment page and the status JSON say while the runs wait for the check, or None."""
    check = exp.input_check
    if check is None:
        return None
    return {"status": check.status, "progress": round(check.progress, 3), "phase": check.phase,
            "dataset": check.trace_id}  # fmt: skip
