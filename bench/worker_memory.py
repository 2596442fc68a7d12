"""Benchmark: does a worker process return to its idle size after runs (DESIGN section 6)?

Runs the body of the Celery task (parse inputs, simulate, validate, compress the result) many
times in one process, as a long-lived worker does, and prints the resident set size (VmRSS, not
the peak) after each batch of runs. Usage:

    .venv/bin/python bench/worker_memory.py [--runs 100] [--preset demo] [--algorithms fifo,drf,srtf,tiresias]
"""

from __future__ import annotations

import argparse
import gc
import gzip
import itertools
import json
import time

from scheduling import api, presets
from workers.runs import load_instance


def rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--preset", default="demo")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--algorithms", default="fifo,drf,srtf,tiresias")
    a = ap.parse_args()
    files = presets.build(a.preset, jobs=a.jobs, seed=0)
    algorithms = itertools.cycle(a.algorithms.split(","))
    start = time.perf_counter()
    baseline = None
    sizes = []
    for i in range(1, a.runs + 1):
        instance = load_instance(files.cluster, "cluster.json", files.trace, files.trace_name)
        doc = api.run(instance, next(algorithms), {}, seed=i)
        sizes.append(len(gzip.compress(json.dumps(doc, separators=(",", ":")).encode())))  # as stored
        del instance, doc
        gc.collect()
        if i == 1:
            baseline = rss_mib()
            print(f"after run 1: RSS {baseline:.1f} MiB")
        elif i % 10 == 0:
            print(f"after run {i}: RSS {rss_mib():.1f} MiB")
    assert baseline is not None
    growth = rss_mib() - baseline
    print(
        f"{a.runs} runs of preset {a.preset} in {time.perf_counter() - start:.1f} s; "
        f"RSS growth after run 1: {growth:+.1f} MiB; mean result {sum(sizes) / len(sizes) / 1024:.1f} KiB gzip"
    )


if __name__ == "__main__":
    main()
