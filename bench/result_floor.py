"""What any CPython program that writes our result document must spend, against the minimal replay.

Usage (from the project root, after bench/scale_million.py philly has written our results):
    PYTHONPATH=. .venv/bin/python bench/result_floor.py --trace /tmp/scale/philly.csv --servers 100 \
        --result fifo=/tmp/scale/fifo.json --result srtf=/tmp/scale/srtf.json

Issue 38 asks for the whole Philly trace at most half the CPU of bench/minimal_replay.py. This
bench measures three parts that no implementation of ``simulate`` can avoid, each in its own fresh
process (CPU = user + system from ``os.wait4``, as bench/scale_million.py measures):

* ``start``: the interpreter starting and exiting (``python -c pass``);
* ``read``: reading the trace's four columns the simulation needs with ``csv.reader`` (the
  cheapest reader in the standard library) into tuples, and sorting them;
* ``serialise``: ``json.dumps`` of the result document that ``simulate`` wrote for that trace
  (loaded first; the CPU of the load is measured inside the process and subtracted), to a string,
  then written to /dev/null: the contract's document (docs/formats.md), with no simulation,
  no validation and no metrics.

The floor is their sum (each part's process start included once, in ``start``); the minimal replay
runs in the same bench run, back to back, ``--rounds`` times, medians reported.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent

READ = """
import csv, sys
with open(sys.argv[1], newline="") as f:
    r = csv.reader(f)
    h = next(r)
    a, i, g, d = (h.index(k) for k in ("arrival", "job_id", "gpus", "duration"))
    jobs = [(int(x[a]), x[i], int(x[g]), float(x[d])) for x in r]
jobs.sort()
"""

SERIALISE = """
import json, sys, time
with open(sys.argv[1]) as f:
    doc = json.load(f)
t = time.process_time()
s = json.dumps(doc)
with open(os.devnull, "w") as out:
    out.write(s)
print(time.process_time() - t)
"""


def cpu(cmd: list[str]) -> tuple[float, str]:
    """Run ``cmd``: its CPU seconds (user + system) and its standard output."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _pid, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"failed: {cmd}")
    return usage.ru_utime + usage.ru_stime, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", required=True)
    ap.add_argument("--servers", type=int, required=True)
    ap.add_argument("--result", action="append", required=True, help="ALGORITHM=path of our result JSON")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    py = sys.executable
    print(f"trace {a.trace}; {a.rounds} rounds; load {os.getloadavg()}")
    head = ("algorithm", "start (s)", "read (s)", "serialise (s)", "floor (s)", "minimal replay (s)")
    print("| " + " | ".join((*head, "bar: 0.5 x minimal (s)", "floor / minimal")) + " |")
    print("|---|---|---|---|---|---|---|---|")
    for item in a.result:
        algorithm, path = item.split("=", 1)
        rows: dict[str, list[float]] = {"start": [], "read": [], "serialise": [], "minimal": []}
        for _ in range(a.rounds):
            rows["start"].append(cpu([py, "-c", "pass"])[0])
            rows["read"].append(cpu([py, "-c", READ, a.trace])[0] - rows["start"][-1])
            rows["serialise"].append(float(cpu([py, "-c", "import os" + SERIALISE, path])[1]))
            minimal = [py, str(BENCH / "minimal_replay.py"), "--trace", a.trace, "--servers", str(a.servers)]
            rows["minimal"].append(cpu([*minimal, "--algorithm", algorithm, "--out", os.devnull])[0])
        m = {k: statistics.median(v) for k, v in rows.items()}
        floor = m["start"] + m["read"] + m["serialise"]
        print(
            f"| {algorithm} | {m['start']:.3f} | {m['read']:.3f} | {m['serialise']:.3f} | {floor:.3f} | "
            f"{m['minimal']:.3f} | {m['minimal'] / 2:.3f} | {floor / m['minimal']:.2f} |"
        )
    print(f"finished; load {os.getloadavg()}")


if __name__ == "__main__":
    main()
