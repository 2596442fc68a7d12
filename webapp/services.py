"""What the views do: create experiments, queue and recover their runs, report status, assemble pages.

Access: every object is fetched through a helper that takes the user (or a share token), so that
another user's experiment, run or dataset is a 404 like a missing one.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import logging
import math
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import Http404
from django.http.request import split_domain_port
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone
from kombu.exceptions import OperationalError

from scheduling import prices as price_schema
from scheduling import registry
from scheduling.errors import InputError
from webapp import (
    adapted,
    charts,
    figurecache,
    inputchecks,
    quotas,
    repetition_stats,
    repetitions,
    submit_worker,
    tracechecks,
)
from webapp.chartindex import chart_doc, chart_index, chart_index_name
from webapp.charts.safe import escape_figure
from webapp.charts.sweeps import unchanged as sweep_unchanged
from webapp.labels import run_badges, run_labels
from webapp.models import ApiToken, Dataset, Experiment, Run, ShareLink, TraceCheck, key_digest
from webapp.rigid import all_rigid, shown_params
from webapp.runstore import decode_result
from webapp.security import fit
from webapp.timeleft import left_text, seconds_left
from webapp.versions import version_note
from workers import tasks

NAME_LENGTH = Experiment._meta.get_field("name").max_length or 200

logger = logging.getLogger(__name__)

User = AbstractBaseUser | AnonymousUser


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
    history_name: str = ""  # a separate trace of past jobs (Experiment.history_text); "": none
    history_text: str = ""


@dataclass(frozen=True)
class Submission:
    name: str
    inputs: Inputs
    runs: Sequence[tuple[str, Mapping[str, Any]]]  # (algorithm, parsed parameters), in order
    seed: int
    kind: str = Experiment.Kind.COMPARISON
    sweep: Mapping[str, Any] = field(default_factory=dict)  # {"param", "values"} of a sweep
    repetition: Mapping[str, Any] = field(default_factory=dict)  # Experiment.repetition (repetitions.py)
    # The trace was too large to check in the request (webapp/inputchecks.py): a worker checks it
    # before the runs are sent; ``library`` names the datasets (trace, cluster) it came from, None
    # for uploaded files (then added to the owner's datasets for the check).
    check_first: bool = False
    library: tuple[int, int] | None = None


# ---------------------------------------------------------------------------------------------
# Access helpers: the one way views fetch objects.


def visible_experiments(user: Any) -> QuerySet[Experiment]:
    """The user's experiments and the shared examples (no owner)."""
    return Experiment.objects.filter(Q(owner=user.pk) | Q(owner__isnull=True))


def get_experiment(pk: int, user: Any, *, write: bool = False) -> Experiment:
    """The experiment with its runs; 404 unless the user may see it (``write``: may change it,
    i.e. owns it, or is staff for the examples). Lost-run recovery never runs on a request: a hung
    broker would hold every page (``manage.py recover_runs --every N`` runs it)."""
    qs = visible_experiments(user).prefetch_related("runs")
    exp: Experiment = get_object_or_404(qs, pk=pk)
    if write and exp.owner_id != user.pk and not (exp.owner_id is None and user.is_staff):
        raise Http404("read-only experiment")
    return exp


class ShareUnavailable(Exception):
    """A share link that does not open: unknown (404), or revoked or expired (410). Rendered as a
    page that says which, in every mode (``webapp.middleware.ShareErrors``)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def live_share_links(exp: Experiment) -> Any:
    """The experiment's share links that still open: not revoked, not expired."""
    return exp.share_links.filter(revoked__isnull=True).filter(Q(expires__isnull=True) | Q(expires__gt=timezone.now()))


def get_shared(token: str) -> tuple[Experiment, ShareLink]:
    """The experiment behind a live share link; ShareUnavailable for an unknown, revoked or expired one."""
    link = ShareLink.objects.filter(token=token).first()
    if link is None:
        raise ShareUnavailable(404, "unknown")
    if link.revoked is not None:
        raise ShareUnavailable(410, "revoked")
    if link.expires is not None and link.expires <= timezone.now():
        raise ShareUnavailable(410, "expired")
    exp = Experiment.objects.prefetch_related("runs").get(pk=link.experiment_id)
    return exp, link


def get_run(exp: Experiment, pk: int, *, done: bool = False) -> Run:
    """A run of ``exp`` (``done``: only a finished, successful one); 404 otherwise."""
    filters: dict[str, Any] = {"pk": pk, "experiment": exp}
    if done:
        filters["status"] = Run.Status.DONE
    run: Run = get_object_or_404(Run, **filters)
    return run


def get_dataset(pk: int, user: Any) -> Dataset:
    ds: Dataset = get_object_or_404(Dataset, pk=pk, owner=user.pk)
    return ds


# The frozen input files of an experiment: megabytes for a production trace. Listing pages (the
# experiment list, GET /api/experiments) never load them.
INPUT_TEXTS = ("cluster_text", "trace_text", "history_text")


def list_experiments(user: Any) -> list[Experiment]:
    """The experiments ``user`` sees (their input texts not loaded), each with ``run_badges``
    (``labels.run_badges``)."""
    experiments = list(visible_experiments(user).defer(*INPUT_TEXTS).prefetch_related("runs"))
    for exp in experiments:
        exp.run_badges = run_badges(exp, list(exp.runs.all()))  # type: ignore[attr-defined]
    return experiments


def user_for_token(header: str) -> Any | None:
    """The user of an ``Authorization: Token <key>`` header, or None."""
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "token" or not key.strip():
        return None
    digest = key_digest(key.strip())
    token = ApiToken.objects.select_related("user").filter(key=digest, user__is_active=True).first()
    if token is None:
        return None
    ApiToken.objects.filter(pk=token.pk).update(last_used=timezone.now())
    return token.user


# ---------------------------------------------------------------------------------------------
# Creating, dispatching, cancelling


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
            cluster_text=inputs.cluster_text,
            trace_name=inputs.trace_name,
            trace_text=inputs.trace_text,
            history_name=inputs.history_name,
            history_text=inputs.history_text,
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
    return inputchecks.upload_check(owner, (i.cluster_name, i.cluster_text), (i.trace_name, i.trace_text))


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


def stored_name(run: Run) -> str:
    """The storage name of a run's result file; ValueError for a run that has none (not done)."""
    if not run.result.name:
        raise ValueError(f"run {run.pk} has no stored result")
    return run.result.name


def delete_experiment(exp: Experiment) -> None:
    """Cancel what still runs, delete the rows and the stored result files (and Gantt indexes)."""
    from django.core.files.storage import default_storage

    from webapp.runstore import index_name

    cancel(exp)
    names = [r.result.name for r in exp.runs.all() if r.result.name]
    figurecache.forget(exp.pk)
    exp.delete()
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


SHARE_EXPIRY_DAYS = (1, 7, 30)  # the choices offered besides "never"


def share(exp: Experiment, days: int | None = None) -> ShareLink:
    """A new share link, expiring after ``days`` (None: never)."""
    expires = timezone.now() + timedelta(days=days) if days else None
    link: ShareLink = ShareLink.objects.create(experiment=exp, expires=expires)
    return link


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def share_url(request: Any, token: str) -> str:
    """The full URL of a share link: under ``MLSCHED_PUBLIC_URL`` when set (a proxy's public
    URL); else on the host this request came to (a teammate reaches the same name), unless that is
    127.0.0.1/localhost, which only this machine reaches: then under ``MLSCHED_NETWORK_URL`` (this
    machine's address when served on the network) when set."""
    path = reverse("shared", args=[token])
    base = settings.MLSCHED_PUBLIC_URL
    if not base and settings.MLSCHED_NETWORK_URL:
        host, _ = split_domain_port(request.get_host())
        if host in LOOPBACK_HOSTS:
            base = settings.MLSCHED_NETWORK_URL
    return base.rstrip("/") + path if base else str(request.build_absolute_uri(path))


def revoke(exp: Experiment, token_pk: int) -> None:
    ShareLink.objects.filter(pk=token_pk, experiment=exp, revoked__isnull=True).update(revoked=timezone.now())


def load_result(run: Run) -> dict[str, Any]:
    with run.result.open("rb") as f:
        return decode_result(f.read())


def load_chart_doc(run: Run) -> dict[str, Any]:
    """What the JCT and utilisation tabs draw (webapp/chartindex.py), from the index written beside
    the result; for runs that finished before indexes existed it is built once and stored."""
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    from webapp.runstore import encode_result

    name = chart_index_name(stored_name(run))
    if default_storage.exists(name):
        with default_storage.open(name, "rb") as f:
            return chart_doc(decode_result(f.read()))
    index = chart_index(load_result(run))
    default_storage.save(name, ContentFile(encode_result(index)))
    return chart_doc(index)


def load_gantt_index(run: Run) -> dict[str, Any]:
    """The compact Gantt index written beside the result; built from the result document for runs
    that finished before indexes existed."""
    from django.core.files.storage import default_storage

    from webapp.runstore import gantt_index, index_name

    name = index_name(stored_name(run))
    if default_storage.exists(name):
        with default_storage.open(name, "rb") as f:
            return decode_result(f.read())
    return gantt_index(load_result(run))


def result_bytes(run: Run) -> bytes:
    with run.result.open("rb") as f:
        return gzip.decompress(f.read())


RESULT_CHUNK = 1 << 20  # bytes of the decompressed document per piece sent


def result_chunks(run: Run) -> Iterator[bytes]:
    """The run's result document, decompressed a piece at a time as it is read from the storage: a
    large result is sent without being held whole (DESIGN section 8)."""
    assert run.result.name, "a done run has a stored result"
    stored = run.result.storage.open(run.result.name, "rb")
    with stored, gzip.GzipFile(fileobj=stored) as document:
        while piece := document.read(RESULT_CHUNK):
            yield piece


# ---------------------------------------------------------------------------------------------
# Status and pages


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
        "waiting_for_broker": _waiting_for_broker(exp, runs),
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


TABS = (
    ("summary", "Summary"),
    ("jct", "JCT"),
    ("gantt", "Gantt"),
    ("time", "Utilisation"),
    ("prices", "Prices"),
    ("inputs", "Inputs"),
)


def _window(t0: str | None, t1: str | None) -> tuple[tuple[float | None, float | None], str]:
    """The Gantt tab's time window [t0, t1) from the query (blank: open), or the whole time and a
    message naming what is wrong with it (each bad bound)."""
    bounds: list[float | None] = []
    problems = []
    for name, raw in (("From slot", t0), ("to", t1)):
        value = None
        if raw:
            try:
                value = float(raw)
            except ValueError:
                problems.append(f"{name} {raw!r} is not a number")
            else:
                if not math.isfinite(value) or value < 0:
                    problems.append(f"{name} {raw} is not a slot (a number >= 0)")
                    value = None
        bounds.append(value)
    lo, hi = bounds
    if not problems and lo is not None and hi is not None and hi <= lo:
        problems.append(f"The window ends (slot {hi:g}) before it starts (slot {lo:g})")
    if problems:
        return (None, None), "; ".join(problems) + ": showing the whole time."
    return (lo, hi), ""


def _writes_prices(algorithm: str) -> bool:
    """Whether runs of ``algorithm`` carry a price log (False for a name no longer registered)."""
    try:
        return registry.get(algorithm).prices
    except InputError:
        return False


def _figures(prefix: str, figures: Sequence[dict[str, Any] | None]) -> list[dict[str, Any]]:
    return [
        {"dom_id": f"{prefix}-{i}", "script_id": f"{prefix}-figure-{i}", "figure": escape_figure(f)}
        for i, f in enumerate(x for x in figures if x is not None)
    ]


def _waiting_for_broker(exp: Experiment, runs: Sequence[Run]) -> bool:
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


def experiment_page(exp: Experiment, query: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Context of the experiment page; ``query`` is the view state from the URL (tab, run, filters)."""
    q = dict(query or {})
    tabs = (TABS[0], ("repetitions", "Repetitions"), *TABS[1:]) if exp.repetition else TABS
    tab = q.get("tab") if q.get("tab") in dict(tabs) else ("repetitions" if exp.repetition else "summary")
    runs = list(exp.runs.all())
    done = [r for r in runs if r.status == Run.Status.DONE]
    labels = run_labels(exp, runs)
    places = queue_positions(runs)
    now = timezone.now()
    for r in runs:
        r.queue_position = places.get(r.pk)  # type: ignore[attr-defined]
        running = r.status == Run.Status.RUNNING
        r.time_left = left_text(seconds_left(r.progress, r.started, now)) if running else ""  # type: ignore[attr-defined]
    rigid = all_rigid(exp.trace_name, exp.trace_text)
    ctx: dict[str, Any] = {
        "experiment": exp,
        "runs": runs,
        "run_rows": [(r, labels[r.pk], shown_params(r.params, rigid)[0]) for r in runs],
        "hidden_params": sorted({k for r in runs for k in shown_params(r.params, rigid)[1]}),
        "labels": labels,
        "finished": all(r.is_finished for r in runs),
        "waiting_for_broker": _waiting_for_broker(exp, runs),
        "input_check": inputchecks.state(exp),
        "waiting_long": waiting_long(runs),
        "redispatch_after": f"{settings.MLSCHED_REDISPATCH_AFTER:g}",
        "tab": tab,
        "tabs": tabs,
        "query": q,
        "metric_columns": charts.METRIC_COLUMNS,
        "done_runs": [(r.pk, labels[r.pk]) for r in done],
        "version_note": version_note(done),
        "history_notes": history_notes(exp, runs),
        "adaptation": adapted.page(exp),
        "figures": [],
    }
    ctx["metric_rows"] = charts.summary_table([(r.pk, labels[r.pk], r.params, r.metrics or {}) for r in done])
    if tab == "summary":
        if exp.kind == Experiment.Kind.SWEEP and exp.sweep.get("param") and not exp.repetition:  # else: its tab
            param = exp.sweep["param"]
            series = run_labels(exp, done, series=True)
            points = [(series[r.pk], r.params.get(param), r.metrics or {}) for r in done if param in r.params]
            ctx["figures"] = _figures("sweep", charts.sweep_charts(param, points))
            ctx["sweep_notes"] = sweep_unchanged(param, points)
        else:
            ctx["sweep_notes"] = same_variants([(r.algorithm, labels[r.pk], r.metrics or {}) for r in done])
    elif tab == "repetitions":
        ctx.update(repetition_stats.page(exp, runs, q))
        ctx["figures"] = _figures("rep", ctx.pop("rep_figures", []))
    elif tab in figurecache.TABS and done:
        # Finished runs' results never change: the tab's figures are cached (webapp/figurecache.py).
        key = figurecache.key(exp.pk, tab, q, done)
        ctx.update(figurecache.cached(key, lambda: _result_tab(exp, tab, q, done, labels), exp.pk))
    elif tab == "prices":
        # The runs of algorithms that write a price log (registry `prices`); only the chosen run's
        # result is opened (a result of 1,000 OASiS jobs is 8 MB of JSON, one of Philly's 82,247
        # jobs takes 0.5 s to decompress and parse).
        priced = [r for r in done if _writes_prices(r.algorithm)]
        ctx["priced_runs"] = [(r.pk, labels[r.pk]) for r in priced]
        if priced:
            chosen = next((r for r in priced if str(r.pk) == q.get("run")), priced[0])
            ctx["run"] = chosen.pk
            p = load_result(chosen).get("prices")
            if isinstance(p, Mapping) and p.get("schema") in price_schema.SCHEMAS:
                ctx["prices"] = p
                ctx["figures"] = _figures("prices", charts.price_lines(p))
    elif tab == "inputs":
        ctx["cluster_preview"] = preview(exp.cluster_text)
        ctx["trace_preview"] = preview(exp.trace_text)
        if exp.history_text:
            ctx["history_preview"] = preview(exp.history_text)
    return ctx


def _result_tab(
    exp: Experiment, tab: str, q: Mapping[str, str], done: Sequence[Run], labels: Mapping[int, str]
) -> dict[str, Any]:
    """What the JCT, Gantt and Utilisation tabs add to the page's context: their figures, and the
    runs and window they show."""
    ctx: dict[str, Any] = {}
    if tab == "jct":
        docs = [(labels[r.pk], load_chart_doc(r)) for r in done]
        by_id = {r.pk: d for r, d in zip(done, docs, strict=True)}
        a = _pick(q.get("a"), done, 0)
        b = _pick(q.get("b"), done, 1 if len(done) > 1 else 0)
        ctx.update(a=a.pk, b=b.pk)
        ctx["figures"] = _figures(
            "jct",
            [
                *charts.metric_bars(docs),
                charts.jct_cdf(docs),
                charts.jct_box(docs),
                charts.jct_scatter(by_id[a.pk], by_id[b.pk]),
                charts.timeliness(docs),
            ],
        )
    elif tab == "gantt":
        run = _pick(q.get("run"), done, 0)
        index = load_gantt_index(run)
        (t0, t1), ctx["window_error"] = _window(q.get("t0"), q.get("t1"))
        job, server = q.get("job", ""), q.get("server", "")
        figure = charts.gantt_from_index(index, labels[run.pk], job=job, server=server, t0=t0, t1=t1)
        ctx.update(run=run.pk, servers=index["servers"])
        ctx["figures"] = _figures("gantt", [figure])
    elif tab == "time" and exp.repetition:
        ctx["figures"] = _figures("time", repetition_bands(exp, done))
    elif tab == "time":
        docs = [(labels[r.pk], load_chart_doc(r)) for r in done]
        ctx["figures"] = _figures("time", [*charts.utilization(docs), *charts.events_over_time(docs)])
    return ctx


def repetition_bands(exp: Experiment, done: Sequence[Run]) -> list[dict[str, Any]]:
    """The Utilisation tab of a repeated experiment: a colour per variant, its repetitions as a band."""
    from webapp.charts.bands import events_bands, utilization_bands

    variants = run_labels(exp, done, repetition=False)
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in done:
        groups.setdefault(variants[r.pk], []).append(load_chart_doc(r))
    pairs = list(groups.items())
    slot_seconds = next((d.get("slot_seconds") for _, docs in pairs for d in docs if d.get("slot_seconds")), None)
    return [*utilization_bands(pairs, slot_seconds), *events_bands(pairs, slot_seconds)]


def history_notes(exp: Experiment, runs: Sequence[Run]) -> list[str]:
    """Notes for runs whose fitted predictor had no history to learn from: an uploaded or library
    trace given without a history (a preset experiment gives its own; a model's history fraction
    one from the trace). asrpt refuses to run so (its run fails with the reason, unless
    no_history=zero); its baselines predict 0 iterations for every job (docs/algorithms-asrpt.md),
    which the page says rather than leave a comparison to look like a result of the algorithms."""
    has_fraction = (adapted.describe(exp)["history_fraction"] or 0) > 0
    if exp.history_text or exp.source == Experiment.Source.PRESET or has_fraction:
        return []
    from scheduling.algorithms.asrpt.predictors import FITTED

    alone = [
        name
        for name in dict.fromkeys(r.algorithm for r in runs)
        if registry.learns_from_history(name)
        and any(r.params.get("predictor") in FITTED for r in runs if r.algorithm == name)
    ]
    if not alone:
        return []
    refused = [  # asrpt's default no_history=refuse (scheduling/algorithms/asrpt/spec.py without_history)
        name
        for name in alone
        if name == "asrpt"
        and all(r.params.get("no_history", "refuse") == "refuse" for r in runs if r.algorithm == name)
    ]
    zero = [name for name in alone if name not in refused]
    remedy = (
        "Create the experiment again with a history file (past jobs of the same cluster), or run it as a "
        "model with a history fraction (the leading part of the trace), to compare them as the paper does."
    )
    notes = []
    if refused:
        notes.append(
            "asrpt: no history of past jobs was given with the trace, so asrpt refused to run (its fitted "
            f"predictor has nothing to learn from; no_history=zero predicts 0 iterations instead). {remedy}"
        )
    if zero:
        notes.append(
            f"{', '.join(zero)}: no history of past jobs was given with the trace, so the fitted predictor "
            f"predicted 0 iterations for every job and predicted work told no two jobs apart. {remedy}"
        )
    return notes


def same_variants(runs: Sequence[tuple[str, str, Mapping[str, Any]]]) -> list[str]:
    """Notes for runs of one algorithm with other parameters ("Also run" variants) that gave exactly
    the same metrics: the parameters changed no schedule there. ``runs``: (algorithm, label, metrics)."""
    notes = []
    for algorithm in dict.fromkeys(a for a, _, _ in runs):
        mine = [(label, m) for a, label, m in runs if a == algorithm]
        groups: dict[str, list[str]] = {}
        for label, m in mine:
            groups.setdefault(json.dumps(m, sort_keys=True), []).append(label)
        for same in groups.values():
            if len(same) > 1:
                notes.append(f"{', '.join(same)} gave the same metrics: their parameters changed no schedule here.")
    return notes


def _pick(value: str | None, runs: Sequence[Run], default: int) -> Run:
    return next((r for r in runs if str(r.pk) == value), runs[default])


def preview(text: str, lines: int = 25, chars: int = 5000) -> str:
    """The head of an input file for display."""
    head = "\n".join(text[:chars].splitlines()[:lines])
    return head if len(head) >= len(text.rstrip()) else head + "\n…"


# ---------------------------------------------------------------------------------------------
# Exports

JOB_COLUMNS = ("job_id", "arrival", "admitted", "start", "completion", "jct", "weight", "utility",
               "work_required", "work_done", "preemptions")  # fmt: skip
PLACEMENT_COLUMNS = ("job_id", "server", "role", "type", "count", "start", "end", "demand")


def _csv_cell(value: Any) -> Any:
    """A CSV cell; text starting with a formula character is prefixed with ' (spreadsheet injection)."""
    if isinstance(value, Mapping):
        value = json.dumps(value, separators=(",", ":"), sort_keys=True)
    if value is None:
        return ""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def jobs_csv(doc: Mapping[str, Any]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(JOB_COLUMNS)
    for j in doc["jobs"]:
        jct = j["completion"] - j["arrival"] if j["completion"] is not None else None
        w.writerow([_csv_cell(jct if c == "jct" else j.get(c)) for c in JOB_COLUMNS])
    return out.getvalue()


def placements_csv(doc: Mapping[str, Any]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(PLACEMENT_COLUMNS)
    for p in doc["placements"]:
        w.writerow([_csv_cell(p.get(c)) for c in PLACEMENT_COLUMNS])
    return out.getvalue()


RAW_INPUTS_NOTE = """These are the input files exactly as they were uploaded (or generated), so that the
experiment can be run again with the command line (python -m scheduling simulate ...).

The history of past jobs given with the trace, if any, is here too; a preset experiment with
algorithms that learn from past jobs (A-SRPT and its baselines) has the preset's own history
(history.csv or .json: the same preset from another seed). Either is given to those algorithms
as simulate --history gives it.

They are NOT escaped for spreadsheets: a cell beginning with =, +, -, @ may run as a formula if
you open a CSV here in Excel or LibreOffice. Import it as text instead. The CSV files under runs/
are written by the app and are escaped (such cells start with a ').
"""


def experiment_zip(exp: Experiment) -> bytes:
    """Inputs (raw, as uploaded: kept apart in inputs/raw/ with a note), the frozen experiment
    description, and per done run its result and CSVs (escaped against formula injection)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("inputs/raw/README.txt", RAW_INPUTS_NOTE)
        z.writestr(f"inputs/raw/{_safe(exp.cluster_name)}", exp.cluster_text)
        z.writestr(f"inputs/raw/{_safe(exp.trace_name)}", exp.trace_text)
        if exp.history_text or any(registry.learns_from_history(r.algorithm) for r in exp.runs.all()):
            try:
                history = repetitions.history_of(exp)
            except InputError:  # a preset this version no longer builds with these options: no history file
                history = None
            if history is not None:
                z.writestr(f"inputs/raw/{_safe(history[0])}", history[1])
        z.writestr("experiment.json", json.dumps(describe(exp), indent=2))
        for name, record in adapted.export(exp):  # the assumptions of the adapted instances
            z.writestr(name, json.dumps(record, indent=2))
        if exp.repetition:
            z.writestr("repetitions.csv", repetition_stats.per_seed_csv(exp, list(exp.runs.all())))
        for r in exp.runs.all():
            if r.status != Run.Status.DONE:
                continue
            doc = load_result(r)
            base = f"runs/{r.pk}-{_safe(r.algorithm)}"
            z.writestr(f"{base}/result.json", json.dumps(doc, separators=(",", ":")))
            z.writestr(f"{base}/jobs.csv", jobs_csv(doc))
            z.writestr(f"{base}/placements.csv", placements_csv(doc))
    return buf.getvalue()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:100] or "file"


def describe(exp: Experiment) -> dict[str, Any]:
    """The experiment as the API and the zip export show it."""
    return {
        "id": exp.pk,
        "name": exp.name,
        "kind": exp.kind,
        "sweep": exp.sweep or None,
        "repetition": exp.repetition or None,
        "created": exp.created.isoformat(),
        "source": exp.source,
        "preset": exp.preset or None,
        "preset_options": exp.preset_options or None,
        "cluster_name": exp.cluster_name,
        "trace_name": exp.trace_name,
        "history_name": exp.history_name or None,
        **adapted.describe(exp),
        "seed": exp.seed,
        **{k: v for k, v in status(exp).items() if k not in ("experiment", "name", "kind")},
    }
