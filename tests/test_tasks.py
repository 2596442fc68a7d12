"""The simulation task: over a real Redis broker and worker, against PostgreSQL, and its failure paths."""

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.utils import timezone

from scheduling import registry
from scheduling.registry import AlgorithmSpec, Feature
from scheduling.validator import validate
from tests.conftest import TEST_QUEUE, TEST_REDIS_URL
from webapp import services
from webapp.models import Experiment, Run
from workers.runs import load_instance
from workers.tasks import simulate_run

ROOT = Path(__file__).resolve().parent.parent
POSTGRES_SERVER = "postgres://postgres@127.0.0.1:5432"
POSTGRES_URL = f"{POSTGRES_SERVER}/test"


def make_run(cluster, trace, algorithm="fifo", **params):
    exp = Experiment.objects.create(
        name="t", source="upload", cluster_text=cluster, trace_name="trace.csv", trace_text=trace
    )
    return Run.objects.create(experiment=exp, algorithm=algorithm, params=params, seed=0)


def wait_until_finished(run, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.is_finished:
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run.pk} still {run.status} after {timeout} s")


# ---------------------------------------------------------------------------------------------
# A real worker over Redis


@pytest.mark.redis
def test_a_run_queued_over_redis_is_simulated_by_a_worker_and_its_result_validates(
    redis_worker, tiny_cluster, tiny_trace
):
    run = make_run(tiny_cluster, tiny_trace, "srtf")
    services.enqueue(run.pk)
    wait_until_finished(run)
    assert run.status == "done", run.error
    result = services.load_result(run)
    assert validate(load_instance(tiny_cluster, "cluster.json", tiny_trace, "trace.csv"), result) == []
    assert run.metrics == result["metrics"]
    assert run.started <= run.finished


@pytest.mark.redis
def test_a_run_whose_parameters_cannot_build_the_algorithm_ends_failed_over_redis(
    redis_worker, tiny_cluster, tiny_trace
):
    run = make_run(tiny_cluster, tiny_trace, "fifo", workers_min=5, workers_max=2)
    services.enqueue(run.pk)
    wait_until_finished(run)
    assert run.status == "failed"
    assert "workers_min 5 is above workers_max 2" in run.error


@pytest.mark.redis
def test_a_run_whose_message_the_broker_lost_is_sent_again_and_completes(
    redis_broker, request, settings, tiny_cluster, tiny_trace
):
    run = make_run(tiny_cluster, tiny_trace, "srtf")
    assert services.enqueue(run.pk)  # no worker yet: the message waits in the queue
    settings.MLSCHED_REDISPATCH_AFTER = 0
    assert services.recover_runs()["resent"] == 0  # its message is there: nothing to do
    redis.Redis.from_url(TEST_REDIS_URL).delete(TEST_QUEUE)  # lost (a Redis restart without persistence)
    settings.MLSCHED_REDISPATCH_AFTER = 300
    assert services.recover_runs()["resent"] == 0  # sent too recently: maybe still on its way
    request.getfixturevalue("redis_worker")  # a worker starts and finds the queue empty
    settings.MLSCHED_REDISPATCH_AFTER = 0
    assert services.recover_runs()["resent"] == 1
    wait_until_finished(run)
    assert run.status == "done" and run.attempts == 1, run.error


# ---------------------------------------------------------------------------------------------
# Failure paths, calling the task in-process


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks")
def test_an_instance_the_algorithm_does_not_support_ends_failed_with_the_reason(tiny_cluster, tiny_trace, monkeypatch):
    needs_edge = Feature("edge", "edge servers", lambda instance: "the cluster has no edge server")
    spec = AlgorithmSpec("edgy", "-", "-", "-", factory=registry.get("fifo").factory, needs=(needs_edge,))
    monkeypatch.setitem(registry.REGISTRY, "edgy", spec)
    run = make_run(tiny_cluster, tiny_trace, "edgy")
    assert simulate_run(run.pk) == "failed"
    run.refresh_from_db()
    assert run.status == "failed"
    assert run.error == "edgy needs edge servers: the cluster has no edge server"


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks")
@pytest.mark.parametrize("source", ["upload", "preset"])
def test_a_run_of_an_algorithm_no_longer_registered_ends_failed(tiny_cluster, tiny_trace, source):
    """Claiming the run asks the registry whether the algorithm learns from a history: a name it
    does not know must not leave the run running (the simulation fails it with the registry's message)."""
    exp = Experiment.objects.create(
        name="t", source=source, preset="demo" if source == "preset" else "", preset_options={"jobs": 3},
        cluster_text=tiny_cluster, trace_name="trace.csv", trace_text=tiny_trace, history_name="h.csv",
        history_text=tiny_trace if source == "upload" else "",
    )  # fmt: skip
    run = Run.objects.create(experiment=exp, algorithm="retired", params={}, seed=0)
    assert simulate_run(run.pk) == "failed"
    run.refresh_from_db()
    assert run.status == "failed" and "unknown algorithm 'retired'" in run.error
    assert services.experiment_zip(exp) and services.history_notes(exp, [run]) == []  # the pages still open
    if source == "preset":  # a preset this version does not know: the export leaves its history out
        Run.objects.create(experiment=exp, algorithm="asrpt", params={}, seed=0)
        Experiment.objects.filter(pk=exp.pk).update(preset="retired-preset")
        exp.refresh_from_db()
        names = zipfile.ZipFile(io.BytesIO(services.experiment_zip(exp))).namelist()
        assert "inputs/raw/trace.csv" in names and not any("history" in n for n in names)


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks")
def test_a_crashing_algorithm_ends_failed_and_the_exception_propagates(tiny_cluster, tiny_trace, monkeypatch):
    def explode(instance, params, rng):
        raise ZeroDivisionError("a bug in the algorithm")

    monkeypatch.setitem(registry.REGISTRY, "buggy", AlgorithmSpec("buggy", "-", "-", "-", factory=explode))
    run = make_run(tiny_cluster, tiny_trace, "buggy")
    with pytest.raises(ZeroDivisionError):
        simulate_run(run.pk)
    run.refresh_from_db()
    assert run.status == "failed"
    assert run.error == "internal error: ZeroDivisionError: a bug in the algorithm"


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks")
def test_a_run_is_simulated_at_most_once(tiny_cluster, tiny_trace):
    run = make_run(tiny_cluster, tiny_trace)
    assert simulate_run(run.pk) == "done"
    assert simulate_run(run.pk) == "skipped"


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks", "filesystem_storage")
def test_a_result_that_cannot_be_stored_fails_the_run_with_the_cause(tiny_cluster, tiny_trace, settings):
    settings.MEDIA_ROOT.mkdir()
    (settings.MEDIA_ROOT / "results").write_text("a regular file where the results folder should be")
    run = make_run(tiny_cluster, tiny_trace)
    with pytest.raises(NotADirectoryError):
        simulate_run(run.pk)
    run.refresh_from_db()
    assert run.status == "failed" and run.attempts == 1 and not run.result
    assert run.error.startswith("internal error: could not store the result: NotADirectoryError:")
    assert services.recover_runs()["requeued"] == 0  # nothing is left running


@pytest.mark.django_db
@pytest.mark.usefixtures("inline_tasks", "filesystem_storage")
def test_a_result_whose_row_cannot_be_recorded_leaves_no_file(tiny_cluster, tiny_trace, settings, monkeypatch):
    from django.db.models import QuerySet
    from django.db.utils import DataError

    run = make_run(tiny_cluster, tiny_trace)
    update = QuerySet.update

    def refuse_done(qs, **values):
        if values.get("status") == "done":
            raise DataError("value too long for type character varying(100)")
        return update(qs, **values)

    monkeypatch.setattr(QuerySet, "update", refuse_done)
    with pytest.raises(DataError):
        simulate_run(run.pk)
    run.refresh_from_db()
    assert run.status == "failed" and run.error == (
        "internal error: could not store the result: DataError: value too long for type character varying(100)"
    )
    assert [p for p in settings.MEDIA_ROOT.rglob("*") if p.is_file()] == []  # neither result nor Gantt index


@pytest.mark.django_db
def test_a_run_left_running_past_the_time_limit_is_declared_lost(tiny_cluster, tiny_trace, settings):
    run = make_run(tiny_cluster, tiny_trace)
    long_ago = timezone.now() - timedelta(seconds=settings.MLSCHED_RUN_TIME_LIMIT + settings.MLSCHED_STALE_GRACE + 1)
    Run.objects.filter(pk=run.pk).update(status="running", started=long_ago, heartbeat=timezone.now())
    services.recover_runs()
    status = services.status(Experiment.objects.get(pk=run.experiment_id))
    assert status["finished"] is True
    assert status["runs"][0]["status"] == "failed"
    assert "lost: no result within" in status["runs"][0]["error"]


# ---------------------------------------------------------------------------------------------
# The real worker command, as deployed: PostgreSQL + Redis, and the local filesystem-broker setup

SUBMIT_AND_WAIT = """
import json, time
import django
django.setup()
from webapp import services
from webapp.management.commands.load_examples import example
from webapp.models import Run
from scheduling.validator import validate
from workers.runs import load_instance

sub = example("demo")
sub = type(sub)(name="postgres test", inputs=sub.inputs, seed=0,
                runs=[("fifo", {}), ("fifo", {"workers_min": 5, "workers_max": 2})])
exp = services.create_experiment(sub)
deadline = time.monotonic() + 60
unfinished = Run.objects.filter(experiment=exp).exclude(status__in=["done", "failed"])
while unfinished.exists() and time.monotonic() < deadline:
    time.sleep(0.2)
inputs = sub.inputs
instance = load_instance(inputs.cluster_text, inputs.cluster_name, inputs.trace_text, inputs.trace_name)
report = [
    {"status": r.status, "error": r.error,
     "problems": validate(instance, services.load_result(r)) if r.status == "done" else None}
    for r in exp.runs.all()
]
exp.delete()
print(json.dumps(report))
"""


def django_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    return {**env, "DJANGO_SETTINGS_MODULE": "webapp.settings", "PYTHONPATH": str(ROOT), **extra}


@pytest.mark.redis
@pytest.mark.postgres
@pytest.mark.slow
def test_the_worker_command_records_runs_in_postgresql(tmp_path, postgres_db):
    env = django_env(
        DATABASE_URL=postgres_db,
        REDIS_URL="redis://127.0.0.1:6379/15",
        MLSCHED_QUEUE=f"mlsched-tests-postgres-{os.getpid()}",
        MEDIA_ROOT=str(tmp_path / "media"),
        MLSCHED_VAR_DIR=str(tmp_path / "var"),
    )
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True, capture_output=True)
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115
    worker = subprocess.Popen(
        [python, "-m", "celery", "-A", "workers", "worker", "--pool=solo", "--loglevel=WARNING",
         "--without-gossip", "--without-mingle", "--without-heartbeat", f"--hostname=pgtest-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        out = subprocess.run(
            [python, "-c", SUBMIT_AND_WAIT], check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        log.close()
    assert out.returncode == 0, out.stderr
    done, failed = json.loads(out.stdout.strip().splitlines()[-1])
    assert done == {"status": "done", "error": "", "problems": []}
    assert failed["status"] == "failed" and "workers_min 5 is above workers_max 2" in failed["error"]


def sign_in(base, username, password):
    """A urllib opener with the session of ``username`` (the real login form, CSRF token included)."""
    import http.cookiejar
    import re
    import urllib.parse

    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    with opener.open(f"{base}/accounts/login/", timeout=5) as response:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.read().decode()).group(1)
    data = urllib.parse.urlencode({"username": username, "password": password, "csrfmiddlewaretoken": token})
    with opener.open(f"{base}/accounts/login/", data.encode(), timeout=5) as response:
        assert "/accounts/login/" not in response.url, "sign-in failed"
    return opener


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("workers", ["abc", "0", "00", "-1", "2x", " "])
def test_run_local_refuses_a_workers_value_that_starts_no_worker_before_starting_anything(tmp_path, workers):
    env = django_env(PORT=str(free_port()), MLSCHED_VAR_DIR=str(tmp_path / "var"), WORKERS=workers)
    proc = subprocess.Popen([str(ROOT / "bin" / "run-local")], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        _, stderr = proc.communicate(timeout=20)
    finally:  # a script that went on would be serving: stop it and what it started
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    assert proc.returncode == 2 and f"WORKERS='{workers}'" in stderr and "at least 1" in stderr
    assert not (tmp_path / "var").exists()  # nothing migrated, no worker or server started


@pytest.mark.slow
def test_run_local_serves_the_dashboard_and_simulates_the_example_without_any_server(tmp_path):
    port = free_port()
    env = django_env(PORT=str(port), MLSCHED_VAR_DIR=str(tmp_path))
    env.pop("MEDIA_ROOT", None)
    log = open(tmp_path / "run-local.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [str(ROOT / "bin" / "run-local")],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    opener = None
    try:
        status = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                opener = opener or sign_in(base, "lab", "lab")
                with opener.open(f"{base}/experiments/1/status.json", timeout=5) as response:
                    status = json.load(response)
                if status["finished"]:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        assert status and status["finished"], (tmp_path / "run-local.log").read_text()
        assert {r["status"] for r in status["runs"]} == {"done"}
        with opener.open(f"{base}/experiments/1/?tab=gantt", timeout=10) as response:
            assert 'class="gantt"' in response.read().decode()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()
    assert (tmp_path / "db.sqlite3").exists() and (tmp_path / "broker").is_dir()
    with pytest.raises(ProcessLookupError):  # the worker went with the script
        os.killpg(proc.pid, 0)
