"""PostgreSQL stopped for longer than a worker's first retries, while the worker stores a finished
run, then started again: the run is recorded once by that worker (not simulated again), and the
recovery loop goes on. Everything runs against a PostgreSQL server of the test's own (initdb on a
free port, run as the ``postgres`` user), never the shared one."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.test_recover_command import Output
from tests.test_tasks import ROOT, free_port
from tests.test_tasks_faults import STATUS, SUBMIT, Env

pytestmark = [pytest.mark.redis, pytest.mark.slow]


class Postgres:
    """A private PostgreSQL server (trust authentication on 127.0.0.1)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="mlsched-pg-"))
        user = pwd.getpwnam("postgres")
        os.chown(self.dir, user.pw_uid, user.pw_gid)
        self.data = self.dir / "data"
        self.run("initdb", "-A", "trust", "-U", "postgres", "-D", str(self.data))
        self.start()

    def run(self, *args: str) -> None:
        out = subprocess.run(["runuser", "-u", "postgres", "--", *args], capture_output=True, text=True,
                             check=False, timeout=120)  # fmt: skip
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]

    def start(self) -> None:
        options = f"-p {self.port} -h 127.0.0.1 -k {self.dir} -c fsync=off"
        self.run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"), "-w", "start")

    def stop(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def remove(self) -> None:
        with contextlib.suppress(AssertionError):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def postgres():
    if shutil.which("initdb") is None or shutil.which("runuser") is None:
        pytest.skip("needs PostgreSQL's initdb and runuser")
    server = Postgres()
    try:
        yield server
    finally:
        server.remove()


def test_postgresql_down_while_a_result_is_stored_delays_it_and_nothing_is_lost_or_redone(tmp_path, postgres):
    env = Env(tmp_path, postgres.url(), "redis://127.0.0.1:6379/15", MLSCHED_STORE_BACKOFF="0.5")
    env.manage("migrate", "--noinput")
    storing = tmp_path / "storing"
    recover = Output(tmp_path / "recover.log")
    with open(recover.path, "w") as out:
        loop = subprocess.Popen([sys.executable, "manage.py", "recover_runs", "--every", "0.5"], cwd=ROOT,
                                env=env.env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        env.worker("storing", MLSCHED_TEST_SLOW_STORE=str(storing), MLSCHED_TEST_SLOW_STORE_SECONDS="3")
        sub = env.python(SUBMIT, json.dumps([["fifo", {}]]))
        deadline = time.monotonic() + 60
        while not storing.exists():
            assert time.monotonic() < deadline, (tmp_path / "storing.log").read_text()[-3000:]
            time.sleep(0.2)
        postgres.stop()  # the worker's writes of the outcome fail from now on
        time.sleep(10)  # longer than the first retries (1 + 2 + 4 s) a worker used to wait
        postgres.start()
        done = env.wait(sub["id"], lambda s: s["finished"], timeout=90, recover=False)
        seen = len(recover.lines())
        recover.wait_for_more(seen)  # the recovery loop went through the restart
        assert loop.poll() is None, recover.path.read_text()[-3000:]
    finally:
        loop.terminate()
        loop.wait(timeout=20)
        env.stop_workers()
    (run,) = done["runs"]
    assert (run["status"], run["attempts"], run["problems"]) == ("done", 1, [])
    assert env.python(STATUS, sub["id"])["runs"][0]["status"] == "done"
