"""Hostile inputs: time to the loader's answer, this checkout's loaders beside an earlier revision's
(default ``main``, loaded from git), on the same generated files. Markdown to stdout;
docs/security.md records a run.

    PYTHONPATH=. python bench/hostile_inputs.py [--n 20000] [--old-rev main] [--old-timeout 120]

The earlier revision runs in a subprocess with a time limit: a quadratic check on a large file may
take minutes ("> limit" in the table).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BASE = {
    "slot_seconds": 60,
    "resources": ["gpu", "cpu", "bw"],
    "servers": [{"id": "s", "count": 2, "capacity": {"gpu": 4, "cpu": 16, "bw": 20}}],
    "worker_types": [{"id": "w1", "demand": {"gpu": 1, "cpu": 2, "bw": 1}}],
    "ps_types": [{"id": "p1", "demand": {"cpu": 2, "bw": 5}}],
}


def cases(n: int) -> dict[str, tuple[str, str, str]]:
    """name -> (what, cluster text, trace text or "" for a cluster-only case)."""
    plain = json.dumps(BASE)
    wide = ",".join(["job_id", "arrival", *(f"c{i}" for i in range(n)), f"c{n - 1}"]) + "\n"
    resources = json.dumps({**BASE, "resources": [f"r{i}" for i in range(n)] + [f"r{n - 1}"]})
    servers = [{"id": f"s{i}", "capacity": {"gpu": 1}} for i in range(n)] + [
        {"id": f"s{n - 1}", "capacity": {"gpu": 1}}
    ]
    types = [{"id": f"w{i}", "demand": {"gpu": 1}} for i in [*range(n), n - 1]]
    big = {**BASE, "servers": [{"id": "s", "count": n, "capacity": {"gpu": 4, "cpu": 16, "bw": 20}}]}
    job = {"arrival": 0, "arch": "allreduce", "batch_time": 6, "upload_delay": {"s-1": 1}}
    rows = [{"job_id": f"j{i}", **job} for i in range(2_000)]
    return {
        "wide-header": (f"CSV header of {n + 3:,} columns, last one repeated", plain, wide),
        "resources": (f"{n + 1:,} resources, last one repeated", resources, ""),
        "servers": (f"{n + 1:,} servers, last id repeated", json.dumps({**BASE, "servers": servers}), ""),
        "types": (f"{n + 1:,} worker types, last id repeated", json.dumps({**BASE, "worker_types": types}), ""),
        "delays": (f"2,000 jobs naming servers of a {n:,}-server cluster", json.dumps(big), json.dumps(rows)),
        "deep-json": ("JSON nested 100,000 deep", "[" * 100_000 + "]" * 100_000, ""),
        "big-number": ("a number of 1,000,000 digits", '{"slot_seconds": ' + "9" * 1_000_000 + "}", ""),
    }


RUNNER = """
import importlib.util, json, sys, time
spec = importlib.util.spec_from_file_location("loaders_under_test", sys.argv[1])
loaders = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = loaders  # dataclasses look their module up
spec.loader.exec_module(loaders)
cluster_text, trace_text = json.load(open(sys.argv[2]))
began = time.perf_counter()
try:
    cluster = loaders.parse_cluster(cluster_text, "c.json")
    if trace_text:
        fmt = "json" if trace_text.startswith("[") else "csv"
        loaders.parse_trace(trace_text, cluster, "t." + fmt, fmt)
    answer = "loaded"
except Exception as exc:
    answer = f"{type(exc).__name__}: {exc}"
print(json.dumps({"seconds": time.perf_counter() - began, "answer": answer[:160]}))
"""


def measure(loaders_file: Path, cluster: str, trace: str, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "case.json"
        data.write_text(json.dumps([cluster, trace]))
        try:
            out = subprocess.run(
                [sys.executable, "-c", RUNNER, str(loaders_file), str(data)],
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                check=False,
            )
        except subprocess.TimeoutExpired:
            return {"seconds": None, "answer": f"no answer within {timeout:g} s"}
    if out.returncode != 0:
        return {"seconds": None, "answer": out.stderr.strip().splitlines()[-1][:160]}
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def old_loaders(rev: str, folder: Path) -> Path:
    source = subprocess.run(
        ["git", "show", f"{rev}:scheduling/loaders.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    path = folder / "loaders_old.py"
    path.write_text(source)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--old-rev", default="main")
    parser.add_argument("--old-timeout", type=float, default=120.0)
    args = parser.parse_args()
    fmt: Callable[[dict[str, Any]], str] = lambda r: "—" if r["seconds"] is None else f"{r['seconds']:.2f} s"  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        old = old_loaders(args.old_rev, Path(tmp))
        new = ROOT / "scheduling" / "loaders.py"
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        print(f"Machine: {platform.node()} ({os.cpu_count()} cores), {when}, load average {os.getloadavg()[0]:.1f}\n")
        print(f"| input | {args.old_rev} | this branch | answer (this branch) |")
        print("|---|---|---|---|")
        for what, cluster, trace in cases(args.n).values():
            before = measure(old, cluster, trace, args.old_timeout)
            after = measure(new, cluster, trace, args.old_timeout)
            shown_before = fmt(before) if before["seconds"] is not None else before["answer"]
            print(f"| {what} | {shown_before} | {fmt(after)} | {after['answer'].replace('|', '/')} |", flush=True)
        print(f"\nLoad average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
