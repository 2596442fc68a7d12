"""CPU time of the input readers: ``job_from_row`` on the `asrpt` preset's JSON rows (the general
path: nested stages), and ``parse_cluster`` on the two 40,000-entry cluster specs of
tests/test_hostile_inputs.py (40,000 worker types; 40,000 servers).

Usage: python bench/loader_speed.py [--rounds 3] [--root DIR ...]

Each --root is a checkout of this repository (default: this one); with two they run alternately,
``--rounds`` times, each measurement in a fresh process importing that root's ``scheduling``.
CPU time (``time.process_time``), best of 15 passes over 3,000 rows and best of 5 parses, so that
other load on the machine weighs little. Record the output in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, time
from scheduling import presets
from scheduling.loaders import ClusterNames, job_from_row, parse_cluster

files = presets.build("asrpt", jobs=3000, seed=1)
cluster = parse_cluster(files.cluster)
names = ClusterNames.of(cluster)
rows = json.loads(files.trace)
rows = rows["jobs"] if isinstance(rows, dict) else rows
best = float("inf")
for _ in range(15):
    began = time.process_time()
    for row in rows:
        job_from_row(row, cluster, names)
    best = min(best, time.process_time() - began)
out = {"asrpt JSON row (us)": best / len(rows) * 1e6}
N = 40_000
types = [{"id": f"w{i}", "demand": {"gpu": 1}} for i in range(N)]
servers = [{"id": f"s{i}", "capacity": {"gpu": 1}} for i in range(N)]
one = [{"id": "a", "capacity": {"gpu": 1}}]
specs = {
    "40,000 worker types (ms)": {"slot_seconds": 60, "resources": ["gpu"], "servers": one, "worker_types": types},
    "40,000 servers (ms)": {"slot_seconds": 60, "resources": ["gpu"], "servers": servers},
}
for name, spec in specs.items():
    text = json.dumps(spec)
    best = float("inf")
    for _ in range(5):
        began = time.process_time()
        parse_cluster(text)
        best = min(best, time.process_time() - began)
    out[name] = best * 1e3
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--root", action="append", type=Path, default=[])
    args = ap.parse_args()
    roots = [r.resolve() for r in args.root] or [HERE]
    results: dict[Path, list[dict[str, float]]] = {r: [] for r in roots}
    for _ in range(args.rounds):
        for root in roots:
            env = {**os.environ, "PYTHONPATH": str(root)}
            done = subprocess.run([sys.executable, "-c", CHILD], cwd=root, env=env, check=True, capture_output=True)
            results[root].append(json.loads(done.stdout))
    print(f"load average {os.getloadavg()[0]:.2f}")
    names = list(results[roots[0]][0])
    print("| root | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for root, runs in results.items():
        cells = [", ".join(f"{run[n]:.1f}" for run in runs) for n in names]
        print(f"| {root} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
