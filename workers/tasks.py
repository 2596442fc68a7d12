"""The simulation task: claim a run, simulate it, record the outcome; and how runs are sent.

A claimed run always leaves "running": known failures (bad input, an instance the algorithm does
not support, an invalid schedule, the time limit) are recorded with their message; a cancellation
is recorded as such; anything else is recorded as an internal error and re-raised so that Celery
logs it with its traceback. A worker whose storage refuses the result gives the run back to the
queue instead (``_cannot_store``).

From the claim until the outcome is recorded (loading, simulating and storing the result, which
takes minutes for a big run), a heartbeat thread writes its progress every ``MLSCHED_HEARTBEAT`` seconds
(the throttle: the engine may decide thousands of times a second) and reads back whether the user
asked to cancel. The algorithm is wrapped so that its next decision after such a request raises
``RunStopped`` (cooperative cancellation: the engine itself knows nothing of it).
"""

from __future__ import annotations

import errno
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from celery import group
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_ready
from django.conf import settings
from django.utils.module_loading import import_string
from kombu import Connection
from kombu.exceptions import OperationalError

from scheduling import collector, registry, results
from scheduling.engine import Algorithm, Decision, View, simulate
from scheduling.errors import InputError, ScheduleError, UnsupportedInstance
from scheduling.model import Instance
from scheduling.progress import Tracked
from scheduling.validator import validate
from workers import checks
from workers.celery import app
from workers.runs import RunInput, RunStore, TransientStoreError, load_instance

logger = logging.getLogger(__name__)

T = TypeVar("T")


# Errors of a storage that refuses to write (full, read-only, not permitted, failing): not the run's
# fault, so the run goes to another worker (``_cannot_store``) instead of failing.
CANNOT_STORE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO})


def run_store() -> RunStore:
    store: RunStore = import_string(settings.MLSCHED_RUN_STORE)()
    return store


class RunStopped(Exception):
    """Raised inside the simulation when the run must stop: ``reason`` is "cancel" or "gone"."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Control:
    """Shared between the simulating thread and the heartbeat thread."""

    def __init__(self) -> None:
        self.progress = 0.0
        self.stop = threading.Event()
        self.reason: str | None = None

    def check(self) -> None:
        """Raise RunStopped if the run was cancelled or taken away meanwhile."""
        if self.stop.is_set():
            raise RunStopped(self.reason or "cancel")


class Watched(Tracked):
    """An algorithm wrapper: records progress (scheduling.progress, as the CLI's bar shows it) and
    stops when asked to."""

    def __init__(self, inner: Algorithm, instance: Instance, control: Control) -> None:
        super().__init__(inner, instance, self._record)
        self.control = control

    def _record(self, fraction: float) -> None:
        self.control.progress = fraction

    def decide(self, view: View) -> Decision:
        self.control.check()
        return super().decide(view)


class Heartbeat(threading.Thread):
    """Calls ``beat`` every ``interval`` seconds until ``done`` is set: for a run through the load,
    the simulation and the storing of the result; for a trace check through its import and check.

    ``beat`` returns None to go on, "cancel" or "gone". A "cancel" verdict stops the simulation
    (``control.stop``) and the thread goes on beating (a result already being stored is kept; the
    task records the cancellation otherwise); "gone" ends the beats (the work is no longer this
    worker's). ``release`` frees the thread's database connection at the end."""

    def __init__(
        self, name: str, beat: Callable[[], str | None], release: Callable[[], None], control: Control, interval: float
    ) -> None:
        super().__init__(name=f"heartbeat-{name}", daemon=True)
        self.label, self.beat, self.release, self.control, self.interval = name, beat, release, control, interval
        self.done = threading.Event()

    def stop(self) -> None:
        """End the beats and wait for the thread (its connection released)."""
        self.done.set()
        self.join(timeout=10)

    def run(self) -> None:
        try:
            while not self.done.wait(self.interval):
                try:
                    verdict = self.beat()
                except TransientStoreError:
                    logger.warning("%s: heartbeat not recorded (store unreachable)", self.label)
                    continue
                if verdict:
                    self.control.reason = self.control.reason or verdict
                    self.control.stop.set()
                    if verdict == "gone":
                        return
        finally:
            self.release()


def simulate_run_input(
    instance: Instance, algorithm: str, params: Mapping[str, Any], seed: int, control: Control
) -> dict[str, Any]:
    """``scheduling.api.run`` with the algorithm wrapped in ``Watched``."""
    spec = registry.get(algorithm)
    parsed = spec.parse_params(params or {})
    algo = Watched(spec.build(instance, parsed, seed), instance, control)
    outcome = simulate(instance, algo)
    doc = results.build(instance, outcome, algorithm, parsed, seed)
    problems = validate(instance, doc)
    if problems:
        raise ScheduleError(f"{algorithm} produced an invalid schedule: " + "; ".join(problems[:5]))
    return doc


def _retrying(write: Callable[[], T], patience: float | None = None) -> T:
    """``write()``, tried again on TransientStoreError (the database restarting, a dropped
    connection) with a doubling pause (``MLSCHED_STORE_BACKOFF`` s, at most 30 s), for up to
    ``patience`` seconds (default ``MLSCHED_STORE_PATIENCE``), then the error is raised."""
    patience = settings.MLSCHED_STORE_PATIENCE if patience is None else patience
    deadline = time.monotonic() + patience
    pause = settings.MLSCHED_STORE_BACKOFF
    while True:
        try:
            return write()
        except TransientStoreError:
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, 30.0)


@app.task(
    name="workers.simulate_run",
    bind=True,
    ignore_result=True,  # the outcome is recorded in the run store
    max_retries=5,
)
def simulate_run(self: Any, run_id: int) -> str:
    store = run_store()
    try:
        job = store.claim(run_id)
    except TransientStoreError as exc:  # only the claim is retried as a new message: nothing is done yet
        raise self.retry(exc=exc, countdown=min(2 ** (self.request.retries + 1), 60)) from exc
    if job is None:
        logger.warning("run %s is not queued (already taken, finished or deleted): skipped", run_id)
        return "skipped"
    control = Control()
    beat = Heartbeat(
        f"run {run_id}",
        lambda: store.beat(run_id, control.progress),
        store.release,
        control,
        settings.MLSCHED_HEARTBEAT,
    )
    beat.start()
    try:  # the heartbeat covers the load, the simulation and the storing of the result
        worker = None if self.request.is_eager else self.request.hostname  # eager: no worker to stop
        return _simulate_and_record(store, run_id, job, control, worker)
    finally:
        beat.stop()


def _simulate_and_record(store: RunStore, run_id: int, job: RunInput, control: Control, worker: str | None) -> str:
    try:
        with collector.fewer_collections():  # rarer collections while the run lasts
            # A cancel (seen by the heartbeat) also stops the loading of a large trace.
            instance = load_instance(
                job.cluster_text,
                job.cluster_name,
                job.trace_text,
                job.trace_name,
                control.check,
                windows=job.windows,
                window=job.window,
                history=_history(job),
                adapt=job.adapt,
            )
            control.check()
            result = simulate_run_input(instance, job.algorithm, job.params, job.seed, control)
    except RunStopped as stop:
        if stop.reason == "cancel":
            _retrying(lambda: store.cancelled(run_id, "cancelled by the user"))
            return "cancelled"
        logger.warning("run %s was taken from this worker (declared lost, deleted or done elsewhere): stopped", run_id)
        return "gone"
    except (InputError, UnsupportedInstance, ScheduleError) as exc:
        message = str(exc)
        _retrying(lambda: store.fail(run_id, message))
        return "failed"
    except SoftTimeLimitExceeded:
        limit = settings.MLSCHED_RUN_TIME_LIMIT
        _retrying(lambda: store.fail(run_id, f"stopped: the simulation took longer than the {limit} s limit"))
        return "failed"
    except BaseException as exc:
        store.fail(run_id, f"internal error: {type(exc).__name__}: {exc}")
        raise
    try:
        # Retried in place while the store is unreachable: a new message would find the run
        # running, skip it, and the result would be lost.
        kept = _retrying(lambda: store.finish(run_id, result))
    except TransientStoreError:
        logger.error(
            "run %s: the result could not be stored for %g s (store unreachable): dropped; the run is re-queued "
            "when its heartbeat is stale",
            run_id,
            settings.MLSCHED_STORE_PATIENCE,
        )
        return "unstored"
    except OSError as exc:
        if exc.errno not in CANNOT_STORE:
            _fail_unstored(store, run_id, exc)
            raise
        _cannot_store(store, run_id, worker or "this worker", exc)
        return "given back"
    except Exception as exc:
        _fail_unstored(store, run_id, exc)
        raise
    if kept != "done":
        logger.warning("run %s: %s; this worker's result was not kept", run_id, kept)
        return "duplicate"
    return "done"


def _fail_unstored(store: RunStore, run_id: int, exc: Exception) -> None:
    message = f"internal error: could not store the result: {type(exc).__name__}: {exc}"
    _retrying(lambda: store.fail(run_id, message))


def _cannot_store(store: RunStore, run_id: int, worker: str, exc: OSError) -> None:
    """This worker's storage refuses results (disk full, read-only, permission): the run goes back
    to the queue for another worker, the worker is recorded as unable to store (``/healthz``, the
    admin) and stops consuming the runs' queue (it stays up; restart it once its storage is
    mended)."""
    problem = f"cannot store results: {type(exc).__name__}: {exc}"
    logger.error("run %s: %s; the run goes back to the queue and %s stops taking runs", run_id, problem, worker)
    _retrying(lambda: store.give_back(run_id, f"{worker} {problem}; queued again for another worker"))
    _retrying(lambda: store.cannot_store(worker, problem))
    if worker != "this worker":
        app.control.cancel_consumer(app.conf.task_default_queue, destination=[worker])


@worker_ready.connect
def probe_storage(sender: Any, **kwargs: Any) -> None:
    """When a worker (``celery worker``) is ready: if its storage refuses a small file, it records
    itself as unable to store and does not consume the runs' queue; if it can store, what was
    recorded of it before (a mended disk, a restart) is cleared. A probe that cannot reach the
    database changes nothing."""
    worker = str(sender.hostname)
    try:
        run_store().probe(worker)
    except OSError as exc:
        if exc.errno not in CANNOT_STORE:
            logger.exception("%s: storage probe failed", worker)
            return
        problem = f"cannot store results: {type(exc).__name__}: {exc}"
        logger.error("%s %s: it takes no runs", worker, problem)
        try:
            run_store().cannot_store(worker, problem)
        except TransientStoreError as again:
            logger.error("%s: could not record it: %s", worker, again)
        sender.cancel_task_queue(app.conf.task_default_queue)
    except Exception:
        logger.exception("%s: storage probe failed", worker)


def check_store() -> checks.CheckStore:
    store: checks.CheckStore = import_string(settings.MLSCHED_CHECK_STORE)()
    return store


@app.task(name="workers.check_trace", ignore_result=True)
def check_trace(check_id: int) -> str:
    """Load a trace against a cluster spec and store its summary (or the error naming the line).

    A claimed check always leaves "running" (a failure while reading its input too); a heartbeat
    (``CheckStore.beat``) shows that its worker is alive, so ``recover_checks`` can tell a long check
    from a lost one."""
    store = check_store()
    try:
        data = store.claim(check_id)
    except BaseException as exc:
        _fail_check(store, check_id, exc)
        raise
    if data is None:
        logger.warning("trace check %s is not queued (already taken, finished or deleted): skipped", check_id)
        return "skipped"
    control = Control()
    beat = Heartbeat(
        f"trace check {check_id}",
        lambda: None if store.beat(check_id) else "gone",
        store.release,
        control,
        settings.MLSCHED_HEARTBEAT,
    )
    beat.start()
    try:
        with collector.fewer_collections():  # as for a run: a large trace makes many long-lived objects
            if data.raw is not None:  # a large raw upload: imported here, not in the web request
                store.progress(check_id, 0.02, "importing the raw trace")
                text = checks.import_raw(data)
                store.imported(check_id, text)
                data = replace(data, trace_text=text, raw=None)
            summary = checks.check_trace(data, lambda p, phase: store.progress(check_id, p, phase))
    except InputError as exc:
        store.fail(check_id, str(exc), exc.line)
        return "failed"
    except BaseException as exc:
        _fail_check(store, check_id, exc)
        raise
    finally:
        beat.stop()
    store.finish(check_id, summary)
    return "done"


def _fail_check(store: checks.CheckStore, check_id: int, exc: BaseException) -> None:
    """Record ``exc`` as the internal error of a running check; if even that fails (the database is
    down), the check stays as it is and ``recover_checks`` finds it."""
    try:
        store.fail(check_id, f"internal error: {type(exc).__name__}: {exc}", None)
    except Exception as again:
        logger.error("trace check %s: its failure could not be recorded: %s: %s", check_id, type(again).__name__, again)


def send_check(check_id: int) -> None:
    """Send one trace check to the workers. Raises kombu's OperationalError when the broker cannot
    be reached or does not answer."""
    with broker_connection() as connection:
        check_trace.si(check_id).apply_async(producer=app.amqp.Producer(connection))


def broker_connection() -> Connection:
    """A new connection for the web side's use of the broker: connecting and each reply wait at most
    ``broker_connection_timeout`` (MLSCHED_BROKER_TIMEOUT) seconds, so that a broker that accepts
    connections but never answers cannot hang a request. Workers do not use it: their connections
    block on the queue."""
    timeout = app.conf.broker_connection_timeout
    return app.connection_for_write(transport_options={"socket_timeout": timeout, "socket_connect_timeout": timeout})


def _history(job: RunInput) -> tuple[str, str] | None:
    """The run's history file as (name, text), or None; the store keeps the two together."""
    if job.history_text is None:
        return None
    if job.history_name is None:
        raise ValueError("a history text without its file name (RunInput.history_name)")
    return job.history_name, job.history_text


def queued_messages() -> int:
    """How many messages wait in the runs' queue (those a worker has taken are not counted).

    A declare that is not passive: the Redis transport answers a passive one for an empty queue
    (its list is deleted) with NOT_FOUND. It creates nothing on Redis or the filesystem transport.
    Raises kombu's OperationalError when the broker cannot be reached or does not answer."""
    with broker_connection() as connection:
        try:
            # celery-types declares default_channel as kombu's abstract StdChannel; every transport's
            # channel (virtual.Channel, amqp) has queue_declare
            declared = connection.default_channel.queue_declare(queue=app.conf.task_default_queue)  # type: ignore[attr-defined]
        except connection.connection_errors as exc:
            raise OperationalError(str(exc)) from exc
    return int(declared.message_count)


def send_runs(run_ids: Iterable[int]) -> None:
    """Send one task per run, as one Celery group (a comparison or a sweep fans out at once).

    Raises kombu's OperationalError when the broker cannot be reached or does not answer."""
    ids = list(run_ids)
    if ids:
        with broker_connection() as connection:
            group(simulate_run.si(i) for i in ids).apply_async(producer=app.amqp.Producer(connection))
