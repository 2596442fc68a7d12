"""Offered load of the zhou presets (docs/formats.md, "Presets"): how long baselines wait.

    PYTHONPATH=. .venv/bin/python bench/zhou_load.py [--presets zhou-ps] [--seeds 0,1,2,3,4]
        [--loads 0.4,1,4,16] [--algos fifo,drf,drf:fixed=false,antman,tiresias,zhou]

For each preset, load and algorithm: the mean over seeds of the average wait (first start minus
arrival, slots), the share of jobs that waited at all, and sum w_j c_j (10^6). Load 0.4 is about
what the presets offered before the knob (arrivals over 150 slots: 0.29-0.53 on seeds 0-4).
Every result is validated (api.run). Record the output in docs/results-zhou.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from scheduling import api, presets
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance


def instance(preset: str, seed: int, load: float) -> Instance:
    files = presets.build(preset, seed=seed, load=load)
    cluster = parse_cluster(files.cluster)
    return Instance(cluster, parse_trace(files.trace, cluster, files.trace_name))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", default="zhou-ps")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--loads", default="0.4,1,4,16")
    ap.add_argument("--algos", default="fifo,drf,drf:fixed=false,antman,tiresias,zhou")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.1f} (shared)")
    for preset in args.presets.split(","):
        print(f"\n### {preset}, seeds {args.seeds}\n")
        print("| load | algorithm | avg wait (slots) | jobs that waited | sum w_j c_j (10^6) |")
        print("|---|---|---|---|---|")
        for load in (float(x) for x in args.loads.split(",")):
            insts = [instance(preset, s, load) for s in seeds]
            for label in args.algos.split(","):
                name, _, raw = label.partition(":")
                params = dict(kv.split("=", 1) for kv in raw.split(";") if kv)
                waits, shares, objective = [], [], []
                for seed, inst in zip(seeds, insts, strict=True):
                    doc = api.run(inst, name, params, seed=seed)
                    w = [j["start"] - j["arrival"] for j in doc["jobs"] if j["start"] is not None]
                    waits.append(statistics.fmean(w))
                    shares.append(sum(x > 0 for x in w) / len(w))
                    objective.append(doc["metrics"]["total_weighted_completion"] / 1e6)
                print(
                    f"| {load:g} | {label} | {statistics.fmean(waits):.2f} | {statistics.fmean(shares):.0%} "
                    f"| {statistics.fmean(objective):.2f} |"
                )


if __name__ == "__main__":
    main()
