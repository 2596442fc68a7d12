"""``manage.py recover_runs --every N`` keeps running through database and broker restarts, and
``bin/supervise`` (which ``make run`` starts it with) starts it again if it exits anyway. Real
processes: the command against a fresh PostgreSQL database and a redis-server of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests.test_tasks import POSTGRES_SERVER, ROOT, django_env, free_port

pytestmark = [pytest.mark.slow]


class Output:
    """The lines a process printed so far (its stdout is a file)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def lines(self) -> list[str]:
        return self.path.read_text().splitlines() if self.path.exists() else []

    def wait_for_more(self, than: int, timeout: float = 30) -> list[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(lines := self.lines()) > than:
                return lines
            time.sleep(0.2)
        raise AssertionError(f"no new line after {than}: {self.lines()[-5:]}")


def start_redis(port: int) -> subprocess.Popen:
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    for _ in range(50):
        ping = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True, check=False)
        if ping.stdout.strip() == "PONG":
            return proc
        time.sleep(0.1)
    raise AssertionError("redis-server did not start")


def drop_connections(database_url: str) -> int:
    """What a PostgreSQL restart does to the command's connection: the server ends it."""
    name = database_url.rsplit("/", 1)[1]
    with psycopg.connect(f"{POSTGRES_SERVER}/test", autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        ).fetchall()
    return len(rows)


@pytest.mark.redis
@pytest.mark.postgres
def test_the_recovery_loop_survives_a_database_restart_and_a_broker_restart(tmp_path, postgres_db):
    port = free_port()
    env = django_env(DATABASE_URL=postgres_db, REDIS_URL=f"redis://127.0.0.1:{port}/0",
                     MLSCHED_VAR_DIR=str(tmp_path / "var"), MEDIA_ROOT=str(tmp_path / "media"),
                     MLSCHED_BROKER_TIMEOUT="1")  # fmt: skip
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
                   capture_output=True)  # fmt: skip
    redis = start_redis(port)
    out, err = Output(tmp_path / "out.log"), tmp_path / "err.log"
    with open(out.path, "w") as stdout, open(err, "w") as stderr:
        proc = subprocess.Popen([sys.executable, "manage.py", "recover_runs", "--every", "0.3"], cwd=ROOT, env=env,
                                stdout=stdout, stderr=stderr)  # fmt: skip
    try:
        seen = len(out.wait_for_more(0))
        assert drop_connections(postgres_db) >= 1  # its persistent connection (CONN_MAX_AGE) is cut
        seen = len(out.wait_for_more(seen))
        redis.terminate()
        redis.wait(timeout=10)
        time.sleep(1.5)  # passes with the broker down
        redis = start_redis(port)
        seen = len(out.wait_for_more(seen))
        assert proc.poll() is None, err.read_text()[-3000:]
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        redis.terminate()
        redis.wait(timeout=10)
    assert out.lines()[-1].startswith("requeued=0 failed=0 cancelled=0 dispatched=0 resent=0")


def test_supervise_starts_a_command_again_when_it_exits_and_stops_it_on_sigterm(tmp_path):
    pids = tmp_path / "pids"
    child = f"import os, time; open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n'); time.sleep(0.3)"
    env = {**os.environ, "SUPERVISE_PAUSE": "0.1"}
    proc = subprocess.Popen([str(ROOT / "bin" / "supervise"), sys.executable, "-c", child], env=env,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while len(pids.read_text().split() if pids.exists() else []) < 3:
            assert time.monotonic() < deadline, "the command was not started again"
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "exited with status 0; starting it again" in stderr
    for pid in map(int, pids.read_text().split()):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # nothing left running


def test_supervise_passes_sigterm_to_a_long_running_command(tmp_path):
    started = tmp_path / "started"
    child = f"import time; open({str(started)!r}, 'w').write('1'); time.sleep(60)"
    proc = subprocess.Popen([str(ROOT / "bin" / "supervise"), sys.executable, "-c", child])
    deadline = time.monotonic() + 20
    while not started.exists():
        assert time.monotonic() < deadline
        time.sleep(0.1)
    t = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    assert time.monotonic() - t < 5
    ps = subprocess.run(["pgrep", "-f", str(started)], capture_output=True, text=True, check=False)
    assert ps.stdout.strip() == ""
