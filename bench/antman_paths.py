"""`antman`'s change path against its full walk on one trace: same schedule, and the time of each.

    PYTHONPATH=. nice .venv/bin/python bench/antman_paths.py --trace /tmp/philly/trace.csv --servers 100

The trace is read as bench/trace_replay.py reads it (``--servers`` x 8 GPUs, 60-s slots). Both
runs are made in this process, the change path first (``AntMan.incremental``); the script prints
each simulation's wall time and whether jobs, placements, progress, restart periods and the
report are identical (exit status 1 if not).
"""

from __future__ import annotations

import argparse
import sys
import time

from trace_replay import gpu_instance

from scheduling import registry
from scheduling.engine import simulate


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", required=True)
    ap.add_argument("--servers", type=int, default=100)
    ap.add_argument("--slot-seconds", type=float, default=60.0)
    a = ap.parse_args()
    instance = gpu_instance(a.trace, a.servers, a.slot_seconds)
    spec = registry.get("antman")
    params = spec.parse_params({})
    outcomes = []
    for incremental in (True, False):
        algorithm = spec.build(instance, params, 0)
        algorithm.incremental = incremental  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        run = simulate(instance, algorithm)
        label = "change path" if incremental else "full walk"
        print(f"{label}: {time.perf_counter() - t0:.1f} s wall, {len(instance.jobs)} jobs", flush=True)
        outcomes.append((run.jobs, run.placements, run.progress, run.restarts, algorithm.report()))
    same = outcomes[0] == outcomes[1]
    print(f"identical: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
