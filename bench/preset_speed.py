"""Benchmark: simulate time of algorithms on a preset's instance (elastic jobs, multi-resource servers).

Usage: PYTHONPATH=<checkout> .venv/bin/python bench/preset_speed.py --preset oasis --jobs 400
    [--seed 2] [--algorithms fifo,srtf,tiresias,drf,antman,rrh] [--rounds 3] [--params ALGO.KEY=VALUE ...]

Prints one line per algorithm: the median CPU time of the simulation over ``--rounds`` runs (the
instance built once, each run a fresh algorithm), the jobs completed, and a digest of the
schedule (every job's record, placement and progress segment). Only public entry points are used
(presets, registry, simulate), so the same script runs against an older checkout: equal digests
mean the two checkouts give the same schedule. Record results in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from scheduling import presets, registry
from scheduling.engine import simulate
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiresias_common import machine


def instance(preset: str, jobs: int, seed: int) -> Instance:
    files = presets.build(preset, jobs, seed, 1.0)
    cluster = cluster_from_dict(json.loads(files.cluster))
    fmt = files.trace_name.rsplit(".", 1)[1]
    return Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, fmt))


def digest(run: object) -> str:
    parts = (repr(getattr(run, name)) for name in ("jobs", "placements", "progress", "restarts"))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="oasis")
    ap.add_argument("--jobs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--algorithms", default="fifo,srtf,tiresias,drf,antman,rrh")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--params", nargs="*", default=[], help="ALGO.KEY=VALUE")
    args = ap.parse_args()
    inst = instance(args.preset, args.jobs, args.seed)
    checkout = Path(registry.__file__).resolve().parent.parent
    head = subprocess.run(
        ["git", "log", "-1", "--format=%h"], check=False, cwd=checkout, capture_output=True, text=True
    )
    print(
        f"{machine()}; {time.strftime('%Y-%m-%d %H:%M')}; checkout {checkout} at {head.stdout.strip()}; "
        f"{args.preset} preset, {len(inst.jobs)} jobs, seed {args.seed}, {len(inst.cluster.servers)} servers"
    )
    for name in args.algorithms.split(","):
        raw = dict(p.split(".", 1)[1].split("=", 1) for p in args.params if p.startswith(f"{name}."))
        spec = registry.get(name)
        params = spec.parse_params(raw)
        times, runs = [], []
        for _ in range(args.rounds):
            algo = spec.build(inst, params, 0)
            t0 = time.process_time()
            runs.append(simulate(inst, algo))
            times.append(time.process_time() - t0)
        assert len({digest(r) for r in runs}) == 1, f"{name}: runs differ"
        print(
            f"{name}: simulate {statistics.median(times):.2f} s CPU (median of {args.rounds}), "
            f"{sum(j.completion is not None for j in runs[0].jobs)} completed by slot {runs[0].horizon}, "
            f"schedule digest {digest(runs[0])}",
            flush=True,
        )


if __name__ == "__main__":
    main()
