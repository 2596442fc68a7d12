"""Shared fixtures: tiny inputs, and runs simulated either inline (web tests) or by a worker on Redis."""

import json
import os
import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.urls import reverse

from tests.webhelpers import upload_data
from webapp.models import Experiment
from workers import submissions, tasks
from workers.celery import app as celery_app
from workers.tasks import simulate_run

POSTGRES_SERVER = "postgres://postgres@127.0.0.1:5432"
TEST_REDIS_URL = "redis://127.0.0.1:6379/15"
TEST_QUEUE = f"mlsched-tests-{os.getpid()}"  # one queue per test session: parallel checkouts never share one

TINY_CLUSTER = {
    "slot_seconds": 60,
    "resources": [{"name": "gpu", "unit": "GPU"}, {"name": "cpu", "unit": "vCPU"}],
    "servers": [{"id": "node", "count": 2, "capacity": {"gpu": 4, "cpu": 16}}],
    "worker_types": [{"id": "w1", "demand": {"gpu": 1, "cpu": 2}}],
    "ps_types": [{"id": "p1", "demand": {"cpu": 2}}],
}


@pytest.fixture(autouse=True)
def _fresh_figure_cache():
    """No test sees figures another test cached (webapp/figurecache.py)."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def tiny_cluster() -> str:
    """Two servers with 4 GPUs each, one worker type and one PS type (JSON text)."""
    return json.dumps(TINY_CLUSTER)


@pytest.fixture
def tiny_trace() -> str:
    """Three small PS jobs that every algorithm completes on ``tiny_cluster`` (CSV text)."""
    return (
        "job_id,arrival,epochs,chunks,minibatches,batch_time,ps_update\n"
        "j1,0,1,4,5,60,30\nj2,1,2,2,3,120,30\nj3,2,1,3,4,60,30\n"
    )


@pytest.fixture
def inline_tasks(settings, tmp_path, monkeypatch):
    """Queued runs are simulated at once in the caller; results go to a temporary folder.

    Not Celery's eager mode: that still opens a broker connection for the (default) broker, and
    the app would keep it for the real-worker tests.
    """
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MLSCHED_HEARTBEAT = 3600  # no heartbeat thread writes inside the test's transaction

    def send_runs(run_ids):
        for run_id in run_ids:
            simulate_run.apply((run_id,))

    monkeypatch.setattr(tasks, "send_runs", send_runs)
    monkeypatch.setattr(tasks, "send_check", lambda check_id: tasks.check_trace.apply((check_id,)))
    monkeypatch.setattr(submissions, "send_preparation", lambda exp_id: submissions.prepare_submission.apply((exp_id,)))


@pytest.fixture
def filesystem_storage(settings):
    """Files go to the folder MEDIA_ROOT (``MLSCHED_STORAGE=filesystem``) instead of the database."""
    settings.STORAGES = {**settings.STORAGES, "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"}}


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("alice", password="alice-password-1")


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user("mallory", password="mallory-password-1")


@pytest.fixture
def auth_client(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def done_experiment(client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks):
    """An experiment of fifo, drf and srtf on the tiny inputs, every run done: posted through ``client``,
    which the web test modules override with ``auth_client`` (requesting ``auth_client`` here instead
    would make a test that uses this fixture but not ``client`` reach that override through
    ``auth_client`` itself, a recursive dependency). For tests marked ``django_db`` that use
    ``inline_tasks``."""
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("experiment-new"), upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf", "srtf"])
        )
    exp = Experiment.objects.get()
    assert {r.status for r in exp.runs.all()} == {"done"}
    return exp


@pytest.fixture
def redis_broker(transactional_db, settings, tmp_path):
    """The app sends to the test queue on the local Redis (no worker consumes it yet).

    The broker settings are the same for every test of a session (and no other test opens a broker
    connection), so the app's pooled connections always point at this broker.
    """
    settings.MEDIA_ROOT = tmp_path / "media"
    celery_app.conf.update(
        broker_url=TEST_REDIS_URL,
        result_backend=TEST_REDIS_URL,
        broker_transport_options={},
        task_default_queue=TEST_QUEUE,
    )


@pytest.fixture
def redis_worker(redis_broker):
    """A real Celery worker (solo pool, in a thread) consuming the test queue on the local Redis."""
    with start_worker(celery_app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=30):
        yield


@pytest.fixture
def postgres_db():
    """A new PostgreSQL database for one test (created in the server's ``test`` database, dropped
    after), so that the migration state of ``test`` itself never matters."""
    import psycopg

    name = f"mlsched_test_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(f"{POSTGRES_SERVER}/test", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{POSTGRES_SERVER}/{name}"
    finally:
        with psycopg.connect(f"{POSTGRES_SERVER}/test", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
