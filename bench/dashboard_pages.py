"""Benchmark: the dashboard on a real production trace, through the real views (Django test client).

Usage: nice .venv/bin/python bench/dashboard_pages.py [--var DIR] [--algorithms fifo,srtf] [--limit N]

1. the Alibaba node list (../shared/traces/alibaba-openb/) and the full Philly trace
   (../shared/traces/philly/philly.csv, 82,247 jobs) uploaded through the Datasets form, then the
   trace imported and checked against the node list by the background task's body (as a worker
   runs it);
2. the trace's dataset page;
3. an experiment created on the pair through the new-experiment form (library source);
4. its runs simulated by the task body (as a worker runs them), then the JCT and utilisation tabs
   of the experiment page: server time and HTML size.

``--var DIR`` reuses a folder from an earlier run (steps 1-4 skipped when its experiment exists):
pages can be re-measured after a change without simulating again. Prints one line per step.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from dashboard_common import ROOT, configure

SHARED = ROOT.parent / "shared"  # the worktree's ../shared
PHILLY = SHARED / "traces" / "philly" / "philly.csv"
NODES = SHARED / "traces" / "alibaba-openb" / "openb_node_list_gpu_node.csv"


def timed(label: str, fn):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn()
    print(f"{label}: {time.perf_counter() - t:.2f} s", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--var", type=Path, default=None, help="reuse this var folder (made by an earlier run)")
    ap.add_argument("--algorithms", default="fifo,srtf")
    ap.add_argument("--repeat", type=int, default=3, help="loads of each page (median printed)")
    ap.add_argument("--no-runs", action="store_true", help="stop after creating the experiment (no simulation)")
    a = ap.parse_args()
    if a.var is not None:
        a.var.mkdir(parents=True, exist_ok=True)
        os.environ["MLSCHED_VAR_DIR"] = str(a.var)
        os.environ["MEDIA_ROOT"] = str(a.var / "media")
    print(f"load average before: {os.getloadavg()}", flush=True)
    var = configure_in(a.var)
    print(f"var folder: {var}", flush=True)
    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    from webapp.models import Dataset, Experiment, Run, TraceCheck
    from workers.tasks import check_trace, simulate_run

    setup_test_environment()
    user, _ = User.objects.get_or_create(username="bench")
    client = Client()
    client.force_login(user)
    exp = Experiment.objects.filter(name="philly-on-openb").first()
    if exp is None:
        timed(
            "import node list (form POST)",
            lambda: client.post(reverse("datasets"), {"kind": "import-nodes",
                                                      "file": SimpleUploadedFile("openb.csv", NODES.read_bytes())}),
        )  # fmt: skip
        cluster = Dataset.objects.get(owner=user, kind="cluster")
        raw = PHILLY.read_bytes()
        t0 = time.perf_counter()
        timed(
            "upload Philly, 82,247 jobs (form POST: store the raw file, queue its import and check)",
            lambda: client.post(reverse("datasets"), {"kind": "import-gpu", "cluster": cluster.pk,
                                                      "file": SimpleUploadedFile("philly.csv", raw)}),
        )  # fmt: skip
        trace = Dataset.objects.get(owner=user, kind="trace")
        check = TraceCheck.objects.get(trace=trace, cluster=cluster)
        timed("import it and check it against the node list (task body)", lambda: check_trace(check.pk))
        print(f"upload + import + check total: {time.perf_counter() - t0:.2f} s", flush=True)
        check.refresh_from_db()
        assert check.status == "done", check.error
        data = {"source": "library", "cluster_dataset": cluster.pk, "trace_dataset": trace.pk, "seed": 0,
                "name": "philly-on-openb", "algorithms": a.algorithms.split(",")}  # fmt: skip
        response = timed("create an experiment on it (form POST)", lambda: client.post(reverse("experiment-new"), data))
        assert response.status_code == 302, response.content[:2000]
        exp = Experiment.objects.get(name="philly-on-openb")
        if a.no_runs:
            t = time.perf_counter()
            client.get(trace.get_absolute_url())
            print(f"dataset page: {time.perf_counter() - t:.2f} s", flush=True)
            return
        for run in exp.runs.all():
            timed(f"simulate {run.algorithm} (task body)", lambda run=run: simulate_run(run.pk))
            assert Run.objects.get(pk=run.pk).status == "done", Run.objects.get(pk=run.pk).error
    trace = Dataset.objects.get(owner=user, kind="trace")
    pages = {
        "dataset page": trace.get_absolute_url(),
        "JCT tab": exp.get_absolute_url() + "?tab=jct",
        "utilisation tab": exp.get_absolute_url() + "?tab=time",
        "summary tab": exp.get_absolute_url(),
    }
    for label, url in pages.items():
        times, size = [], 0
        for _ in range(a.repeat):
            t = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - t)
            assert response.status_code == 200, label
            size = len(response.content)
        times.sort()
        print(f"{label}: median {times[len(times) // 2]:.2f} s (worst {times[-1]:.2f} s), {size / 1024:.0f} KiB HTML")
    print(f"load average after: {os.getloadavg()}", flush=True)


def configure_in(var: Path | None) -> Path:
    if var is None:
        return configure()
    import django

    os.environ.update(DJANGO_SETTINGS_MODULE="webapp.settings")
    os.environ.pop("REDIS_URL", None)
    os.environ.pop("DATABASE_URL", None)
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("vendor_plotly", verbosity=0)
    return var


if __name__ == "__main__":
    main()
