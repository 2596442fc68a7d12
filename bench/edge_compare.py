"""Edge-cloud paper Sec. V-C (Figs. 7, 9): total JCT, JCT rate (vs srtf) and preemptions on preset edge-cloud.

Usage: PYTHONPATH=. python bench/edge_compare.py [--jobs 300] [--seeds 0,1,2,3,4] [--size 1.0]
Every result passes the validator (api.run). Record the output in bench/RESULTS-edge.md.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from edge_common import preset_instance

from scheduling import api

RUNS: list[tuple[str, str, dict[str, Any]]] = [
    ("edge-cloud", "edge-cloud", {}),
    ("edge-only", "edge-cloud", {"edge_only": True}),
    ("srtf", "srtf", {}),
    ("tiresias-l", "tiresias-l", {}),
    ("batchsche", "batchsche", {}),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--size", type=float, default=1.0)
    args = ap.parse_args()
    sums: dict[str, list[float]] = {label: [] for label, *_ in RUNS}
    print("| seed | algorithm | total JCT (slots) | JCT rate | preemptions | chunk preemptions | makespan | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    for seed in (int(s) for s in args.seeds.split(",")):
        inst = preset_instance(args.jobs, seed, args.size)
        docs = {}
        for label, name, params in RUNS:
            t0 = time.perf_counter()
            docs[label] = (api.run(inst, name, params, seed=seed), time.perf_counter() - t0)
        base = docs["srtf"][0]["metrics"]["total_jct"]
        for label, (doc, wall) in docs.items():
            m = doc["metrics"]
            chunk = doc.get("edge_cloud", {}).get("chunk_preemptions", "-")
            rate = m["total_jct"] / base
            sums[label].append(rate)
            print(
                f"| {seed} | {label} | {m['total_jct']:.0f} | {rate:.3f} | {m['preemptions']} | {chunk} | "
                f"{m['makespan']} | {wall:.1f} |"
            )
    print()
    print("| algorithm | mean JCT rate | min | max |")
    print("|---|---|---|---|")
    for label, rates in sums.items():
        print(f"| {label} | {sum(rates) / len(rates):.3f} | {min(rates):.3f} | {max(rates):.3f} |")


if __name__ == "__main__":
    main()
