"""The simulation task: claim a run, simulate it with ``scheduling.api``, record the outcome.

A claimed run always leaves "running": known failures (bad input, an instance the algorithm does
not support, an invalid schedule, the time limit) are recorded with their message; anything else
is recorded as an internal error and re-raised so that Celery logs it with its traceback.
"""

from __future__ import annotations

import logging

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils.module_loading import import_string

from scheduling import api
from scheduling.errors import InputError, ScheduleError, UnsupportedInstance
from workers.celery import app
from workers.runs import RunStore, load_instance

logger = logging.getLogger(__name__)


def run_store() -> RunStore:
    store: RunStore = import_string(settings.MLSCHED_RUN_STORE)()
    return store


@app.task(name="workers.simulate_run", ignore_result=True)  # the outcome is recorded in the run store
def simulate_run(run_id: int) -> str:
    store = run_store()
    job = store.claim(run_id)
    if job is None:
        logger.warning("run %s is not queued (already taken, finished or deleted): skipped", run_id)
        return "skipped"
    try:
        instance = load_instance(job.cluster_text, job.cluster_name, job.trace_text, job.trace_name)
        result = api.run(instance, job.algorithm, job.params, job.seed)
        store.finish(run_id, result)
    except (InputError, UnsupportedInstance, ScheduleError) as exc:
        store.fail(run_id, str(exc))
        return "failed"
    except SoftTimeLimitExceeded:
        store.fail(run_id, f"stopped: the simulation took longer than the {settings.MLSCHED_RUN_TIME_LIMIT} s limit")
        return "failed"
    except BaseException as exc:
        store.fail(run_id, f"internal error: {type(exc).__name__}: {exc}")
        raise
    return "done"
