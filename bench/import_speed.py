"""Whole `python -m scheduling import --format generic-gpu` processes on a million-row raw trace.

    nice -n 10 .venv/bin/python bench/import_speed.py --rows 1000000 --rounds 2 --root <other checkout> --root .

The raw files are made from ../shared/traces/philly/philly.csv (82,247 jobs), repeated until
``--rows`` rows, the k-th copy submitted k x 110 days later (the trace spans 110 days), into:

* ``philly``: Philly's own columns (``timestamp, duration, num_gpus, gpu_time, cluster``: the
  virtual cluster is the group, so a profile is drawn per group);
* ``generic``: the generic core with ids and a status, no group or user
  (``job_id, submit_time, num_gpus, duration, status``), so every job is its own profile key.

Each round runs every (file, root) once, roots alternating, and reports wall and CPU time and
peak RSS of the whole process (os.wait4); the outputs of the roots are compared byte for byte.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHILLY = Path(os.environ.get("PHILLY_CSV", str(ROOT.parent / "shared" / "traces" / "philly" / "philly.csv")))
STATUSES = ("Pass", "Failed", "Killed")


def make_raw(rows: int, folder: Path) -> dict[str, Path]:
    with PHILLY.open(newline="") as f:
        table = [r for r in csv.reader(f) if r]
    header, body = table[0], table[1:]
    paths = {"philly": folder / "philly.csv", "generic": folder / "generic.csv"}
    with paths["philly"].open("w", newline="") as fp, paths["generic"].open("w", newline="") as fg:
        wp, wg = csv.writer(fp), csv.writer(fg)
        wp.writerow(header)
        wg.writerow(["job_id", "submit_time", "num_gpus", "duration", "status"])
        k = 0
        copy = 0
        while k < rows:
            shift = dt.timedelta(days=110 * copy)
            for r in body[: rows - k]:
                stamp = (dt.datetime.fromisoformat(r[0]) + shift).strftime("%Y-%m-%d %H:%M:%S")
                wp.writerow([stamp, *r[1:]])
                wg.writerow([f"job-{k:07d}", stamp, r[2], r[1], STATUSES[k % 7 % 3]])
                k += 1
            copy += 1
    return paths


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{' '.join(cmd)} failed: {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--root", action="append", type=Path, help="checkouts to compare (default: this one)")
    args = ap.parse_args()
    roots = [r.resolve() for r in (args.root or [ROOT])]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        raw = make_raw(args.rows, folder)
        print(f"{args.rows:,} rows; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        times: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
        for r in range(args.rounds):
            for name, path in raw.items():
                order = list(enumerate(roots)) if r % 2 == 0 else list(reversed(list(enumerate(roots))))
                for i, root in order:
                    out = folder / f"{name}-{i}.csv"
                    cmd = [str(root / ".venv" / "bin" / "python"), "-m", "scheduling", "import", "--format"]
                    cmd += ["generic-gpu", "--input", str(path), "--out", str(out)]
                    times.setdefault((name, i), []).append(timed(cmd, root))
        print("\n| file | checkout | wall (s) | CPU (s) | peak RSS (MiB) | output equal to the first |")
        print("|---|---|---|---|---|---|")
        for name in raw:
            for i, root in enumerate(roots):
                runs = times[name, i]
                same = filecmp.cmp(folder / f"{name}-0.csv", folder / f"{name}-{i}.csv", shallow=False)
                wall, cpu, rss = (statistics.median(x[k] for x in runs) for k in range(3))
                print(f"| {name} | {root.name} | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {'yes' if same else 'NO'} |")
    print(f"\nload average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
