"""Wall and CPU time of short CLI commands (start-up dominated): `--help`, `algorithms --json`,
`validate` and `simulate --algorithm fifo` on a demo trace (20 jobs, or `--jobs N`), and with
`--philly N` `simulate --algorithm fifo` on the first N jobs of the Philly trace imported
(../shared/traces/philly/philly.csv) on the `asrpt` preset's cluster; each run as a fresh process.
CPU time is the child's user + system time (getrusage), less sensitive to other load than wall time.

Usage: python bench/cli_startup.py [--repeat 15] [--jobs 20] [--philly 300] [--root DIR ...]

Each --root is a checkout of this repository (default: this one); giving two (e.g. a checkout of
an earlier commit and this one) measures them side by side, interleaved run by run, so that load
from other processes falls on both alike. Prints the median and min per command and root as a
Markdown table; record it in bench/RESULTS.md with the machine, date and load average. Each root's
``scheduling/`` is byte-compiled first (``compileall``), so that every root runs from bytecode even
where PYTHONDONTWRITEBYTECODE keeps processes from writing ``__pycache__``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


PHILLY = HERE.parent / "shared" / "traces" / "philly" / "philly.csv"


def commands(data: Path, jobs: int, philly: int) -> dict[str, list[str]]:
    out = {
        "--help": ["--help"],
        "algorithms --json": ["algorithms", "--json"],
        f"validate ({jobs} jobs)": [
            "validate",
            "--cluster",
            str(data / "cluster.json"),
            "--trace",
            str(data / "trace.csv"),
        ],
        f"simulate --algorithm fifo ({jobs} jobs)": [
            "simulate",
            "--cluster",
            str(data / "cluster.json"),
            "--trace",
            str(data / "trace.csv"),
            "--algorithm",
            "fifo",
            "--out",
            str(data / "result.json"),
        ],
    }
    if philly:
        out[f"simulate --algorithm fifo (Philly, {philly} jobs)"] = [
            "simulate",
            "--cluster",
            str(data / "asrpt" / "cluster.json"),
            "--trace",
            str(data / "philly.csv"),
            "--algorithm",
            "fifo",
            "--out",
            str(data / "philly-result.json"),
        ]
    return out


def timed(root: Path, argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh ``python -m scheduling ARGV`` process."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "scheduling", *argv], cwd=root, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def scheduling(root: Path, *argv: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(root)}
    subprocess.run([sys.executable, "-m", "scheduling", *argv], cwd=root, env=env, check=True, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--root", action="append", type=Path, default=[])
    ap.add_argument("--jobs", type=int, default=20, help="jobs of the demo trace")
    ap.add_argument("--philly", type=int, default=0, help="also simulate the first N Philly jobs")
    ap.add_argument("--philly-trace", type=Path, default=PHILLY, help=f"the raw Philly trace (default {PHILLY})")
    args = ap.parse_args()
    roots = [r.resolve() for r in args.root] or [HERE]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        scheduling(roots[-1], "generate", "--preset", "demo", "--jobs", str(args.jobs), "--out", tmp)
        if args.philly:
            scheduling(roots[-1], "generate", "--preset", "asrpt", "--jobs", "1", "--out", str(data / "asrpt"))
            raw = ["--format", "generic-gpu", "--input", str(args.philly_trace), "--out", str(data / "philly.csv")]
            scheduling(roots[-1], "import", *raw, "--limit", str(args.philly))
        cmds = commands(data, args.jobs, args.philly)
        times: dict[tuple[str, Path], list[tuple[float, float]]] = {(c, r): [] for c in cmds for r in roots}
        for root in roots:  # compile, then warm the file cache
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "scheduling")], check=True)
            for argv in cmds.values():
                timed(root, argv)
        for _ in range(args.repeat):
            for name, argv in cmds.items():
                for root in roots:
                    times[(name, root)].append(timed(root, argv))
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print("| command | root | wall median s | wall min s | CPU median s | CPU min s |")
    print("|---|---|---|---|---|---|")
    for (name, root), values in times.items():
        wall, cpu = [w for w, _ in values], [c for _, c in values]
        print(
            f"| `{name}` | {root} | {statistics.median(wall):.3f} | {min(wall):.3f} | "
            f"{statistics.median(cpu):.3f} | {min(cpu):.3f} |"
        )


if __name__ == "__main__":
    main()
