"""Benchmark: the work behind the repetitions tab (webapp/repetition_stats.py), without a server.

Usage: .venv/bin/python bench/dashboard_repetitions.py [--variants 4] [--reps 10] [--jobs 2000]

* statistics: ``scheduling.stats.compare`` of the tab's 10 metrics for ``--variants`` x ``--reps``
  values (what ``metric_reports`` computes on a cache miss: BCa bootstraps, 9,999 resamples);
* pooled CDF: reading a stored result document (gzip JSON, as the run store writes it) per run and
  ``stats.jct_cdf`` per variant (what ``cdf_bands`` computes on a cache miss), for a real fifo run
  of the ``demo`` preset with ``--jobs`` jobs (one simulated run, its document read
  variants x reps times).

Prints machine load with the numbers: other processes share the cores.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scheduling import api, repeat, stats

METRICS = ("avg_jct", "avg_wait", "total_jct", "total_weighted_completion", "total_weighted_jct", "makespan",
           "completed", "total_utility", "preemptions", "utilization.gpu")  # as repetition_stats.METRICS  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", type=int, default=4)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2000)
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"date {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; load average {os.getloadavg()}")  # fmt: skip

    rng = np.random.default_rng(0)
    names = [f"v{i}" for i in range(args.variants)]
    tables = {m: {v: {r: float(rng.normal(100, 15)) for r in range(args.reps)} for v in names} for m in METRICS}
    t0 = time.perf_counter()
    for metric, table in tables.items():
        stats.compare(table, reference=names[0], metric=metric)
    compare_s = time.perf_counter() - t0
    print(f"statistics: {len(METRICS)} metrics x {args.variants} variants x {args.reps} repetitions: {compare_s:.2f} s")

    instance = repeat.preset_instance("demo", args.jobs, 0)
    t0 = time.perf_counter()
    doc = api.run(instance, "fifo", {}, 0)
    simulate_s = time.perf_counter() - t0
    stored = gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), compresslevel=6)
    runs = args.variants * args.reps
    t0 = time.perf_counter()
    per_variant = []
    for _ in range(args.variants):
        jcts = []
        for _ in range(args.reps):
            d = json.loads(gzip.decompress(stored))
            jcts.append([j["completion"] - j["arrival"] if j["completion"] is not None else None for j in d["jobs"]])
        per_variant.append(jcts)
    read_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for jcts in per_variant:
        stats.jct_cdf(jcts)
    cdf_s = time.perf_counter() - t0
    jobs = runs * len(doc["jobs"])
    print(f"one {len(doc['jobs'])}-job fifo run simulated in {simulate_s:.1f} s; stored {len(stored) / 1024:.0f} KiB")
    print(f"pooled CDF: read {runs} documents ({jobs:,} jobs) {read_s:.2f} s "
          f"({read_s / jobs * 1e6:.0f} us per job); jct_cdf of {args.variants} variants {cdf_s:.2f} s")  # fmt: skip
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
