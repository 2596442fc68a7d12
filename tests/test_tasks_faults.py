"""Fault tests with real processes: a worker killed in the middle of a run, Redis stopped while a
user submits and started again, and a run cancelled while it simulates.

The killed-worker and Redis tests run everything in subprocesses against a fresh PostgreSQL
database (the worker and the "web" side must share it); the Redis test starts its own
redis-server on a free port and never touches the shared one on 6379.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.test_tasks import ROOT, django_env, free_port, make_run, wait_until_finished
from tests.webhelpers import SLOW
from webapp import services
from webapp.models import Run

TESTS = Path(__file__).resolve().parent

# A worker with the test algorithms registered (solo pool: the process is the one simulating).
# MLSCHED_TEST_SLOW_STORE=<file>: storing a result takes MLSCHED_TEST_SLOW_STORE_SECONDS (60) more
# (as a 200k-job result does on a busy machine), after its file is written; <file> is created when
# it starts. MLSCHED_TEST_SLOW_PREPARE=<file>: a submission's preparation (workers/submissions.py)
# takes 60 s more before it starts cutting; <file> is created then.
WORKER = """
import os, sys, time
import django
django.setup()
from scheduling import registry
from tests.webhelpers import PRICED, SLOW
registry.REGISTRY["slow"] = SLOW
registry.REGISTRY["priced"] = PRICED
if os.environ.get("MLSCHED_TEST_SLOW_STORE"):
    from webapp import runstore
    index = runstore.gantt_index
    def slow_index(result):
        open(os.environ["MLSCHED_TEST_SLOW_STORE"], "w").close()
        time.sleep(float(os.environ.get("MLSCHED_TEST_SLOW_STORE_SECONDS", "60")))
        return index(result)
    runstore.gantt_index = slow_index
if os.environ.get("MLSCHED_TEST_SLOW_PREPARE"):
    from workers import submissions
    prepare = submissions.prepare
    def slow_prepare(data):
        open(os.environ["MLSCHED_TEST_SLOW_PREPARE"], "w").close()
        time.sleep(60)
        return prepare(data)
    submissions.prepare = slow_prepare
from workers.celery import app
app.worker_main(["worker", "--pool=solo", "--loglevel=WARNING", "--without-gossip", "--without-mingle",
                 "--without-heartbeat", "--hostname=" + sys.argv[1]])
"""

# Create an experiment through the same service the form uses; print its id and how long the
# submission took (broker unreachable -> it must still return quickly and keep the runs).
SUBMIT = """
import json, sys, time
import django
django.setup()
from scheduling import registry
from tests.webhelpers import SLOW
registry.REGISTRY["slow"] = SLOW
from django.contrib.auth.models import User
from webapp import services
from webapp.management.commands.load_examples import example
runs = json.loads(sys.argv[1])
sub = example("demo")
user, _ = User.objects.get_or_create(username="fault")
t = time.monotonic()
sub = type(sub)(name="fault", inputs=sub.inputs, seed=0, runs=[tuple(r) for r in runs])
exp = services.create_experiment(sub, user)
exp.refresh_from_db()
print(json.dumps({"id": exp.pk, "seconds": time.monotonic() - t, "pending": exp.pending_dispatch}))
"""

STATUS = """
import json, sys
import django
django.setup()
from webapp import services
from webapp.models import Experiment
from scheduling.validator import validate
from workers.runs import load_instance
exp = Experiment.objects.get(pk=int(sys.argv[1]))
out = services.status(exp)
instance = load_instance(exp.cluster_text, exp.cluster_name, exp.trace_text, exp.trace_name)
for r, row in zip(exp.runs.all(), out["runs"]):
    row["problems"] = validate(instance, services.load_result(r)) if r.status == "done" else None
print(json.dumps(out))
"""

# What /healthz and the admin's table of workers that cannot store say.
PROBLEMS = """
import json
import django
django.setup()
from django.test import Client
from webapp.models import WorkerProblem
health = Client().get("/healthz", HTTP_HOST="localhost").json()
print(json.dumps({"healthz": health, "problems": list(WorkerProblem.objects.values_list("worker", "problem"))}))
"""


class Env:
    def __init__(self, tmp_path, database_url, redis_url, **extra):
        self.tmp = tmp_path
        self.env = django_env(
            DATABASE_URL=database_url,
            REDIS_URL=redis_url,
            MLSCHED_QUEUE=f"mlsched-faults-{os.getpid()}-{time.monotonic_ns()}",
            # Results as files under MEDIA_ROOT: these tests fill, refuse and count them (the database
            # storage, the default, is what tests/test_multihost.py runs).
            MLSCHED_STORAGE="filesystem",
            MEDIA_ROOT=str(tmp_path / "media"),
            MLSCHED_VAR_DIR=str(tmp_path / "var"),
            MLSCHED_HEARTBEAT="0.5",
            MLSCHED_HEARTBEAT_TIMEOUT="3",
            MLSCHED_RECOVER_EVERY="0",
            MLSCHED_BROKER_TIMEOUT="1",
            **extra,
        )
        self.workers = []

    def python(self, code, *args, timeout=60):
        out = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=ROOT, env=self.env,
                             capture_output=True, text=True, timeout=timeout, check=False)  # fmt: skip
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    def manage(self, *args, timeout=60):
        out = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True,
                             text=True, timeout=timeout, check=False)  # fmt: skip
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout

    def worker(self, name, cwd=ROOT, **extra):
        log = open(self.tmp / f"{name}.log", "w")  # noqa: SIM115
        proc = subprocess.Popen([sys.executable, "-c", WORKER, f"{name}-{os.getpid()}@%h"], cwd=cwd,
                                env={**self.env, **extra}, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        self.workers.append((proc, log))
        return proc

    def stop_workers(self):
        for proc, log in self.workers:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
            log.close()

    def wait(self, exp_id, predicate, timeout=60, recover=True):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if recover:
                self.manage("recover_runs")
            status = self.python(STATUS, exp_id)
            if predicate(status):
                return status
            time.sleep(0.5)
        raise AssertionError(f"timed out; last status {status}")


def slow_run(status):
    return next(r for r in status["runs"] if r["algorithm"] == "slow")


@pytest.mark.redis
@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_killed_mid_run_is_replaced_and_the_run_completes_on_its_second_attempt(tmp_path, postgres_db):
    env = Env(tmp_path, postgres_db, "redis://127.0.0.1:6379/15")
    env.manage("migrate", "--noinput")
    try:
        first = env.worker("doomed")
        sub = env.python(SUBMIT, json.dumps([["slow", {"delay": 0.05}], ["fifo", {}]]))
        running = env.wait(sub["id"], lambda s: slow_run(s)["status"] == "running", recover=False)
        assert slow_run(running)["attempts"] == 1
        time.sleep(1.0)  # it has progressed (heartbeats written)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        env.worker("replacement")
        done = env.wait(sub["id"], lambda s: s["finished"], timeout=120)
    finally:
        env.stop_workers()
    slow = slow_run(done)
    assert slow["status"] == "done" and slow["attempts"] == 2 and slow["problems"] == []
    assert {r["status"] for r in done["runs"]} == {"done"}


@pytest.mark.redis
@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_killed_while_storing_is_left_alone_until_then_and_the_run_is_stored_once(tmp_path, postgres_db):
    env = Env(tmp_path, postgres_db, "redis://127.0.0.1:6379/15")  # heartbeat timeout 3 s
    env.manage("migrate", "--noinput")
    storing = tmp_path / "storing"
    try:
        first = env.worker("storing", MLSCHED_TEST_SLOW_STORE=str(storing))
        sub = env.python(SUBMIT, json.dumps([["fifo", {}]]))
        deadline = time.monotonic() + 60
        while not storing.exists():
            assert time.monotonic() < deadline, (tmp_path / "storing.log").read_text()
            time.sleep(0.2)
        # Storing for longer than the heartbeat timeout: recovery must see a live run.
        until = time.monotonic() + 5
        while time.monotonic() < until:
            env.manage("recover_runs")
        alive = env.python(STATUS, sub["id"])["runs"][0]
        first.send_signal(signal.SIGKILL)  # killed before the run is marked done
        first.wait(timeout=10)
        env.worker("replacement")
        done = env.wait(sub["id"], lambda s: s["finished"], timeout=120)
    finally:
        env.stop_workers()
    assert (alive["status"], alive["attempts"], alive["error"]) == ("running", 1, "")
    (run,) = done["runs"]
    files = sorted(p.name for p in (tmp_path / "media" / "results").rglob("*") if p.is_file())
    status = run["status"]
    counts = {"started": run["attempts"], "finished": int(status == "done"), "failed": int(status == "failed"),
              "result files": len(files)}  # fmt: skip
    # The first attempt died before recording: the run is simulated again once, stored once, and
    # the killed attempt's half-written files are gone.
    assert counts == {"started": 2, "finished": 1, "failed": 0, "result files": 3}, (counts, files)
    assert run["problems"] == []


@pytest.mark.redis
@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_that_cannot_store_takes_no_runs_says_so_and_another_worker_runs_them(tmp_path, postgres_db):
    env = Env(tmp_path, postgres_db, "redis://127.0.0.1:6379/15")
    env.manage("migrate", "--noinput")
    refused = f"/sys/mlsched-results-{os.getpid()}"  # sysfs: the kernel refuses every new file (EPERM)
    name = f"readonly-{os.getpid()}"
    try:
        readonly = env.worker("readonly", MEDIA_ROOT=refused)
        deadline = time.monotonic() + 60
        while not (report := env.python(PROBLEMS))["problems"]:  # its probe when it is ready
            assert time.monotonic() < deadline, (tmp_path / "readonly.log").read_text()[-3000:]
            time.sleep(0.5)
        sub = env.python(SUBMIT, json.dumps([["fifo", {}], ["drf", {}]]))
        time.sleep(3)
        waiting = env.python(STATUS, sub["id"])["runs"]  # nobody took them
        env.worker("healthy")
        done = env.wait(sub["id"], lambda s: s["finished"], timeout=120)
        still_up = readonly.poll() is None
    finally:
        env.stop_workers()
    ((worker, problem),) = report["problems"]
    assert worker.startswith(name + "@") and problem.startswith("cannot store results: PermissionError")
    assert report["healthz"] == {"ok": True, "workers_unable_to_store": [worker]}
    assert [(r["status"], r["attempts"]) for r in waiting] == [("queued", 0), ("queued", 0)]
    log = (tmp_path / "readonly.log").read_text()
    assert still_up and log.count("it takes no runs") == 1
    runs = done["runs"]
    counts = {"started": sum(r["attempts"] for r in runs), "finished": sum(r["status"] == "done" for r in runs),
              "failed": sum(r["status"] == "failed" for r in runs)}  # fmt: skip
    assert counts == {"started": 2, "finished": 2, "failed": 0}, runs
    assert all(r["problems"] == [] for r in runs)


@pytest.mark.redis
@pytest.mark.postgres
@pytest.mark.slow
def test_a_run_whose_worker_is_killed_on_its_last_attempt_fails_with_the_reason(tmp_path, postgres_db):
    env = Env(tmp_path, postgres_db, "redis://127.0.0.1:6379/15", MLSCHED_MAX_ATTEMPTS="1")
    env.manage("migrate", "--noinput")
    try:
        worker = env.worker("doomed-once")
        sub = env.python(SUBMIT, json.dumps([["slow", {"delay": 0.05}]]))
        env.wait(sub["id"], lambda s: slow_run(s)["status"] == "running", recover=False)
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
        done = env.wait(sub["id"], lambda s: s["finished"], timeout=60)
    finally:
        env.stop_workers()
    slow = slow_run(done)
    assert slow["status"] == "failed"
    assert slow["error"].startswith("lost: the worker stopped or was killed during attempt 1 of 1")


@pytest.mark.postgres
@pytest.mark.slow
def test_redis_stopped_while_submitting_keeps_the_experiment_and_runs_it_when_back(tmp_path, postgres_db):
    port = free_port()
    redis_cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]

    def start_redis():
        proc = subprocess.Popen(redis_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(50):
            ping = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True, check=False)
            if ping.stdout.strip() == "PONG":
                return proc
            time.sleep(0.1)
        raise AssertionError("redis-server did not start")

    env = Env(tmp_path, postgres_db, f"redis://127.0.0.1:{port}/0")
    env.manage("migrate", "--noinput")
    redis = start_redis()
    try:
        redis.terminate()
        redis.wait(timeout=10)
        sub = env.python(SUBMIT, json.dumps([["fifo", {}], ["drf", {}], ["srtf", {}]]))
        assert sub["pending"] is True and sub["seconds"] < 10
        waiting = env.python(STATUS, sub["id"])
        assert waiting["waiting_for_broker"] and {r["status"] for r in waiting["runs"]} == {"queued"}
        env.manage("recover_runs")  # still down: nothing lost, nothing sent
        assert env.python(STATUS, sub["id"])["waiting_for_broker"]

        redis = start_redis()
        env.worker("after-restart")
        done = env.wait(sub["id"], lambda s: s["finished"], timeout=90)
    finally:
        env.stop_workers()
        redis.terminate()
        redis.wait(timeout=10)
    assert not done["waiting_for_broker"]
    assert [(r["algorithm"], r["status"], r["problems"]) for r in done["runs"]] == [
        ("fifo", "done", []), ("drf", "done", []), ("srtf", "done", [])
    ]  # fmt: skip


@pytest.fixture
def silent_broker():
    """The URL of a server that accepts connections and never answers (a hung Redis, a firewall
    that drops replies): a real socket, served by a thread of the test."""
    server = socket.create_server(("127.0.0.1", 0))
    held = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"redis://127.0.0.1:{server.getsockname()[1]}/7"
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        server.close()


@pytest.mark.postgres
@pytest.mark.slow
def test_a_broker_that_never_answers_delays_a_submission_and_a_recovery_by_the_broker_timeout_only(
    tmp_path, postgres_db, silent_broker
):
    env = Env(tmp_path, postgres_db, silent_broker)  # MLSCHED_BROKER_TIMEOUT=1
    env.manage("migrate", "--noinput")
    sub = env.python(SUBMIT, json.dumps([["fifo", {}], ["drf", {}]]), timeout=30)
    assert sub["pending"] is True and sub["seconds"] < 5
    started = time.monotonic()
    env.manage("recover_runs", timeout=30)  # what a page load does: tries to send them again
    assert time.monotonic() - started < 10
    waiting = env.python(STATUS, sub["id"])
    assert waiting["waiting_for_broker"] and {r["status"] for r in waiting["runs"]} == {"queued"}


@pytest.mark.redis
@pytest.mark.slow
def test_a_cancelled_run_stops_within_seconds(redis_worker, settings, monkeypatch, tiny_cluster, tiny_trace):
    from scheduling import registry

    monkeypatch.setitem(registry.REGISTRY, "slow", SLOW)
    settings.MLSCHED_HEARTBEAT = 0.3
    run = make_run(tiny_cluster, tiny_trace, "slow", delay=0.5)  # 16 decisions: 8 s unless cancelled
    services.enqueue(run.pk)
    deadline = time.monotonic() + 30
    while Run.objects.get(pk=run.pk).status != "running":
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.05)
    time.sleep(1.0)
    services.cancel(run.experiment, run)
    asked = time.monotonic()
    run = wait_until_finished(run, timeout=30)
    stopped_after = time.monotonic() - asked
    assert run.status == "cancelled" and run.error == "cancelled by the user"
    assert stopped_after < 3.0, f"took {stopped_after:.1f} s to stop"
    assert 0 < run.progress < 1 and not run.result
