"""Lost-run recovery: runs of dead workers re-queued or failed, runs the broker never took or
lost sent again (``manage.py recover_runs``; never a web request)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError

from webapp import submit_worker
from webapp.dispatch import dispatch
from webapp.models import Run
from workers import tasks

logger = logging.getLogger(__name__)


def recover_runs() -> dict[str, int]:
    """Make sure no run is stuck:

    * a running run whose heartbeat stopped (its worker died or was killed) is re-queued while it
      has had fewer than MLSCHED_MAX_ATTEMPTS claims, else failed with the reason; a run the user
      asked to cancel is marked cancelled;
    * a running run past the time limit plus grace is failed (the solo pool cannot enforce limits);
    * queued runs the broker never took (it was down) are sent again;
    * queued runs whose message the broker lost (a Redis restart without persistence, a deleted
      queue) are sent again: when the queue holds fewer messages than there are queued runs sent
      to it, that many of the runs sent more than MLSCHED_REDISPATCH_AFTER seconds ago, oldest
      first, are sent again (a backlog alone sends nothing; a backlog with lost messages does not
      wait for the queue to empty). A duplicate is harmless: a worker skips a run that is no
      longer queued.

    Run by ``manage.py recover_runs`` (``--every N``: bin/run-local and docker-compose's
    ``recover`` service), never by a web request.
    """
    now = timezone.now()
    counts = {"requeued": 0, "failed": 0, "cancelled": 0, "dispatched": 0, "resent": 0}
    stale = now - timedelta(seconds=settings.MLSCHED_HEARTBEAT_TIMEOUT)
    running = Run.objects.filter(status=Run.Status.RUNNING)
    counts["cancelled"] += running.filter(cancel_requested=True, heartbeat__lt=stale).update(
        status=Run.Status.CANCELLED, error="cancelled (its worker had stopped)", finished=now
    )
    for run in running.filter(Q(heartbeat__lt=stale) | Q(heartbeat__isnull=True, started__lt=stale)):
        same = Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, heartbeat=run.heartbeat)
        if run.attempts < settings.MLSCHED_MAX_ATTEMPTS:
            silence = settings.MLSCHED_HEARTBEAT_TIMEOUT
            note = f"attempt {run.attempts} lost its worker (no heartbeat for {silence:g} s); re-queued"
            if same.update(status=Run.Status.QUEUED, dispatched=False, error=note, progress=0.0):
                counts["requeued"] += 1
                logger.warning("run %s: %s", run.pk, note)
        else:
            reason = (
                f"lost: the worker stopped or was killed during attempt {run.attempts} of "
                f"{settings.MLSCHED_MAX_ATTEMPTS} (no heartbeat for {settings.MLSCHED_HEARTBEAT_TIMEOUT:g} s)"
            )
            counts["failed"] += same.update(status=Run.Status.FAILED, error=reason, finished=now)
    limit = settings.MLSCHED_RUN_TIME_LIMIT
    cutoff = now - timedelta(seconds=limit + settings.MLSCHED_STALE_GRACE)
    counts["failed"] += Run.objects.filter(status=Run.Status.RUNNING, started__lt=cutoff).update(
        status=Run.Status.FAILED,
        error=f"lost: no result within the {limit} s time limit (the worker stopped or was killed)",
        finished=now,
    )
    queued = Run.objects.filter(status=Run.Status.QUEUED)
    # Runs that wait for their trace's check (webapp/inputchecks.py) are sent when it ends.
    # Runs that wait for a worker to cut or adapt their trace (webapp/submit_worker.py) are sent by it.
    unsent = queued.filter(dispatched=False, experiment__input_check__isnull=True)
    counts["dispatched"] = _send(unsent.exclude(experiment__preset_options__has_key=submit_worker.KEY), resend=False)
    counts["prepared"] = submit_worker.recover()
    sent_before = now - timedelta(seconds=settings.MLSCHED_REDISPATCH_AFTER)
    sent = queued.filter(dispatched=True)
    # A run sent before dispatch times were recorded counts from its creation.
    overdue = sent.filter(
        Q(dispatched_at__lt=sent_before) | Q(dispatched_at__isnull=True, created__lt=sent_before)
    ).order_by("dispatched_at", "created", "pk")
    if overdue.exists() and (missing := _missing_messages(sent)):
        counts["resent"] = _send(overdue[:missing], resend=True)
        if counts["resent"]:
            logger.warning("%d queued runs had no message in the broker's queue: sent again", counts["resent"])
    return counts


def _send(runs: QuerySet[Run], *, resend: bool) -> int:
    """Dispatch ``runs`` (``resend``: runs sent before whose message seems lost), one group per
    experiment; stops when the broker is unreachable (they are tried again at the next recovery).
    The number of runs sent by this call (not those another process took first)."""
    by_experiment: dict[int, dict[int, datetime | None]] = {}
    for run_id, exp_id, sent_at in runs.values_list("pk", "experiment_id", "dispatched_at"):
        by_experiment.setdefault(exp_id, {})[run_id] = sent_at
    sent = 0
    for exp_id, read in by_experiment.items():
        count = dispatch(exp_id, list(read), read if resend else None)
        if count is None:
            break
        sent += count
    return sent


def _missing_messages(sent: QuerySet[Run]) -> int:
    """How many messages the runs' queue lacks for the queued runs ``sent`` to it (0 when the broker
    cannot tell). The queue is read before the runs are counted: a worker taking a message in
    between then makes the count too low, never too high. A message a worker holds but has not
    started (prefetch, or taken and not yet claimed) is not in the queue, so its run may be sent
    twice: harmless (the claim skips it)."""
    try:
        messages = tasks.queued_messages()
    except OperationalError as exc:
        logger.warning("broker unreachable, lost messages not checked: %s", exc)
        return 0
    return max(0, sent.count() - messages)


def expire_lost_runs() -> int:
    """Compatibility name: run the recovery now; the number of runs failed."""
    return recover_runs().get("failed", 0)
