"""Where OASiS's utility goes: admitted jobs that earned < 10% of their priority vs the others, with
the worker CPU-slots each group held (preset oasis).

Usage: PYTHONPATH=. python bench/oasis_breakdown.py [--jobs 200] [--seed 1]
       [--algorithms oasis,oasis:ratio_scale=1e-8,rrh]
"""

from __future__ import annotations

import argparse

from oasis_common import preset_instance

from scheduling import api


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--algorithms", default="oasis,oasis:ratio_scale=1e-8,rrh")
    args = ap.parse_args()
    inst = preset_instance(args.jobs, args.seed)
    print(
        "| algorithm | low jobs | low CPU-slots | low utility | other jobs | other CPU-slots | other utility "
        "| rejected |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label in args.algorithms.split(","):
        name, _, raw = label.partition(":")
        params = dict(kv.split("=", 1) for kv in raw.split(";") if kv)
        doc = api.run(inst, name, params, seed=args.seed)
        cpu: dict[str, float] = {}
        for p in doc["placements"]:
            if p["role"] == "worker":
                cpu[p["job_id"]] = cpu.get(p["job_id"], 0.0) + p["count"] * (p["end"] - p["start"]) * p["demand"].get(
                    "cpu", 0.0
                )
        low, high, rejected = [0, 0.0, 0.0], [0, 0.0, 0.0], 0
        for j in doc["jobs"]:
            if not j["admitted"]:
                rejected += 1
                continue
            group = low if j["utility"] < 0.1 * inst.job(j["job_id"]).utility.priority else high
            group[0] += 1
            group[1] += cpu.get(j["job_id"], 0.0)
            group[2] += j["utility"]
        print(
            f"| {label} | {low[0]} | {low[1]:.0f} | {low[2]:.0f} | {high[0]} | {high[1]:.0f} | {high[2]:.0f} "
            f"| {rejected} |"
        )


if __name__ == "__main__":
    main()
