"""Shared inputs for the side-by-side runs with the Tiresias authors' simulator.

A window of ../shared/traces/philly/philly.csv goes through our own importer (`python -m scheduling
import --format generic-gpu --slot-seconds 1 --start S --limit N`); the imported trace (arrival
slot, GPUs, duration slots) is then written out again in the authors' trace format, so that both
simulators see the same integers. The cluster is N nodes x G GPUs in both (theirs: one switch,
``--scheme=count`` by default, i.e. GPU counting, which our one-GPU rigid workers reproduce;
``--scheme=yarn`` is our ``placement=consolidated``).

The authors' simulator (github.com/SymbioticLab/Tiresias, simulator/) is run from a checkout
outside this repository with Python 2.7, as its README asks; nothing of it is copied here.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The Philly trace (env PHILLY_CSV overrides, e.g. from a git worktree elsewhere).
PHILLY = Path(os.environ.get("PHILLY_CSV", str(ROOT.parent / "shared" / "traces" / "philly" / "philly.csv")))
OUR_PYTHON = str(ROOT / ".venv" / "bin" / "python")


@dataclass(frozen=True)
class Window:
    name: str
    start: str  # submit datetime of the first job (importer --start)
    jobs: int  # importer --limit
    nodes: int
    gpus_per_node: int


@dataclass(frozen=True)
class Inputs:
    folder: Path
    trace: Path  # ours
    cluster: Path  # ours
    authors_trace: Path
    authors_cluster: Path
    ids: tuple[str, ...]  # our job id of the authors' job k (their job_id column is k)
    load: float  # offered load: sum(GPUs x duration) / (cluster GPUs x span of arrivals)


def build(window: Window, out: Path) -> Inputs:
    """Import the window with our importer and write both simulators' inputs to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    trace = out / "trace.csv"
    subprocess.run(
        [OUR_PYTHON, "-m", "scheduling", "import", "--format", "generic-gpu", "--input", str(PHILLY), "--out",
         str(trace), "--slot-seconds", "1", "--start", window.start, "--limit", str(window.jobs)],
        check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    with trace.open(newline="") as f:
        rows = list(csv.DictReader(f))
    rows.sort(key=lambda r: (int(r["arrival"]), r["job_id"]))  # our engine's order: (arrival, job_id)
    total = window.nodes * window.gpus_per_node
    too_big = [r["job_id"] for r in rows if int(r["gpus"]) > total]
    if too_big:
        raise SystemExit(f"window {window.name}: jobs {too_big[:5]} need more than the cluster's {total} GPUs")
    cluster = out / "cluster.json"
    cluster.write_text(
        json.dumps(
            {
                "slot_seconds": 1,
                "resources": [{"name": "gpu", "unit": "GPU"}],
                "servers": [{"id": "n", "capacity": {"gpu": window.gpus_per_node}, "count": window.nodes}],
                "worker_types": [{"id": "gpu", "demand": {"gpu": 1}}],
            }
        )
    )
    authors_trace = out / "authors_trace.csv"
    with authors_trace.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration", "interval"])
        for k, r in enumerate(rows):
            # Durations are whole seconds in Philly; ours rounds up to slots, theirs truncates: write ours.
            dur = int(-(-float(r["duration"]) // 1))
            w.writerow([k, int(r["gpus"]), int(r["arrival"]), 1, "resnet50", dur, 0])
    authors_cluster = out / "authors_cluster.csv"
    authors_cluster.write_text(
        "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n"
        f"1,{window.nodes},{window.gpus_per_node},64,256\n"
    )
    work = sum(int(r["gpus"]) * float(r["duration"]) for r in rows)
    span = max(1, int(rows[-1]["arrival"]) - int(rows[0]["arrival"]))
    return Inputs(out, trace, cluster, authors_trace, authors_cluster, tuple(r["job_id"] for r in rows),
                  work / (total * span))  # fmt: skip


def python2() -> list[str]:
    """The Python 2.7 interpreter for the authors' simulator (env TIRESIAS_PYTHON2 overrides)."""
    if "TIRESIAS_PYTHON2" in os.environ:
        return os.environ["TIRESIAS_PYTHON2"].split()
    return ["python2.7"]


def authors_cmd(
    checkout: Path, inputs: Inputs, schedule: str, log: Path, scheme: str = "count", fixed: bool = False
) -> tuple[list[str], Path]:
    """Their command line. ``scheme`` is their placement (``count``: GPU counting; ``yarn``: one
    server for a job of up to one server's GPUs, else whole idle servers and one for the rest);
    ``fixed``: through bench/tiresias_run_fixed.py (node memory reset with the cluster, so that
    their preemptive loops under ``yarn`` do not stall)."""
    sim = checkout / "simulator"
    run = [str(ROOT / "bench" / "tiresias_run_fixed.py")] if fixed else []
    cmd = [*python2(), *run, str(sim / "run_sim.py"), f"--cluster_spec={inputs.authors_cluster}", f"--scheme={scheme}",
           f"--trace_file={inputs.authors_trace}", f"--schedule={schedule}", f"--log_path={log}"]  # fmt: skip
    return cmd, sim


def our_cmd(inputs: Inputs, algorithm: str, params: tuple[str, ...], out: Path) -> list[str]:
    cmd = [OUR_PYTHON, "-m", "scheduling", "simulate", "--cluster", str(inputs.cluster), "--trace", str(inputs.trace),
           "--algorithm", algorithm, "--out", str(out)]  # fmt: skip
    for p in params:
        cmd += ["--param", p]
    return cmd


def run_authors(
    checkout: Path, inputs: Inputs, schedule: str, log: Path, scheme: str = "count", fixed: bool = False
) -> dict[str, dict[str, int]]:
    """Run their simulator; per our job id: start, completion, preemptions."""
    cmd, sim = authors_cmd(checkout, inputs, schedule, log, scheme, fixed)
    subprocess.run(cmd, check=True, cwd=sim, stdout=subprocess.DEVNULL)
    out: dict[str, dict[str, int]] = {}
    with (log / "job.csv").open(newline="") as f:
        for r in csv.DictReader(f):
            out[inputs.ids[int(r["job_id"])]] = {
                "start": int(r["start_time"]),
                "completion": int(r["end_time"]),
                "preemptions": int(r["preempt"]),
            }
    return out


def run_ours(inputs: Inputs, algorithm: str, params: tuple[str, ...], out: Path) -> dict[str, dict[str, int]]:
    subprocess.run(our_cmd(inputs, algorithm, params, out), check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    doc = json.loads(out.read_text())
    return {
        j["job_id"]: {"start": j["start"], "completion": j["completion"], "preemptions": j["preemptions"]}
        for j in doc["jobs"]
    }


def prepare(checkout: Path) -> None:
    """Byte-compile our ``scheduling/`` and the authors' ``simulator/`` before anything is timed (an
    installed package runs from bytecode; see bench/tiresias_speed.py), then print the machine and
    our commit."""
    head = subprocess.run(["git", "log", "-1", "--format=%h %s"], check=False, cwd=ROOT, capture_output=True, text=True)
    for compile_cmd in (
        [OUR_PYTHON, "-m", "compileall", "-q", str(ROOT / "scheduling")],
        [*python2(), "-m", "compileall", "-q", str(checkout / "simulator")],
    ):
        subprocess.run(compile_cmd, check=True, stdout=subprocess.DEVNULL)
    print(f"machine: {machine()}")
    print(f"bytecode: compiled before timing (PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')})")
    print(f"ours at commit: {head.stdout.strip()[:100]}")


def machine() -> str:
    load = os.getloadavg()
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores; Python {sys.version.split()[0]}; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (shared machine: other engineers' jobs run too)"
    )
