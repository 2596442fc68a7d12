"""Zhou et al. Sec. 7.1 (2), Fig. 7: run time of `zhou` at the paper's scale -- H servers of EC2
P3/P2/G3 shapes, 8 worker types, 10 PS types, arrivals over T slots -- for several job counts, with
the numpy path and (where affordable) the transcription side by side, and peak RSS.

    PYTHONPATH=. .venv/bin/python bench/zhou_scale.py --jobs 100,200,300 --servers 150 --T 300
    PYTHONPATH=. .venv/bin/python bench/zhou_scale.py --jobs 8 --servers 12 --T 60 --transcription
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import time

import numpy as np

from scheduling import api, presets
from scheduling.algorithms.zhou import online
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance


def instance(jobs: int, servers: int, horizon: int, seed: int, arch: str) -> Instance:
    files = presets.build(f"zhou-{arch}", jobs=jobs, seed=seed)
    spec = json.loads(files.cluster)
    rng = np.random.default_rng(seed)
    shapes = presets.EC2_GPU_SERVERS
    spec["servers"] = [
        {"id": f"{name}-{i:03d}", "capacity": {"gpu": g, "cpu": c, "bw": bw}}
        for i, (name, g, c, bw) in enumerate(
            [shapes[5]] + [shapes[int(k)] for k in rng.integers(len(shapes), size=servers - 1)]
        )
    ]
    cluster = cluster_from_dict(spec)
    scale = horizon / presets.ZHOU_T  # the preset's arrivals span ZHOU_T slots
    jobs_ = [
        dataclasses.replace(j, arrival=int(j.arrival * scale))
        for j in parse_trace(files.trace, cluster, files.trace_name)
    ]
    return Instance(cluster, tuple(sorted(jobs_, key=lambda j: (j.arrival, j.job_id))))


CALLS: list[tuple[float, int]] = []  # (seconds, jobs) of every A_maxweight call
_maxweight = online.Zhou.a_maxweight


def _timed(self: online.Zhou, jobs: list, *args: object) -> object:  # type: ignore[type-arg]
    t0 = time.perf_counter()
    out = _maxweight(self, jobs, *args)  # type: ignore[arg-type]
    CALLS.append((time.perf_counter() - t0, len(jobs)))
    return out


online.Zhou.a_maxweight = _timed  # type: ignore[method-assign,assignment]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default="100,200,300")
    ap.add_argument("--servers", type=int, default=150)
    ap.add_argument("--T", type=int, default=300)
    ap.add_argument("--arch", default="ps")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--transcription", action="store_true", help="also run fast=false and compare")
    args = ap.parse_args()
    print(
        "| jobs | servers | path | wall (s) | A_maxweight calls | per call mean / max (s) | jobs in the "
        "largest call | sum w_j c_j | peak RSS (MiB) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.jobs.split(",")):
        inst = instance(n, args.servers, args.T, args.seed, args.arch)
        paths = [("numpy", True)] + ([("transcription", False)] if args.transcription else [])
        docs = []
        for label, fast in paths:
            CALLS.clear()
            t0 = time.perf_counter()
            doc = api.run(inst, "zhou", {"fast": fast})
            wall = time.perf_counter() - t0
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            docs.append(doc)
            wc = doc["metrics"]["total_weighted_completion"]
            secs = [c[0] for c in CALLS]
            big = max(CALLS, default=(0.0, 0))
            print(
                f"| {n} | {args.servers} | {label} | {wall:.1f} | {len(CALLS)} | "
                f"{sum(secs) / max(1, len(secs)):.2f} / {max(secs, default=0):.2f} | {big[1]} | {wc:.4g} | {rss:.0f} |",
                flush=True,
            )
        if len(docs) == 2:
            same = docs[0]["placements"] == docs[1]["placements"]
            print(f"\nsame placements (numpy vs transcription): {same}\n")


if __name__ == "__main__":
    main()
