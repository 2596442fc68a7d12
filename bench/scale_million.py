"""Benchmark: a million jobs on one machine, and the whole Philly trace against a minimal exact replay.

Usage (from the project root):
    PYTHONPATH=. .venv/bin/python bench/scale_million.py million [--jobs 1000000] [--algorithms fifo,srtf]
    PYTHONPATH=. .venv/bin/python bench/scale_million.py philly --trace /tmp/philly/trace.csv [--servers 100]

``million``: writes a rigid trace of ``--jobs`` Philly-shaped jobs (engine_scale.philly_like: 93%
one-GPU, lognormal durations, Poisson arrivals offering 90% of 200 x 8 GPUs, seed 1) as a CSV, then
runs each algorithm as its own ``python -m scheduling simulate`` process (load, simulate, build,
validate, write the result JSON) and reports its wall time, its CPU time (user + system, from
``os.wait4``) and its peak RSS.

``philly``: the imported trace (``python -m scheduling import --format generic-gpu``) on
``--servers`` x 8 GPUs, fifo and srtf, each once by our CLI and once by bench/minimal_replay.py, as
separate processes measured the same way, side by side; then the completions are compared job by
job (every job's completion slot must be equal).

Run under ``nice -n 10`` on a shared machine; compare CPU times, not wall times. Results:
bench/RESULTS.md, "A million jobs on one machine".

The peak RSS that ``os.wait4`` reports for a child includes its parent's high-water RSS at the
time it was started (Linux carries the pre-exec memory's high-water mark into the exec'd
process), so this process starts every measured command before it holds anything large: the
trace is made in a child process, and the result documents are read only after every command has
run.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from engine_scale import philly_like
from paper_speed import measured

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent


def cluster_file(servers: int, out: Path) -> Path:
    path = out / f"cluster-{servers}.json"
    spec = {
        "slot_seconds": 60,
        "resources": ["gpu"],
        "servers": [{"id": "n", "count": servers, "capacity": {"gpu": 8}}],
    }
    path.write_text(json.dumps(spec))
    return path


def write_trace(jobs: int, seed: int, servers: int, path: Path) -> None:
    """The generator's jobs as a plain CSV trace (durations in seconds, whole 60-s slots)."""
    inst = philly_like(jobs, seed, servers)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job_id", "arrival", "gpus", "duration"])
        for j in inst.jobs:
            assert j.duration is not None
            w.writerow([j.job_id, j.arrival, j.gpus, j.duration * 60])


def ours(cluster: Path, trace: Path, algorithm: str, out: Path) -> tuple[int, float, float, float]:
    cmd = ["nice", "-n", "10", sys.executable, "-m", "scheduling", "simulate", "--cluster", str(cluster)]
    cmd += ["--trace", str(trace), "--algorithm", algorithm, "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with out.with_suffix(".err").open("wb") as err:
        return measured(cmd, ROOT, 3600, err, env)


def minimal(trace: Path, servers: int, algorithm: str, out: Path) -> tuple[int, float, float, float]:
    cmd = ["nice", "-n", "10", sys.executable, str(BENCH / "minimal_replay.py"), "--trace", str(trace)]
    cmd += ["--servers", str(servers), "--algorithm", algorithm, "--out", str(out)]
    with out.with_suffix(".err").open("wb") as err:
        return measured(cmd, ROOT, 3600, err)


def completions(result: Path) -> dict[str, int | None]:
    return {j["job_id"]: j["completion"] for j in json.loads(result.read_text())["jobs"]}


def line(label: str, m: tuple[int, float, float, float]) -> str:
    code, cpu, rss, wall = m
    return f"{label}: exit {code}, wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS {rss:.0f} MiB"


def million(a: argparse.Namespace) -> None:
    a.out.mkdir(parents=True, exist_ok=True)
    trace = a.out / f"million-{a.jobs}.csv"
    t0 = time.perf_counter()
    if not trace.exists():  # in a child: this process stays small (module docstring)
        make = [sys.executable, __file__, "trace", "--jobs", str(a.jobs), "--seed", str(a.seed), "--out", str(trace)]
        subprocess.run(make, check=True)
    print(f"trace {trace}: {a.jobs} jobs, made in {time.perf_counter() - t0:.1f} s; load {os.getloadavg()}")
    cluster = cluster_file(200, a.out)
    measures = {}
    for name in a.algorithms.split(","):
        measures[name] = ours(cluster, trace, name, a.out / f"million-{name}.json")
        print(line(f"{name} {a.jobs} jobs", measures[name]) + f"; load {os.getloadavg()}", flush=True)
    for name, m in measures.items():  # the documents read after every run (module docstring)
        out = a.out / f"million-{name}.json"
        doc = json.loads(out.read_text()) if m[0] == 0 else None
        metrics = doc["metrics"] if doc else {}
        del doc
        print(
            f"{name}: result {out.stat().st_size / 2**20:.0f} MiB, completed {metrics.get('completed')}, "
            f"preemptions {metrics.get('preemptions')}, avg JCT {metrics.get('avg_jct')}"
        )


def philly(a: argparse.Namespace) -> None:
    a.out.mkdir(parents=True, exist_ok=True)
    cluster = cluster_file(a.servers, a.out)
    print(f"trace {a.trace} on {a.servers} x 8 GPUs; load {os.getloadavg()}")
    measures = {}
    for name in a.algorithms.split(","):
        mine, ref = a.out / f"philly-{name}.json", a.out / f"philly-{name}-minimal.csv"
        measures[name] = (ours(cluster, a.trace, name, mine), minimal(a.trace, a.servers, name, ref))
    for name, (m_ours, m_ref) in measures.items():  # the documents read after every run (module docstring)
        mine, ref = a.out / f"philly-{name}.json", a.out / f"philly-{name}-minimal.csv"
        got = completions(mine)
        want = {k: int(v) for k, v in (row.strip().split(",") for row in ref.read_text().splitlines())}
        differ = [k for k in got if got[k] != want.get(k)]
        print(line(f"{name} ours (CLI simulate, validated)", m_ours))
        print(line(f"{name} minimal replay", m_ref))
        print(
            f"{name}: CPU ours / minimal = {m_ours[1] / m_ref[1]:.2f}, peak RSS ours / minimal = "
            f"{m_ours[2] / m_ref[2]:.2f}; {len(got)} jobs, completions differ for {len(differ)} {differ[:5]}; "
            f"load {os.getloadavg()}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("million")
    m.add_argument("--jobs", type=int, default=1_000_000)
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--algorithms", default="fifo,srtf")
    t = sub.add_parser("trace")  # (the million trace, made in a child process by ``million``)
    t.add_argument("--jobs", type=int, required=True)
    t.add_argument("--seed", type=int, required=True)
    t.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("philly")
    p.add_argument("--trace", type=Path, required=True)
    p.add_argument("--servers", type=int, default=100)
    p.add_argument("--algorithms", default="fifo,srtf")
    for q in (m, p):
        q.add_argument("--out", type=Path, default=Path("/tmp/scale-million"))
    a = ap.parse_args()
    if a.command == "trace":
        write_trace(a.jobs, a.seed, 200, a.out)
    else:
        million(a) if a.command == "million" else philly(a)


if __name__ == "__main__":
    main()
