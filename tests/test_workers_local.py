"""The server-less filesystem broker of ``make run`` (kombu's filesystem transport under
``$MLSCHED_VAR_DIR/broker``) feeding several worker processes: messages taken once each, and two
tasks running at the same time, whether the processes are separate solo-pool workers or one
prefork pool."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
WAIT = 60  # seconds a probe waits for its partner: far beyond any start-up lag on a loaded machine

SEND = """
import sys
from tests.broker_probe import meet
folder = sys.argv[1]
meet.delay("a", "b", folder, float(sys.argv[2]))
meet.delay("b", "a", folder, float(sys.argv[2]))
"""


def local_env(var):
    """The environment of ``make run`` without REDIS_URL / DATABASE_URL: the filesystem broker."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "MLSCHED_QUEUE")}
    return {**env, "DJANGO_SETTINGS_MODULE": "webapp.settings", "PYTHONPATH": str(ROOT), "MLSCHED_VAR_DIR": str(var)}


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@pytest.mark.parametrize(
    "pools",
    [
        pytest.param([["--pool=solo"], ["--pool=solo"]], id="two solo workers"),
        pytest.param([["--pool=prefork", "--concurrency=2"]], id="one prefork worker of two processes"),
    ],
)
def test_the_filesystem_broker_runs_two_tasks_side_by_side_each_once(tmp_path, pools):
    env = local_env(tmp_path / "var")
    marks = tmp_path / "marks"
    marks.mkdir()
    workers, logs = [], []
    try:
        for i, pool in enumerate(pools):
            log = tmp_path / f"worker-{i}.log"
            logs.append(log)
            cmd = [sys.executable, "-m", "celery", "-A", "workers", "worker", *pool, "-I", "tests.broker_probe",
                   "--loglevel=INFO", "--without-gossip", "--without-mingle", "--without-heartbeat",
                   f"--hostname=probe-{os.getpid()}-{i}@%h"]  # fmt: skip
            with open(log, "w") as out:
                workers.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT))
        # Both consumers listen before the two messages exist: neither can have taken both.
        wait_for(lambda: all(" ready." in log.read_text() for log in logs), 120, "the workers to start")
        subprocess.run([sys.executable, "-c", SEND, str(marks), str(WAIT)], cwd=ROOT, env=env, check=True)
        ends = ("a.met", "a.alone", "b.met", "b.alone")
        wait_for(lambda: sum((marks / e).exists() for e in ends) == 2, 2 * WAIT + 30, "both probes to end")
        time.sleep(3)  # a message delivered twice would have started again by now (1 s polling)
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.wait(timeout=60)
    outcome = sorted(p.name for p in marks.iterdir())
    assert outcome == ["a", "a.met", "b", "b.met"], "\n".join(log.read_text() for log in logs)
    starts = [(marks / name).read_text().split() for name in ("a", "b")]
    assert [len(s) for s in starts] == [1, 1]  # each message executed once
    assert starts[0] != starts[1]  # by two processes
