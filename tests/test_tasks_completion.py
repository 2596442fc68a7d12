"""A finished run is never lost or simulated again: the heartbeat covers the storing of its result,
an unreachable store is waited for in place, and the first complete result wins (docs/architecture.md,
"A run's life")."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

import pytest
from django.db.models import QuerySet
from django.db.utils import OperationalError
from django.utils import timezone

from scheduling.validator import validate
from tests.test_tasks import make_run
from webapp import runstore, services
from webapp.models import Run
from workers import tasks
from workers.runs import load_instance
from workers.tasks import simulate_run

# These tests look at, and break, the result files themselves: the file system storage under MEDIA_ROOT.
pytestmark = pytest.mark.usefixtures("filesystem_storage")


@pytest.fixture
def simulations(monkeypatch):
    """How many times each run was simulated (the engine's entry point, counted)."""
    counts: list[int] = []
    inner = tasks.simulate_run_input

    def counted(*args, **kwargs):
        counts.append(1)
        return inner(*args, **kwargs)

    monkeypatch.setattr(tasks, "simulate_run_input", counted)
    return counts


def during_storing(monkeypatch, interfere):
    """Run ``interfere(run_id)`` once, while the first result of the test is being stored (after its
    file is written, before the run is marked done)."""
    finish = runstore.DjangoRunStore.finish
    calls: list[int] = []

    def slow_finish(store, run_id, result):
        if not calls:
            calls.append(run_id)
            interfere(run_id)
        return finish(store, run_id, result)

    monkeypatch.setattr(runstore.DjangoRunStore, "finish", slow_finish)


def stale(run_id: int) -> None:
    """The run's heartbeat as a dead worker leaves it."""
    Run.objects.filter(pk=run_id).update(heartbeat=timezone.now() - timedelta(hours=1))


def result_files(settings):
    return sorted(p.name for p in (settings.MEDIA_ROOT / "results").rglob("*") if p.is_file())


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_goes_on_while_a_finished_run_is_stored_so_recovery_leaves_it_alone(
    tiny_cluster, tiny_trace, settings, monkeypatch, simulations, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MLSCHED_HEARTBEAT = 0.1
    settings.MLSCHED_HEARTBEAT_TIMEOUT = 0.5
    monkeypatch.setattr(tasks, "send_runs", lambda ids: None)
    run = make_run(tiny_cluster, tiny_trace, "srtf")
    seen = {}

    def slow_store(run_id):  # a big result takes minutes to store: here, three heartbeat timeouts
        before = Run.objects.get(pk=run_id).heartbeat
        time.sleep(1.5)
        seen["beats"] = Run.objects.get(pk=run_id).heartbeat > before
        seen["recovery"] = services.recover_runs()

    during_storing(monkeypatch, slow_store)
    assert simulate_run(run.pk) == "done"
    run.refresh_from_db()
    assert seen["beats"], "no heartbeat while the result was stored"
    assert seen["recovery"]["requeued"] == 0 and seen["recovery"]["failed"] == 0
    assert run.status == "done" and run.attempts == 1 and len(simulations) == 1
    instance = load_instance(tiny_cluster, "cluster.json", tiny_trace, "trace.csv")
    assert validate(instance, services.load_result(run)) == []


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks")
def test_a_result_whose_database_is_unreachable_for_a_while_is_stored_without_simulating_again(
    tiny_cluster, tiny_trace, settings, monkeypatch, simulations
):
    settings.MLSCHED_STORE_BACKOFF = 0.01
    run = make_run(tiny_cluster, tiny_trace, "srtf")
    update = QuerySet.update
    refused = []

    def restarting(qs, **values):  # PostgreSQL restarting: the first 6 writes of the outcome fail
        if values.get("status") == "done" and len(refused) < 6:
            refused.append(1)
            raise OperationalError("terminating connection due to administrator command")
        return update(qs, **values)

    monkeypatch.setattr(QuerySet, "update", restarting)
    simulate_run.apply((run.pk,))  # as a worker runs it: a Celery retry would be a new message
    run.refresh_from_db()
    assert len(refused) == 6
    assert run.status == "done" and run.attempts == 1 and len(simulations) == 1
    assert result_files(settings) == [f"run-{run.pk}.charts.json.gz", f"run-{run.pk}.gantt.json.gz",
                                      f"run-{run.pk}.json.gz"]  # fmt: skip


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks")
def test_a_complete_result_wins_over_a_run_re_queued_meanwhile_and_its_message_is_then_skipped(
    tiny_cluster, tiny_trace, monkeypatch, simulations, caplog
):
    sent = []
    monkeypatch.setattr(tasks, "send_runs", sent.extend)  # re-sent, no worker took it yet
    run = make_run(tiny_cluster, tiny_trace, "srtf")

    def declared_lost(run_id):
        stale(run_id)
        assert services.recover_runs()["requeued"] == 1

    during_storing(monkeypatch, declared_lost)
    assert simulate_run(run.pk) == "done"
    run.refresh_from_db()
    assert run.status == "done" and run.result and run.error == ""
    assert sent == [run.pk] and simulate_run(run.pk) == "skipped"  # the second message does nothing
    assert len(simulations) == 1


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks")
def test_a_complete_result_wins_over_a_run_failed_as_lost_meanwhile(
    tiny_cluster, tiny_trace, settings, monkeypatch, simulations
):
    settings.MLSCHED_MAX_ATTEMPTS = 1
    run = make_run(tiny_cluster, tiny_trace, "srtf")

    def declared_lost(run_id):
        stale(run_id)
        assert services.recover_runs()["failed"] == 1
        assert Run.objects.get(pk=run_id).error.startswith("lost: the worker stopped or was killed")

    during_storing(monkeypatch, declared_lost)
    assert simulate_run(run.pk) == "done"
    run.refresh_from_db()
    assert run.status == "done" and run.error == "" and len(simulations) == 1


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks")
def test_a_worker_whose_run_another_worker_completed_keeps_that_result_and_says_so(
    tiny_cluster, tiny_trace, settings, monkeypatch, simulations, caplog
):
    run = make_run(tiny_cluster, tiny_trace, "srtf")

    def completed_elsewhere(run_id):  # re-queued and simulated by another worker (inline) first
        stale(run_id)
        assert services.recover_runs()["requeued"] == 1
        assert Run.objects.get(pk=run_id).status == "done"

    during_storing(monkeypatch, completed_elsewhere)
    with caplog.at_level(logging.WARNING, logger="workers.tasks"):
        assert simulate_run(run.pk) == "duplicate"
    run.refresh_from_db()
    assert run.status == "done" and run.attempts == 2 and len(simulations) == 2
    assert f"run {run.pk}: the run is done already; this worker's result was not kept" in caplog.text
    assert result_files(settings) == [f"run-{run.pk}.charts.json.gz", f"run-{run.pk}.gantt.json.gz",
                                      f"run-{run.pk}.json.gz"]  # fmt: skip
    assert run.result.name == f"results/{run.experiment_id}/run-{run.pk}.json.gz"


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks")
def test_a_result_never_replaces_a_cancellation(tiny_cluster, tiny_trace, monkeypatch):
    run = make_run(tiny_cluster, tiny_trace, "srtf")

    def cancelled(run_id):
        Run.objects.filter(pk=run_id).update(status="cancelled", cancel_requested=True, error="cancelled by the user")

    during_storing(monkeypatch, cancelled)
    assert simulate_run(run.pk) == "duplicate"
    run.refresh_from_db()
    assert run.status == "cancelled" and not run.result


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks")
def test_a_run_whose_worker_cannot_store_goes_back_to_the_queue_instead_of_failing(
    tiny_cluster, tiny_trace, settings, monkeypatch
):
    from pathlib import Path

    from webapp.models import WorkerProblem

    settings.MEDIA_ROOT = Path(f"/sys/mlsched-results-{id(settings)}")  # sysfs refuses new files (EPERM)
    sent = []
    monkeypatch.setattr(tasks, "send_runs", sent.extend)
    run = make_run(tiny_cluster, tiny_trace, "srtf")
    assert simulate_run.apply((run.pk,)).get() == "given back"
    run.refresh_from_db()
    assert run.status == "queued" and not run.dispatched and not run.result
    assert "cannot store results: PermissionError" in run.error and "queued again for another worker" in run.error
    (problem,) = WorkerProblem.objects.all()
    assert problem.problem.startswith("cannot store results: PermissionError")
    assert services.recover_runs()["dispatched"] == 1 and sent == [run.pk]  # sent to the other workers


class Consumer:
    """What Celery's worker_ready signal gives the storage probe: the worker's name and its consumer."""

    def __init__(self, hostname):
        self.hostname, self.cancelled = hostname, []

    def cancel_task_queue(self, queue):
        self.cancelled.append(queue)


@pytest.mark.django_db
def test_a_worker_checks_its_storage_when_ready_and_a_mended_one_is_cleared(settings, tmp_path):
    from pathlib import Path

    from webapp.models import WorkerProblem

    settings.MEDIA_ROOT = Path(f"/sys/mlsched-results-{id(settings)}")  # refused (EPERM)
    broken = Consumer("celery@gpu-2")
    tasks.probe_storage(broken)
    assert broken.cancelled == [tasks.app.conf.task_default_queue]
    assert WorkerProblem.objects.get().problem.startswith("cannot store results: PermissionError")
    settings.MEDIA_ROOT = tmp_path / "media"  # mended, the worker restarted
    mended = Consumer("celery@gpu-2")
    tasks.probe_storage(mended)
    assert mended.cancelled == [] and not WorkerProblem.objects.exists()
    assert [p for p in settings.MEDIA_ROOT.rglob("*") if p.is_file()] == []  # the probe's file is gone
