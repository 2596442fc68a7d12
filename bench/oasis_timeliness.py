"""OASiS Sec. V-A, Fig. 4: completion time minus target for 100 time-sensitive and 100 time-critical
jobs in T = 100.

Usage: PYTHONPATH=. python bench/oasis_timeliness.py [--seeds 1,2,3]
       [--algorithms oasis,oasis:bounds=trace,oasis:bounds=trace;ratio_scale=1e-8,fifo,drf,rrh,dorm]
Instance: preset oasis with 200 jobs, arrivals scaled from [0, 300) to [0, 100), horizon T = 100,
jobs 0-99 time-sensitive (decay in [0.01, 1]) and 100-199 time-critical (decay in [4, 6]); priority
and target as drawn by the preset. Only completed jobs have a completion time (the table gives how
many completed out of 100). `oasis` alone is its default (bounds=history); `oasis:bounds=trace` uses
U, L of (23)-(26) from the whole trace (the paper's actual values).
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
from oasis_common import preset_instance

from scheduling import api
from scheduling.model import Instance, Utility


def fig4_instance(seed: int) -> Instance:
    base = preset_instance(200, seed)
    rng = np.random.default_rng(seed + 4)
    jobs = []
    for i, job in enumerate(sorted(base.jobs, key=lambda j: j.job_id)):
        decay = float(rng.uniform(0.01, 1.0)) if i < 100 else float(rng.uniform(4.0, 6.0))
        u = Utility(job.utility.priority, round(decay, 3), job.utility.target)
        jobs.append(dataclasses.replace(job, arrival=job.arrival * 100 // 300, utility=u))
    cluster = dataclasses.replace(base.cluster, horizon=100)
    return Instance(cluster, tuple(sorted(jobs, key=lambda j: (j.arrival, j.job_id))))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument(
        "--algorithms", default="oasis,oasis:bounds=trace,oasis:bounds=trace;ratio_scale=1e-8,fifo,drf,rrh,dorm"
    )
    args = ap.parse_args()
    print("| seed | algorithm | sensitive: completed | mean | std | critical: completed | mean | std | total utility |")
    print("|---|---|---|---|---|---|---|---|---|")
    for seed in (int(s) for s in args.seeds.split(",")):
        inst = fig4_instance(seed)
        for label in args.algorithms.split(","):
            name, _, raw = label.partition(":")
            params = dict(kv.split("=", 1) for kv in raw.split(";") if kv)
            m = api.run(inst, name, params, seed=seed)["metrics"]
            s, c = m["timeliness"]["time-sensitive"], m["timeliness"]["time-critical"]

            def num(x: float | None) -> str:
                return "-" if x is None else f"{x:.1f}"

            print(
                f"| {seed} | {label} | {s['completed']} | {num(s['mean'])} | {num(s['std'])} | "
                f"{c['completed']} | {num(c['mean'])} | {num(c['std'])} | {m['total_utility']:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
