"""Edge-cloud paper's simulation scale: 100 edge servers, 300 jobs, up to 115 chunks per job.

Usage: PYTHONPATH=. python bench/edge_scale.py [--seeds 0,1,2] [--jobs 300]
Prints wall time of simulate (A_online decisions + engine), of the validator, per run and per
dispatched chunk, with peak RSS. Target: under 30 s per run on the 2-core machine.
"""

from __future__ import annotations

import argparse
import resource
import time

from edge_common import preset_instance

from scheduling import registry, results
from scheduling.engine import simulate
from scheduling.validator import validate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--jobs", type=int, default=300)
    args = ap.parse_args()
    print("| seed | edge_only | edge servers | jobs | chunks | simulate s | validate s | ms per chunk | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    spec = registry.get("edge-cloud")
    for seed in (int(s) for s in args.seeds.split(",")):
        inst = preset_instance(args.jobs, seed)
        edge = sum(1 for s in inst.cluster.servers if s.site == "edge")
        for edge_only in (False, True):
            params = spec.parse_params({"edge_only": edge_only})
            algo = spec.build(inst, params, seed)
            t0 = time.perf_counter()
            run = simulate(inst, algo)
            t1 = time.perf_counter()
            doc = results.build(inst, run, "edge-cloud", params, seed)
            problems = validate(inst, doc)
            t2 = time.perf_counter()
            assert not problems, problems[:3]
            chunks = doc["edge_cloud"]["chunks_dispatched"]
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"| {seed} | {edge_only} | {edge} | {len(inst.jobs)} | {chunks} | {t1 - t0:.1f} | {t2 - t1:.1f} | "
                f"{1000 * (t1 - t0) / chunks:.2f} | {rss:.0f} |"
            )


if __name__ == "__main__":
    main()
