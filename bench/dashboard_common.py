"""Shared set-up of the dashboard benchmarks: a throw-away dashboard (own var/ folder, SQLite
unless --database-url), experiments with simulated runs, gunicorn on a free port.

Import this module before Django: it points the settings at the temporary folder.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def configure(database_url: str | None = None) -> Path:
    """Environment for Django in this process and in gunicorn: a temporary var/ and media folder."""
    var = Path(tempfile.mkdtemp(prefix="mlsched-bench-"))
    os.environ.update(DJANGO_SETTINGS_MODULE="webapp.settings", MLSCHED_VAR_DIR=str(var), MEDIA_ROOT=str(var / "media"))
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key")  # required with DEBUG off
    os.environ.pop("REDIS_URL", None)
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    else:
        os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("vendor_plotly", verbosity=0)
    return var


def rigid_inputs(jobs: int, servers: int, seed: int = 1) -> tuple[str, str]:
    """Cluster spec and CSV trace of Philly-shaped rigid jobs (bench/engine_scale.py's generator)."""
    from engine_scale import philly_like

    inst = philly_like(jobs, seed, servers)
    slot = inst.cluster.slot_seconds
    cluster = {"slot_seconds": slot, "resources": ["gpu"],
               "servers": [{"id": "n", "count": servers, "capacity": {"gpu": 8}}]}  # fmt: skip
    # The trace's ``duration`` column is read in seconds (docs/formats.md); the generator counts slots.
    rows = ["job_id,arrival,gpus,duration"] + [
        f"{j.job_id},{j.arrival},{j.gpus},{(j.duration or 0) * slot:g}" for j in inst.jobs
    ]
    return json.dumps(cluster), "\n".join(rows) + "\n"


def experiment(user, name: str, cluster: str, trace: str, algorithms: list[str]):  # type: ignore[no-untyped-def]
    """An experiment whose runs are simulated here, by the task body itself (no broker needed)."""
    from webapp import services
    from webapp.models import Run
    from workers.tasks import simulate_run

    sub = services.Submission(
        name=name,
        inputs=services.Inputs("upload", "cluster.json", cluster, "trace.csv", trace),
        runs=[(a, {}) for a in algorithms],
        seed=0,
    )
    exp = services.create_experiment(sub, user)
    for run in exp.runs.all():
        t = time.perf_counter()
        assert simulate_run(run.pk) == "done", Run.objects.get(pk=run.pk).error
        print(f"  {name}: {run.algorithm} simulated in {time.perf_counter() - t:.1f} s", flush=True)
    return exp


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def gunicorn(workers: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-m", "gunicorn", "webapp.wsgi", "--bind", f"127.0.0.1:{port}", "--workers",
           str(workers), "--timeout", "300", "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env=os.environ.copy(), stdout=log.open("w"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=2).read()
            return proc, base
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"gunicorn did not start: {log.read_text()}")


def session_cookie(user) -> str:  # type: ignore[no-untyped-def]
    from django.test import Client

    c = Client()
    c.force_login(user)
    return f"sessionid={c.cookies['sessionid'].value}"
