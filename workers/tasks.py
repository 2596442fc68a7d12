"""The simulation task: claim a run, simulate it, record the outcome; and how runs are sent.

A claimed run always leaves "running": known failures (bad input, an instance the algorithm does
not support, an invalid schedule, the time limit) are recorded with their message; a cancellation
is recorded as such; anything else is recorded as an internal error and re-raised so that Celery
logs it with its traceback.

While a run simulates, a heartbeat thread writes its progress every ``MLSCHED_HEARTBEAT`` seconds
(the throttle: the engine may decide thousands of times a second) and reads back whether the user
asked to cancel. The algorithm is wrapped so that its next decision after such a request raises
``RunStopped`` (cooperative cancellation: the engine itself knows nothing of it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from celery import group
from celery.exceptions import SoftTimeLimitExceeded
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

STORE_WRITE_ATTEMPTS = 4  # recording a finished run is retried in place (the simulation is not redone)


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
    def __init__(self, store: RunStore, run_id: int, control: Control, interval: float) -> None:
        super().__init__(name=f"heartbeat-{run_id}", daemon=True)
        self.store, self.run_id, self.control, self.interval = store, run_id, control, interval
        self.done = threading.Event()

    def run(self) -> None:
        try:
            while not self.done.wait(self.interval):
                try:
                    verdict = self.store.beat(self.run_id, self.control.progress)
                except TransientStoreError:
                    logger.warning("run %s: heartbeat not recorded (store unreachable)", self.run_id)
                    continue
                if verdict:
                    self.control.reason = verdict
                    self.control.stop.set()
                    return
        finally:
            self.store.release()


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


def _retrying(write: Callable[[], None]) -> None:
    for attempt in range(STORE_WRITE_ATTEMPTS):
        try:
            write()
            return
        except TransientStoreError:
            if attempt == STORE_WRITE_ATTEMPTS - 1:
                raise
            time.sleep(2**attempt)


@app.task(
    name="workers.simulate_run",
    ignore_result=True,  # the outcome is recorded in the run store
    autoretry_for=(TransientStoreError,),  # only infrastructure errors are retried
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=5,
)
def simulate_run(run_id: int) -> str:
    store = run_store()
    job = store.claim(run_id)
    if job is None:
        logger.warning("run %s is not queued (already taken, finished or deleted): skipped", run_id)
        return "skipped"
    control = Control()
    beat = Heartbeat(store, run_id, control, settings.MLSCHED_HEARTBEAT)
    beat.start()
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
            )
            control.check()
            result = simulate_run_input(instance, job.algorithm, job.params, job.seed, control)
    except RunStopped as stop:
        if stop.reason == "cancel":
            _retrying(lambda: store.cancelled(run_id, "cancelled by the user"))
            return "cancelled"
        logger.warning("run %s was taken from this worker (declared lost): stopped", run_id)
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
    finally:
        beat.done.set()
        beat.join(timeout=10)
    try:
        _retrying(lambda: store.finish(run_id, result))
    except TransientStoreError:
        raise  # retried by Celery (autoretry_for); a run left running is re-queued by the heartbeat rule
    except Exception as exc:
        message = f"internal error: could not store the result: {type(exc).__name__}: {exc}"
        _retrying(lambda: store.fail(run_id, message))
        raise
    return "done"


def check_store() -> checks.CheckStore:
    store: checks.CheckStore = import_string(settings.MLSCHED_CHECK_STORE)()
    return store


@app.task(name="workers.check_trace", ignore_result=True)
def check_trace(check_id: int) -> str:
    """Load a trace against a cluster spec and store its summary (or the error naming the line)."""
    store = check_store()
    data = store.claim(check_id)
    if data is None:
        logger.warning("trace check %s is not queued (already taken, finished or deleted): skipped", check_id)
        return "skipped"
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
        store.fail(check_id, f"internal error: {type(exc).__name__}: {exc}", None)
        raise
    store.finish(check_id, summary)
    return "done"


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
