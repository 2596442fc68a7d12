"""Submissions whose heavy part a worker does: a window repetition or a "Run as the model of" choice
on a trace of more than ``limits.INLINE_ROWS`` rows (docs/architecture.md, "Creating an
experiment"). The request never loads such a trace.

The form (``defer``) checks what it can without the trace (the window spec's syntax and count, the
model's rules, the run count) and stores the experiment with its runs queued but not sent, the
windows' spans still unknown for a count K (``None``), and ``preset_options["prepare"]``: the note
that the runs wait for ``workers.submissions.prepare_submission``. That task is sent at once, or
once the trace's own check has passed (``inputchecks.release``); it cuts and adapts the trace and
``DjangoSubmissionStore.finish`` records each window's span and adapt.json record, fails the runs
that cannot go ahead with the reason (a window without jobs, a model the trace does not adapt to,
an algorithm the adapted instance cannot run) and sends the others. A lost message is sent again by
``recover`` (``manage.py recover_runs``).
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from kombu.exceptions import OperationalError

from scheduling import repeat
from scheduling.errors import InputError
from webapp import repetitions
from webapp.limits import too_large
from webapp.models import Experiment, Run
from workers import submissions
from workers.submissions import Prepared, SubmissionInput

logger = logging.getLogger(__name__)

KEY = "prepare"  # in Experiment.preset_options while the runs wait for the preparation
ADAPT = "adapt"  # webapp.adapted.KEY


def pending(exp: Experiment) -> bool:
    return KEY in (exp.preset_options or {})


def defer(form: Any, data: dict[str, Any], instance: Any) -> bool:
    """``ExperimentForm.clean`` with windows or a model on a large trace (not loaded here): check what
    can be checked without the trace, set ``form.repetition`` and ``form.inputs`` for the worker to
    finish, and return True (form errors on the fields at fault, if any); False: not such a case."""
    from scheduling.model import Instance
    from webapp.runspecs import MAX_RUNS

    inputs = form.inputs
    windows = (data.get("repeat") or repetitions.NONE) == repetitions.WINDOWS
    model = data.get("model") or data.get("history_fraction") is not None
    if not (windows or model) or isinstance(instance, Instance) or inputs.source == Experiment.Source.PRESET:
        return False
    if not too_large(inputs.trace_text):
        return False
    choice: dict[str, Any] | None = None
    if model:
        choice = _model_choice(form, data)
        if choice is None:
            return True
    elif instance is not None:
        form._check_supported(instance, set(data.get("algorithms") or ()))
    form.repetition = {}
    if windows:
        text = (data.get("repeat_windows") or "").strip()
        try:
            if not text:
                raise ValueError("Give the windows: a count (5) or arrival-slot ranges (0:500, 500:1000).")
            try:
                cut = repeat.parse_windows(text.replace(" ", ""), field="windows")
            except InputError as exc:
                raise ValueError(exc.problem) from None
            n = cut if isinstance(cut, int) else len(cut)
            if not 2 <= n <= repetitions.MAX_SEEDS:
                raise ValueError(f"{n} windows: cut the trace into 2 to {repetitions.MAX_SEEDS} windows")
        except ValueError as exc:
            form.add_error("repeat_windows", str(exc))
            return True
        # The spans of a count K are known once a worker has cut the trace; ranges are their own spans.
        spans: list[Any] = [[None, None]] * n if isinstance(cut, int) else [list(w) for w in cut]
        form.repetition = repetitions.describe(repetitions.WINDOWS, [], cut, spans, False)
        total = len(form.chosen) * n
        if total > MAX_RUNS:
            form.add_error(None, f"{total} runs ({len(form.chosen)} x {n} repetitions): an experiment may have "
                           f"at most {MAX_RUNS}")  # fmt: skip
    options = {**inputs.preset_options, KEY: _note("waiting")}
    if choice is not None:
        options[ADAPT] = choice
    form.inputs = dataclasses.replace(inputs, preset_options=options)
    return True


def _note(state: str, attempts: int = 0) -> dict[str, Any]:
    """``attempts``: the claims by workers so far (kept when it is sent again)."""
    note: dict[str, Any] = {"state": state, "at": timezone.now().isoformat()}
    if attempts:
        note["attempts"] = attempts
    return note


def _model_choice(form: Any, data: dict[str, Any]) -> dict[str, Any] | None:
    """The model's rules that need no trace (``adapted.check_form``'s); None with a form error."""
    model, fraction = data.get("model") or "", data.get("history_fraction")
    if not model:
        form.add_error("history_fraction", "A history fraction needs a model to run as (Run as the model of).")
        return None
    if fraction is not None and not 0 < fraction < 1:
        form.add_error("history_fraction", "A fraction between 0 and 1 (exclusive), e.g. 0.3; blank: no history.")
        return None
    if form.inputs.history_text:
        form.add_error("model", "Not with a separate history: the history comes from the trace (history fraction).")
        return None
    return {"model": model, "seed": form.cleaned_data.get("seed") or 0, "history_fraction": fraction}


# ---------------------------------------------------------------------------------------------
# Sending, recovering


def send(experiment_id: int) -> bool:
    """Send the preparation (marked sent first); False when the broker could not be reached (the
    experiment then waits for the broker, and ``recover`` sends it)."""
    with transaction.atomic():
        exp = Experiment.objects.select_for_update().filter(pk=experiment_id).first()
        if exp is None or not pending(exp) or exp.input_check_id is not None:
            return False
        exp.preset_options[KEY] = _note("sent", exp.preset_options[KEY].get("attempts", 0))
        Experiment.objects.filter(pk=exp.pk).update(preset_options=exp.preset_options, pending_dispatch=False)
    try:
        submissions.send_preparation(experiment_id)
    except OperationalError as exc:
        logger.warning("broker unreachable, the preparation of experiment %s waits: %s", experiment_id, exc)
        Experiment.objects.filter(pk=experiment_id).update(pending_dispatch=True)
        return False
    return True


def recover() -> int:
    """Send again the preparations the broker could not take, and those whose message seems lost
    (stored, sent, or taken by a worker whose heartbeat stopped, more than ``MLSCHED_REDISPATCH_AFTER``
    seconds ago and still not done); the number sent. One lost with its worker on its
    ``MLSCHED_MAX_ATTEMPTS``-th claim fails its runs with the reason instead (a trace whose cutting
    or adapting kills every worker must not go round for ever)."""
    before = timezone.now() - timedelta(seconds=settings.MLSCHED_REDISPATCH_AFTER)
    sent = 0
    waiting = Experiment.objects.filter(input_check__isnull=True, preset_options__has_key=KEY)
    for exp in waiting.only("preset_options", "pending_dispatch"):
        note = exp.preset_options[KEY]
        at = note.get("at")
        unsent = note.get("state") == "waiting" and exp.pending_dispatch
        if not unsent and at and datetime.fromisoformat(at) > before:
            continue
        if note.get("state") == "running" and note.get("attempts", 0) >= settings.MLSCHED_MAX_ATTEMPTS:
            _give_up(exp.pk, note)
            continue
        if not send(exp.pk):
            break
        sent += 1
    return sent


def _give_up(experiment_id: int, note: dict[str, Any]) -> None:
    """Fail the queued runs of a preparation lost on its last attempt, if ``note`` is still its state."""
    with transaction.atomic():
        exp = Experiment.objects.select_for_update().filter(pk=experiment_id).first()
        if exp is None or (exp.preset_options or {}).get(KEY) != note:
            return
        options = {k: v for k, v in exp.preset_options.items() if k != KEY}
        Experiment.objects.filter(pk=exp.pk).update(preset_options=options)
        attempts = note["attempts"]
        reason = (f"lost: the worker stopped or was killed while it cut or adapted the trace for the runs, on "
                  f"attempt {attempts} of {settings.MLSCHED_MAX_ATTEMPTS}")  # fmt: skip
        exp.runs.filter(status=Run.Status.QUEUED).update(status=Run.Status.FAILED, error=reason,
                                                         finished=timezone.now())  # fmt: skip
    logger.warning("experiment %s: %s", experiment_id, reason)


# ---------------------------------------------------------------------------------------------
# The worker's store


class DjangoSubmissionStore:
    def claim(self, experiment_id: int) -> SubmissionInput | None:
        stale = timezone.now() - timedelta(seconds=settings.MLSCHED_REDISPATCH_AFTER)
        with transaction.atomic():
            exp = Experiment.objects.select_for_update().filter(pk=experiment_id).first()
            if exp is None or not pending(exp) or exp.input_check_id is not None:
                return None
            note = exp.preset_options[KEY]
            at = note.get("at")
            if note.get("state") == "running" and at and datetime.fromisoformat(at) > stale:
                return None  # another worker prepares it
            exp.preset_options[KEY] = _note("running", note.get("attempts", 0) + 1)
            Experiment.objects.filter(pk=exp.pk).update(preset_options=exp.preset_options)
        runs = exp.runs.filter(status=Run.Status.QUEUED).order_by("pk").values_list("pk", "algorithm", "params")
        repetition = exp.repetition or {}
        adapt = exp.preset_options.get(ADAPT)
        return SubmissionInput(
            cluster_name=exp.cluster_name,
            cluster_text=exp.cluster_text,
            trace_name=exp.trace_name,
            trace_text=exp.trace_text,
            runs=list(runs),
            cut=repetition.get("cut_by") if repetition.get("over") == repetitions.WINDOWS else None,
            adapt=None if not adapt else {k: adapt.get(k) for k in ("model", "seed", "history_fraction")},
            history=(exp.history_name, exp.history_text) if exp.history_text else None,
        )

    def beat(self, experiment_id: int) -> bool:
        with transaction.atomic():
            exp = Experiment.objects.select_for_update().filter(pk=experiment_id).first()
            if exp is None or not pending(exp) or exp.preset_options[KEY].get("state") != "running":
                return False
            exp.preset_options[KEY] = {**exp.preset_options[KEY], "at": timezone.now().isoformat()}
            Experiment.objects.filter(pk=exp.pk).update(preset_options=exp.preset_options)
        return True

    def finish(self, experiment_id: int, outcome: Prepared) -> None:
        from webapp.dispatch import dispatch

        now = timezone.now()
        with transaction.atomic():
            exp = Experiment.objects.select_for_update().filter(pk=experiment_id).first()
            if exp is None:
                return
            options = {k: v for k, v in exp.preset_options.items() if k != KEY}
            repetition = dict(exp.repetition or {})
            queued = Run.objects.filter(experiment=exp, status=Run.Status.QUEUED)
            if outcome.error:
                Experiment.objects.filter(pk=exp.pk).update(preset_options=options)
                queued.update(status=Run.Status.FAILED, error=outcome.error[:4000], finished=now)
                return
            if outcome.spans and repetition.get("over") == repetitions.WINDOWS:
                repetition["windows"] = [list(w) for w in outcome.spans]
                for index, span in enumerate(outcome.spans):
                    Run.objects.filter(experiment=exp, repetition=index).update(window=list(span))
            if ADAPT in options and outcome.records:
                options[ADAPT] = {**options[ADAPT], "records": outcome.records}
            Experiment.objects.filter(pk=exp.pk).update(preset_options=options, repetition=repetition)
            for run_id, why in outcome.refused.items():
                queued.filter(pk=run_id).update(status=Run.Status.FAILED, error=why[:4000], finished=now)
            ids = list(queued.values_list("pk", flat=True))
            transaction.on_commit(lambda: dispatch(experiment_id, ids))

    def release(self) -> None:
        connection.close()
