"""Sending queued runs to the workers: one Celery group per call, each run marked sent by one
conditional UPDATE so that of two processes reading the same runs one sends each."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError

from webapp.models import Experiment, Run
from workers import tasks

logger = logging.getLogger(__name__)


def dispatch(
    experiment_id: int, run_ids: Sequence[int], sent_at: Mapping[int, datetime | None] | None = None
) -> int | None:
    """Send runs to the workers (one group); on a broker error keep them waiting. The number of
    runs this call sent, None if the broker could not be reached.

    Each run is marked sent before its message goes out, by one conditional UPDATE on the state the
    caller read (``_take``): a run not sent yet (``sent_at`` None), or one sent at ``sent_at[id]``
    whose message seems lost. Of a submission and a recovery (or two recoveries) that read the
    same runs, one sends each run. A process that dies between the mark and the send leaves a run
    marked sent without a message: the lost-message rule of ``recover_runs`` sends it again."""
    taken, now = _take(run_ids, sent_at)
    if not taken:
        return 0
    try:
        tasks.send_runs(taken)
    except OperationalError as exc:
        logger.warning("broker unreachable, %d runs of experiment %s wait: %s", len(taken), experiment_id, exc)
        Run.objects.filter(pk__in=taken, status=Run.Status.QUEUED, dispatched_at=now).update(dispatched=False)
        Experiment.objects.filter(pk=experiment_id).update(pending_dispatch=True)
        return None
    if not Run.objects.filter(experiment_id=experiment_id, dispatched=False, status=Run.Status.QUEUED).exists():
        Experiment.objects.filter(pk=experiment_id).update(pending_dispatch=False)
    return len(taken)


def _take(run_ids: Sequence[int], sent_at: Mapping[int, datetime | None] | None) -> tuple[list[int], datetime]:
    """Mark as sent now those of ``run_ids`` that are still queued in the state read (not sent, or
    sent at ``sent_at[id]``), each by one conditional UPDATE, in id order (two processes that
    take the same runs lock them in the same order); the ids taken and the time recorded."""
    now = timezone.now()
    taken = []
    with transaction.atomic():
        for pk in sorted(run_ids):
            same = Run.objects.filter(pk=pk, status=Run.Status.QUEUED)
            same = (
                same.filter(dispatched=False)
                if sent_at is None
                else same.filter(dispatched=True, dispatched_at=sent_at[pk])
            )
            if same.update(dispatched=True, dispatched_at=now):
                taken.append(pk)
    return taken, now


def enqueue(run_id: int) -> bool:
    """Send one queued run whatever its recorded sending (kept for scripts and tests); True if
    sent. See ``dispatch``."""
    exp_id, dispatched, sent_at = Run.objects.values_list("experiment_id", "dispatched", "dispatched_at").get(pk=run_id)
    return bool(dispatch(exp_id, [run_id], {run_id: sent_at} if dispatched else None))
