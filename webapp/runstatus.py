"""The state of an experiment's runs: queue places, time left, the polling payload."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from webapp import inputchecks, submit_worker
from webapp.models import Experiment, Run
from webapp.timeleft import left_text, seconds_left


def queue_positions(runs: Sequence[Run]) -> dict[int, int]:
    """Place of each queued run of ``runs`` in the line of every queued run (1: next to start).
    Workers take runs in the order they were sent, close to their creation order (ids)."""
    mine = [r.pk for r in runs if r.status == Run.Status.QUEUED]
    if not mine:
        return {}
    first = min(mine)
    ahead = Run.objects.filter(status=Run.Status.QUEUED, pk__lt=first).count()
    line = list(
        Run.objects.filter(status=Run.Status.QUEUED, pk__gte=first, pk__lte=max(mine))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    places = {pk: ahead + k + 1 for k, pk in enumerate(line)}
    return {pk: places[pk] for pk in mine if pk in places}


def status(exp: Experiment) -> dict[str, Any]:
    """The experiment page's (and the API's) polling payload."""
    runs = list(exp.runs.all())
    places = queue_positions(runs)
    now = timezone.now()
    left = {r.pk: seconds_left(r.progress, r.started, now) for r in runs if r.status == Run.Status.RUNNING}
    return {
        "experiment": exp.pk,
        "name": exp.name,
        "kind": exp.kind,
        "finished": all(r.is_finished for r in runs),
        "waiting_for_broker": waiting_for_broker(exp, runs),
        "input_check": inputchecks.state(exp),  # the trace's check the runs wait for (None: none)
        "runs": [
            {
                "id": r.pk,
                "algorithm": r.algorithm,
                "params": r.params,
                "seed": r.seed,
                "repetition": r.repetition,
                "trace_seed": r.trace_seed,
                "window": r.window,
                "status": r.status,
                "progress": round(r.progress, 4),
                "seconds_left": None if (s := left.get(r.pk)) is None else round(s, 1),  # timeleft.py
                "time_left": left_text(left.get(r.pk)),
                "queue_position": places.get(r.pk),  # queued runs: 1 = next to start
                "attempts": r.attempts,
                "error": r.error,
                "started": r.started.isoformat() if r.started else None,
                "finished": r.finished.isoformat() if r.finished else None,
                "metrics": r.metrics if r.status == Run.Status.DONE else None,
            }
            for r in runs
        ],
    }


def waiting_for_broker(exp: Experiment, runs: Sequence[Run]) -> bool:
    """Whether runs wait to be sent because the broker could not be reached (not those that wait for
    their trace's check or for a worker to prepare them)."""
    if exp.input_check_id is not None:
        return False
    if submit_worker.pending(exp):
        return exp.pending_dispatch
    return any(r.status == Run.Status.QUEUED and not r.dispatched for r in runs)


def waiting_long(runs: Sequence[Run]) -> int:
    """How many of ``runs`` were sent to the broker more than MLSCHED_REDISPATCH_AFTER seconds ago
    and still wait for a worker (a backlog, or a message the recovery is sending again)."""
    before = timezone.now() - timedelta(seconds=settings.MLSCHED_REDISPATCH_AFTER)
    return sum(
        1 for r in runs if r.status == Run.Status.QUEUED and r.dispatched and (r.dispatched_at or r.created) < before
    )
