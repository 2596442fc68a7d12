"""Wall and CPU time of short CLI commands (start-up dominated): `--help`, `algorithms --json`,
`validate` and `simulate --algorithm fifo` on a 20-job demo trace, each run as a fresh process.

Usage: python bench/cli_startup.py [--repeat 15] [--root DIR ...] [--jobs 20] [--algorithms fifo]
       [--rigid N] [--philly N] [--simulate-only]

``--jobs`` sizes the demo trace, ``--algorithms`` (comma-separated) are the simulated algorithms,
``--rigid N`` adds the same simulate commands on N rigid jobs (GPUs and durations, as imported
production traces are) on 4 servers of 8 GPUs, ``--philly N`` on the first N jobs of the Philly
trace imported (../shared/traces/philly/philly.csv) on the ``asrpt`` preset's cluster, and
``--simulate-only`` leaves out the other commands.
The CPU time is the process's own (user + system, from ``os.wait4``): on a machine others load it
moves far less than the wall time. With two roots it also prints, per command, the median over
rounds of the second root's CPU time over the first's and in how many rounds each was faster.
Compare like with like: a root that is a git checkout reads the repository for the result's
provenance (``code.commit``, a few ms), one made by ``git archive`` does not.

Each --root is a checkout of this repository (default: this one); giving two (e.g. a checkout of
an earlier commit and this one) measures them side by side, interleaved run by run (which one
goes first alternates), so that load from other processes falls on both alike. Prints the median
and min per command and root as a Markdown table; record it in bench/RESULTS.md with the
machine, date and load average. Each root's ``scheduling/`` is byte-compiled first
(``compileall``), so that every root runs from bytecode even where PYTHONDONTWRITEBYTECODE keeps
processes from writing ``__pycache__``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


PHILLY = HERE.parent / "shared" / "traces" / "philly" / "philly.csv"


def commands(
    data: Path, jobs: int, algorithms: list[str], rigid: int, simulate_only: bool, philly: int = 0
) -> dict[str, list[str]]:
    cmds: dict[str, list[str]] = {}
    if not simulate_only:
        cmds["--help"] = ["--help"]
        cmds["algorithms --json"] = ["algorithms", "--json"]
        cmds[f"validate ({jobs} jobs)"] = [
            "validate",
            "--cluster",
            str(data / "cluster.json"),
            "--trace",
            str(data / "trace.csv"),
        ]
    sets = [(data, f"{jobs} demo jobs")] + ([(data / "rigid", f"{rigid} rigid jobs")] if rigid else [])
    sets += [(data / "philly", f"Philly, {philly} jobs")] if philly else []
    for folder, what in sets:
        for algorithm in algorithms:
            cmds[f"simulate --algorithm {algorithm} ({what})"] = [
                "simulate",
                "--cluster",
                str(folder / "cluster.json"),
                "--trace",
                str(folder / "trace.csv"),
                "--algorithm",
                algorithm,
                "--out",
                str(folder / "result.json"),
            ]
    return cmds


def write_rigid(folder: Path, jobs: int, seed: int = 1) -> None:
    """``jobs`` rigid jobs (1-8 GPUs, 1-60 minutes, arriving over about jobs x 1.5 minutes) on 4 x 8 GPUs."""
    folder.mkdir()
    cluster = '{"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "n", "count": 4, "capacity": {"gpu": 8}}]}'
    (folder / "cluster.json").write_text(cluster + "\n")
    rng = random.Random(seed)
    rows, t = ["job_id,arrival,gpus,duration"], 0
    for i in range(jobs):
        t += rng.choice([0, 1, 1, 2, 3])
        rows.append(f"r{i},{t},{rng.choice([1, 1, 2, 4, 8])},{60 * rng.randint(1, 60)}")
    (folder / "trace.csv").write_text("\n".join(rows) + "\n")


def run_cli(root: Path, *argv: str) -> None:
    """``python -m scheduling ARGV`` of checkout ``root`` (a set-up step, not timed)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    subprocess.run([sys.executable, "-m", "scheduling", *argv], cwd=root, env=env, check=True, capture_output=True)


def timed(root: Path, argv: list[str]) -> tuple[float, float]:
    """Wall seconds and the process's own CPU seconds (user + system)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "scheduling", *argv],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} failed in {root}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--root", action="append", type=Path, default=[])
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--algorithms", default="fifo")
    ap.add_argument("--rigid", type=int, default=0)
    ap.add_argument("--simulate-only", action="store_true")
    ap.add_argument("--philly", type=int, default=0, help="also simulate the first N Philly jobs (asrpt's cluster)")
    ap.add_argument("--philly-trace", type=Path, default=PHILLY, help=f"the raw Philly trace (default {PHILLY})")
    args = ap.parse_args()
    roots = [r.resolve() for r in args.root] or [HERE]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        generate = ["generate", "--preset", "demo", "--jobs", str(args.jobs), "--out", tmp]
        subprocess.run(
            [sys.executable, "-m", "scheduling", *generate],
            cwd=roots[-1],
            env={**os.environ, "PYTHONPATH": str(roots[-1])},
            check=True,
            capture_output=True,
        )
        if args.rigid:
            write_rigid(data / "rigid", args.rigid)
        if args.philly:  # the first N Philly jobs imported, on the asrpt preset's cluster
            philly = data / "philly"
            run_cli(roots[-1], "generate", "--preset", "asrpt", "--jobs", "1", "--out", str(philly))
            raw = ["--format", "generic-gpu", "--input", str(args.philly_trace), "--limit", str(args.philly)]
            run_cli(roots[-1], "import", *raw, "--out", str(philly / "trace.csv"))
        cmds = commands(data, args.jobs, args.algorithms.split(","), args.rigid, args.simulate_only, args.philly)
        times: dict[tuple[str, Path], list[tuple[float, float]]] = {(c, r): [] for c in cmds for r in roots}
        for root in roots:  # compile, then warm the file cache
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "scheduling")], check=True)
            for argv in cmds.values():
                timed(root, argv)
        for i in range(args.repeat):
            for name, argv in cmds.items():
                # the roots' order alternates round by round: the first of a pair runs colder
                for root in roots if i % 2 == 0 else roots[::-1]:
                    times[(name, root)].append(timed(root, argv))
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print("| command | root | wall median s | wall min s | CPU median s | CPU min s |")
    print("|---|---|---|---|---|---|")
    for (name, root), values in times.items():
        wall, cpu = [v[0] for v in values], [v[1] for v in values]
        print(
            f"| `{name}` | {root} | {statistics.median(wall):.3f} | {min(wall):.3f} | "
            f"{statistics.median(cpu):.3f} | {min(cpu):.3f} |"
        )
    if len(roots) == 2:  # paired by round: the two roots ran one after the other each time, in turns
        first, second = roots
        print(f"\nCPU of {second} over {first}, paired by round:")
        print("| command | median ratio | rounds faster / slower |")
        print("|---|---|---|")
        for name in cmds:
            pairs = list(zip(times[(name, first)], times[(name, second)], strict=True))
            ratios = [b[1] / a[1] for a, b in pairs]
            faster = sum(b[1] < a[1] for a, b in pairs)
            slower = sum(b[1] > a[1] for a, b in pairs)
            print(f"| `{name}` | {statistics.median(ratios):.3f} | {faster} / {slower} |")


if __name__ == "__main__":
    main()
