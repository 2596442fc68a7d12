"""Wall and CPU time of short CLI commands (start-up dominated): `--help`, `algorithms --json`,
`validate` and `simulate --algorithm fifo` on a 20-job demo trace, each run as a fresh process
(CPU: user + system time of the process and its children, os.wait4).

Usage: python bench/cli_startup.py [--repeat 15] [--root DIR ...]

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
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def commands(data: Path) -> dict[str, list[str]]:
    return {
        "--help": ["--help"],
        "algorithms --json": ["algorithms", "--json"],
        "validate (20 jobs)": ["validate", "--cluster", str(data / "cluster.json"), "--trace", str(data / "trace.csv")],
        "simulate --algorithm fifo (20 jobs)": [
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


def timed(root: Path, argv: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one process."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    started = time.perf_counter()
    cmd = [sys.executable, "-m", "scheduling", *argv]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed in {root}")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--root", action="append", type=Path, default=[])
    args = ap.parse_args()
    roots = [r.resolve() for r in args.root] or [HERE]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "scheduling", "generate", "--preset", "demo", "--jobs", "20", "--out", tmp],
            cwd=roots[-1],
            env={**os.environ, "PYTHONPATH": str(roots[-1])},
            check=True,
            capture_output=True,
        )
        cmds = commands(data)
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
    print("| command | root | median wall s | min wall s | median CPU s | paired CPU ratio to the first root |")
    print("|---|---|---|---|---|---|")
    for (name, root), values in times.items():
        walls, cpus = [w for w, _ in values], [c for _, c in values]
        first = [c for _, c in times[(name, roots[0])]]
        paired = statistics.median(c / f for c, f in zip(cpus, first, strict=True))
        print(
            f"| `{name}` | {root} | {statistics.median(walls):.3f} | {min(walls):.3f} | "
            f"{statistics.median(cpus):.3f} | {paired:.3f} |"
        )


if __name__ == "__main__":
    main()
