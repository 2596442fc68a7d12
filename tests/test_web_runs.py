"""The life of runs behind the pages: cancellation, reruns, deletion, submission while the broker is
down, recovery of runs whose worker was lost, and transient database errors in the run store."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from kombu.exceptions import OperationalError

from tests.webhelpers import upload_data
from webapp import services
from webapp.models import Experiment, Run
from workers import tasks

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")


@pytest.fixture
def client(auth_client):
    """Pages need a signed-in user (conftest ``auth_client``)."""
    return auth_client


def test_cancelling_queued_runs_marks_them_and_a_worker_skips_them(client, user, tiny_cluster, tiny_trace):
    client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf"]))  # not dispatched yet
    exp = Experiment.objects.get()
    client.post(reverse("experiment-cancel", args=[exp.pk]), {"run": exp.runs.get(algorithm="fifo").pk})
    runs = {r.algorithm: r for r in exp.runs.all()}
    assert runs["fifo"].status == "cancelled" and runs["drf"].status == "queued"
    assert tasks.simulate_run(runs["fifo"].pk) == "skipped"
    assert tasks.simulate_run(runs["drf"].pk) == "done"


def test_a_rerun_reproduces_the_metrics(client, done_experiment, user):
    response = client.post(reverse("experiment-rerun", args=[done_experiment.pk]))
    again = Experiment.objects.order_by("-id").first()
    assert response.url == again.get_absolute_url() and again.pk != done_experiment.pk
    # the on-commit dispatch ran inside the request (no outer transaction in the test client)
    for old, new in zip(done_experiment.runs.all(), again.runs.all(), strict=True):
        new.refresh_from_db()
        if new.status == "queued":
            tasks.simulate_run(new.pk)
            new.refresh_from_db()
        assert (new.algorithm, new.params, new.seed, new.metrics) == (old.algorithm, old.params, old.seed, old.metrics)


def test_when_the_broker_is_down_the_experiment_is_kept_and_dispatched_later(
    client, tiny_cluster, tiny_trace, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []

    def broker_down(run_ids):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6390. Connection refused.")

    monkeypatch.setattr(tasks, "send_runs", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf"]))
    exp = Experiment.objects.get()
    assert exp.pending_dispatch and {(r.status, r.dispatched) for r in exp.runs.all()} == {("queued", False)}
    page = client.get(response.url).content.decode()
    assert "The task queue could not be reached" in page
    assert client.get(reverse("experiment-status", args=[exp.pk])).json()["waiting_for_broker"] is True
    assert services.recover_runs()["dispatched"] == 0  # still down

    monkeypatch.setattr(tasks, "send_runs", sent.extend)
    assert services.recover_runs()["dispatched"] == 2
    exp.refresh_from_db()
    assert sorted(sent) == sorted(exp.runs.values_list("pk", flat=True)) and not exp.pending_dispatch
    assert {r.dispatched for r in exp.runs.all()} == {True}


def test_a_queued_run_whose_message_was_lost_is_sent_again_when_the_queue_is_empty(
    tiny_cluster, tiny_trace, settings, monkeypatch
):
    """The rule in brief (tests/test_tasks.py runs it over Redis with a real worker)."""
    queue = ["a message"]
    sent = []
    monkeypatch.setattr(tasks, "queued_messages", lambda: len(queue))
    monkeypatch.setattr(tasks, "send_runs", sent.extend)
    exp = Experiment.objects.create(
        name="t", source="upload", cluster_text=tiny_cluster, trace_name="t.csv", trace_text=tiny_trace
    )
    run = Run.objects.create(experiment=exp, algorithm="fifo")  # dispatched, before dispatch times were kept
    assert services.recover_runs()["resent"] == 0  # created just now
    long_ago = timezone.now() - timedelta(seconds=settings.MLSCHED_REDISPATCH_AFTER + 1)
    Run.objects.filter(pk=run.pk).update(created=long_ago)
    assert services.recover_runs()["resent"] == 0  # a message waits: a worker is behind, not lost
    queue.clear()
    assert services.recover_runs()["resent"] == 1 and sent == [run.pk]
    assert services.recover_runs()["resent"] == 0  # sent again just now
    Run.objects.filter(pk=run.pk).update(dispatched_at=long_ago)

    def broker_down(run_ids):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6390. Connection refused.")

    monkeypatch.setattr(tasks, "send_runs", broker_down)
    assert services.recover_runs()["resent"] == 0
    assert services.status(exp)["waiting_for_broker"] is True


def test_a_run_whose_heartbeat_stopped_is_requeued_once_then_failed_with_the_reason(
    tiny_cluster, tiny_trace, settings, monkeypatch
):
    sent = []
    monkeypatch.setattr(tasks, "send_runs", sent.extend)
    exp = Experiment.objects.create(
        name="t", source="upload", cluster_text=tiny_cluster, trace_name="t.csv", trace_text=tiny_trace
    )
    run = Run.objects.create(experiment=exp, algorithm="fifo")
    old = timezone.now() - timedelta(seconds=settings.MLSCHED_HEARTBEAT_TIMEOUT + 1)
    Run.objects.filter(pk=run.pk).update(status="running", attempts=1, started=old, heartbeat=old)
    assert services.recover_runs()["requeued"] == 1
    run.refresh_from_db()
    assert run.status == "queued" and "lost its worker" in run.error and sent == [run.pk]
    Run.objects.filter(pk=run.pk).update(status="running", attempts=2, started=old, heartbeat=old)
    assert services.recover_runs()["failed"] == 1
    run.refresh_from_db()
    assert run.status == "failed" and run.error.startswith("lost: the worker stopped or was killed during attempt 2")
    # a live heartbeat keeps a run
    Run.objects.filter(pk=run.pk).update(status="running", heartbeat=timezone.now(), started=old)
    assert services.recover_runs() == {"requeued": 0, "failed": 0, "cancelled": 0, "dispatched": 0,
                                       "resent": 0, "prepared": 0}  # fmt: skip


def test_database_errors_in_the_run_store_are_transient_and_retried(monkeypatch, tiny_cluster, tiny_trace):
    from django.db.utils import OperationalError as DbError

    from webapp.runstore import DjangoRunStore
    from workers.runs import TransientStoreError

    exp = Experiment.objects.create(name="t", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                    trace_text=tiny_trace)  # fmt: skip
    run = Run.objects.create(experiment=exp, algorithm="fifo")

    def down(*args, **kwargs):
        raise DbError("server closed the connection unexpectedly")

    with monkeypatch.context() as m:
        m.setattr(Run.objects, "filter", down)
        with pytest.raises(TransientStoreError):
            DjangoRunStore().claim(run.pk)
    claim, calls = DjangoRunStore.claim, []

    def flaky(store, run_id):  # the database drops the first claim's connection
        calls.append(run_id)
        if len(calls) == 1:
            raise TransientStoreError("server closed the connection unexpectedly")
        return claim(store, run_id)

    monkeypatch.setattr(DjangoRunStore, "claim", flaky)
    tasks.simulate_run.apply((run.pk,))  # the claim is retried as a new message (at once, in eager mode)
    run.refresh_from_db()
    assert run.status == "done" and run.attempts == 1 and len(calls) == 2  # nothing was claimed by the failed one
    assert tasks.simulate_run.max_retries == 5


def test_deleting_an_experiment_removes_its_rows_and_result_files(client, done_experiment, user):
    from django.core.files.storage import default_storage

    from webapp.runstore import index_name

    done_experiment.owner = user
    done_experiment.save()
    names = [r.result.name for r in done_experiment.runs.all()]
    assert all(default_storage.exists(n) and default_storage.exists(index_name(n)) for n in names)
    assert client.post(reverse("experiment-delete", args=[done_experiment.pk])).url == reverse("home")
    assert not Experiment.objects.exists() and not Run.objects.exists()
    assert not any(default_storage.exists(n) or default_storage.exists(index_name(n)) for n in names)
