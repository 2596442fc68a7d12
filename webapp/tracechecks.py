"""Trace checks on the web side: the Django ``CheckStore`` the task records through, and the
helpers the views and forms use to start a check or read its stored outcome."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError

from webapp import inputchecks
from webapp.models import Dataset, InputText, Run, TraceCheck
from workers import tasks
from workers.checks import CheckInput

logger = logging.getLogger(__name__)

ERROR_CHARS = 4000


class DjangoCheckStore:
    """Every state change is one conditional UPDATE: a redelivered task does not check twice."""

    def claim(self, check_id: int) -> CheckInput | None:
        if not TraceCheck.objects.filter(pk=check_id, status=TraceCheck.Status.QUEUED).update(
            status=TraceCheck.Status.RUNNING, progress=0.0, phase="starting", updated=timezone.now()
        ):
            return None
        check = TraceCheck.objects.select_related("trace", "cluster").get(pk=check_id)
        raw = None
        if check.raw:
            with default_storage.open(check.raw, "rb") as f:
                raw = f.read()
        return CheckInput(
            check.cluster.name,
            check.cluster.text,
            check.trace.name,
            check.trace.text,
            raw=raw,
            raw_name=check.import_options.get("file", check.trace.name),
            import_options={k: v for k, v in check.import_options.items() if k != "file"},
        )

    def imported(self, check_id: int, text: str) -> None:
        check = TraceCheck.objects.get(pk=check_id)
        Dataset.objects.filter(pk=check.trace_id).update(input=InputText.intern(text), size=len(text.encode("utf-8")))
        if check.raw and default_storage.exists(check.raw):
            default_storage.delete(check.raw)
        TraceCheck.objects.filter(pk=check_id).update(raw="")

    def beat(self, check_id: int) -> bool:
        """``updated`` is the check's heartbeat while it runs (``recover_checks``)."""
        return bool(
            TraceCheck.objects.filter(pk=check_id, status=TraceCheck.Status.RUNNING).update(updated=timezone.now())
        )

    def release(self) -> None:
        connection.close()

    def progress(self, check_id: int, progress: float, phase: str) -> None:
        TraceCheck.objects.filter(pk=check_id, status=TraceCheck.Status.RUNNING).update(
            progress=progress, phase=phase[:100], updated=timezone.now()
        )

    def finish(self, check_id: int, summary: dict[str, Any]) -> None:
        TraceCheck.objects.filter(pk=check_id, status=TraceCheck.Status.RUNNING).update(
            status=TraceCheck.Status.DONE, progress=1.0, phase="", summary=summary, error="", updated=timezone.now()
        )
        inputchecks.release(check_id)  # runs of experiments waiting on this check are sent

    def fail(self, check_id: int, error: str, line: int | None) -> None:
        """Record the error; a check that imports a raw upload (``import_options["file"]``) keeps none
        of it: the dataset is emptied (if the import itself succeeded), a failed record that no
        experiment form offers (``webapp.datasets.usable``), and the raw file is deleted."""
        running = TraceCheck.objects.filter(pk=check_id, status=TraceCheck.Status.RUNNING)
        if _failed(running, error, line):
            _discard_import(check_id)
        inputchecks.release(check_id)  # runs of experiments waiting on this check fail with its error


def _failed(checks: QuerySet[TraceCheck], error: str, line: int | None) -> int:
    return checks.update(
        status=TraceCheck.Status.FAILED, phase="", error=error[:ERROR_CHARS], error_line=line, updated=timezone.now()
    )


def _discard_import(check_id: int) -> None:
    """A failed check that imports a raw upload keeps none of it (``DjangoCheckStore.fail``)."""
    check = TraceCheck.objects.filter(pk=check_id).first()
    if check is None or "file" not in check.import_options:
        return
    imported = list(Dataset.objects.filter(pk=check.trace_id).values_list("input", flat=True))
    Dataset.objects.filter(pk=check.trace_id).update(input=InputText.intern(""), size=0)
    InputText.delete_unused(imported)
    if check.raw:
        default_storage.delete(check.raw)
        TraceCheck.objects.filter(pk=check_id).update(raw="")


def send(check_id: int) -> None:
    """Send the check's task after the current transaction commits; a broker that cannot be
    reached leaves it queued (the dataset page sends it again)."""

    def later() -> None:
        try:
            tasks.send_check(check_id)
        except OperationalError as exc:
            logger.warning("broker unreachable, trace check %s waits: %s", check_id, exc)

    transaction.on_commit(later)


def start(trace: Dataset, cluster: Dataset) -> TraceCheck:
    """The check of ``trace`` against ``cluster``: the stored one, or a new one sent to the workers
    (a queued one is sent again: the task skips a check that is no longer queued)."""
    check, _ = TraceCheck.objects.get_or_create(trace=trace, cluster=cluster)
    if check.status == TraceCheck.Status.QUEUED:
        send(check.pk)
    return check


def start_import(trace: Dataset, cluster: Dataset, raw: bytes, raw_name: str, options: dict[str, Any]) -> TraceCheck:
    """A check that first imports ``raw`` into ``trace`` (created with an empty text), then validates it."""
    path = default_storage.save(f"dataset-imports/{trace.pk}.raw", ContentFile(raw))
    check = TraceCheck.objects.create(
        trace=trace, cluster=cluster, raw=path, import_options={**options, "file": raw_name}
    )
    send(check.pk)
    return check


def stored(trace: Dataset, cluster: Dataset) -> TraceCheck | None:
    """The finished (done or failed) check of the pair, or None."""
    return (
        TraceCheck.objects.filter(trace=trace, cluster=cluster)
        .filter(status__in=(TraceCheck.Status.DONE, TraceCheck.Status.FAILED))
        .first()
    )


def record(trace: Dataset, cluster: Dataset, summary: dict[str, Any]) -> TraceCheck:
    """Store the outcome of a check done in the request itself (a small trace, already loaded)."""
    check, _ = TraceCheck.objects.update_or_create(
        trace=trace,
        cluster=cluster,
        defaults={"status": TraceCheck.Status.DONE, "progress": 1.0, "phase": "", "summary": summary, "error": ""},
    )
    return check


def status(check: TraceCheck) -> dict[str, Any]:
    """The JSON the dataset page polls."""
    return {
        "status": check.status,
        "progress": round(check.progress, 3),
        "phase": check.phase,
        "error": check.error,
    }


LOST_NOTE = "its worker was lost"  # the start of the note of a check re-queued by recover_checks


def recover_checks() -> dict[str, int]:
    """What ``recover_runs`` does for runs, for trace checks and the raw imports they do:

    * a running check whose heartbeat (``updated``) is older than MLSCHED_HEARTBEAT_TIMEOUT lost its
      worker: it is queued and sent again once (a note says so), and failed with the reason if it
      is lost a second time (a trace that kills every worker that checks it must not go round for
      ever);
    * a queued check that waited MLSCHED_REDISPATCH_AFTER seconds since it was queued or last sent,
      while the queue holds fewer messages than queued runs and checks (the broker was down, or
      lost its message), is sent again, oldest first, as many as messages are missing; a duplicate
      is harmless (the claim skips a check that is no longer queued).

    Each change is one conditional UPDATE on the state read, so two recoveries act once."""
    now = timezone.now()
    counts = {"checks_requeued": 0, "checks_failed": 0, "checks_sent": 0}
    stale = now - timedelta(seconds=settings.MLSCHED_HEARTBEAT_TIMEOUT)
    silence = f"no heartbeat for {settings.MLSCHED_HEARTBEAT_TIMEOUT:g} s"
    for check in TraceCheck.objects.filter(status=TraceCheck.Status.RUNNING, updated__lt=stale):
        same = TraceCheck.objects.filter(pk=check.pk, status=TraceCheck.Status.RUNNING, updated=check.updated)
        if check.error.startswith(LOST_NOTE):
            reason = f"lost: the worker stopped or was killed while checking, twice ({silence})"
            if _failed(same, reason, None):
                _discard_import(check.pk)
                inputchecks.release(check.pk)  # runs waiting on it fail with the reason
                counts["checks_failed"] += 1
                logger.warning("trace check %s: %s", check.pk, reason)
        elif same.update(status=TraceCheck.Status.QUEUED, error=f"{LOST_NOTE} ({silence}); checked again", updated=now):
            counts["checks_requeued"] += 1
            logger.warning("trace check %s lost its worker (%s): queued again", check.pk, silence)
    due = now - timedelta(seconds=settings.MLSCHED_REDISPATCH_AFTER)
    queued = TraceCheck.objects.filter(status=TraceCheck.Status.QUEUED)
    overdue = list(queued.filter(Q(updated__lt=due) | Q(updated=now)).order_by("updated", "pk"))
    if overdue:
        for check in overdue[: _missing_messages(queued.count())]:
            if not TraceCheck.objects.filter(
                pk=check.pk, status=TraceCheck.Status.QUEUED, updated=check.updated
            ).update(updated=timezone.now()):
                continue  # taken meanwhile
            try:
                tasks.send_check(check.pk)
            except OperationalError as exc:
                logger.warning("broker unreachable, trace checks wait: %s", exc)
                break
            counts["checks_sent"] += 1
    return counts


def _missing_messages(queued_checks: int) -> int:
    """How many messages the queue lacks for the queued checks, runs and checks sharing one queue:
    every queued run marked sent and every queued check should have one (0 when the broker cannot
    tell). A backlog alone sends nothing again."""
    try:
        messages = tasks.queued_messages()
    except OperationalError as exc:
        logger.warning("broker unreachable, lost trace check messages not checked: %s", exc)
        return 0
    runs = Run.objects.filter(status=Run.Status.QUEUED, dispatched=True).count()
    return max(0, min(queued_checks, runs + queued_checks - messages))
