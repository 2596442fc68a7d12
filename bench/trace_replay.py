"""Benchmark: replay a whole imported trace (e.g. all of Philly) with several algorithms.

Usage:
    .venv/bin/python -m scheduling import --format generic-gpu \\
        --input ../shared/traces/philly/philly.csv --out /tmp/philly/trace.csv
    PYTHONPATH=. .venv/bin/python bench/trace_replay.py --trace /tmp/philly/trace.csv \\
        --servers 100 --algorithms fifo,srtf,tiresias,drf [--restart-seconds 0]

The cluster is ``--servers`` x 8 GPUs with the trace's slot length (Philly's own cluster is not part
of the trace). Prints one line per algorithm: load, simulate, build and validate times, events,
peak RSS, gzip result size per 1,000 jobs and the main metrics. Record results in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import time
from pathlib import Path

from engine_scale import Counted

from scheduling import registry, results
from scheduling.engine import simulate
from scheduling.loaders import cluster_from_dict, load_trace
from scheduling.model import Instance
from scheduling.validator import validate


def gpu_instance(trace: str, servers: int, slot_seconds: float) -> Instance:
    """The trace on ``servers`` x 8 GPUs with ``slot_seconds``-long slots (also bench/antman_paths.py)."""
    cluster = cluster_from_dict(
        {
            "slot_seconds": slot_seconds,
            "resources": ["gpu"],
            "servers": [{"id": "n", "count": servers, "capacity": {"gpu": 8}}],
        }
    )
    return Instance(cluster, load_trace(trace, cluster))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", required=True, type=Path)
    ap.add_argument("--servers", type=int, default=100)
    ap.add_argument("--slot-seconds", type=float, default=60.0)
    ap.add_argument("--algorithms", default="fifo")
    ap.add_argument("--restart-seconds", type=float, default=0.0)
    a = ap.parse_args()
    t0 = time.perf_counter()
    inst = gpu_instance(a.trace, a.servers, a.slot_seconds)
    print(f"trace {a.trace}: {len(inst.jobs)} jobs on {a.servers} x 8 GPUs, loaded in {time.perf_counter() - t0:.1f} s")
    for name in a.algorithms.split(","):
        spec = registry.get(name)
        algo = Counted(spec.build(inst, spec.parse_params({}), 0))
        t0, c0 = time.perf_counter(), time.process_time()
        run = simulate(inst, algo, restart_seconds=a.restart_seconds)
        t1, c1 = time.perf_counter(), time.process_time()
        doc = results.build(inst, run, name, {}, 0)
        t2 = time.perf_counter()
        problems = validate(inst, doc)
        t3 = time.perf_counter()
        size = len(gzip.compress(json.dumps(doc, separators=(",", ":")).encode()))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        m = doc["metrics"]
        print(
            f"{name}: simulate {t1 - t0:.1f} s wall ({c1 - c0:.1f} s CPU), {algo.events} events, "
            f"build {t2 - t1:.1f} s, "
            f"validate {t3 - t2:.1f} s, peak RSS {rss:.0f} MiB, result {size / 1024 / (len(inst.jobs) / 1000):.1f} "
            f"KiB gzip per 1,000 jobs, completed {m['completed']}, avg JCT {m['avg_jct']:.1f} slots, "
            f"preemptions {m['preemptions']}, restarts {m['restarts']}, valid {not problems}"
        )


if __name__ == "__main__":
    main()
