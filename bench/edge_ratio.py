"""Edge-cloud paper Figs. 12-13: empirical competitive ratio with (1 + eps) speed augmentation.

Usage: PYTHONPATH=. python bench/edge_ratio.py [--jobs 5,10,15,20,25] [--size 0.1] [--seeds 0,1]
For each small instance: the LP lower bound of ILP (4) with zeta_j = 1 (HiGHS), and A_online run on
the (1 + eps)-speed instance. Two ratios: the ILP (4) objective of A_online (fractional flow time)
over the LP bound (the paper's quantity), and A_online's total JCT over the LP bound (an upper
bound on the ratio to the optimal total JCT of MINLP (2), by Lemma 1).
"""

from __future__ import annotations

import argparse
import time

from edge_common import preset_instance

from scheduling import api
from scheduling.algorithms.edge.lp import fractional_flow_time, lp_lower_bound, speed_augmented


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default="5,10,15,20,25")
    ap.add_argument("--size", type=float, default=0.1)
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--eps", default="0,0.2,0.5")
    args = ap.parse_args()
    print("| jobs | seed | servers | LP bound | LP s | eps | ratio (ILP (4) objective) | ratio (total JCT) |")
    print("|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.jobs.split(",")):
        for seed in (int(x) for x in args.seeds.split(",")):
            inst = preset_instance(n, seed, args.size)
            t0 = time.perf_counter()
            bound = lp_lower_bound(inst)
            lp_s = time.perf_counter() - t0
            for eps in (float(x) for x in args.eps.split(",")):
                fast = speed_augmented(inst, eps)
                doc = api.run(fast, "edge-cloud", seed=seed)
                frac = fractional_flow_time(fast, doc)
                jct = doc["metrics"]["total_jct"]
                print(
                    f"| {n} | {seed} | {len(inst.cluster.servers)} | {bound:.1f} | {lp_s:.1f} | {eps} | "
                    f"{frac / bound:.3f} | {jct / bound:.3f} |"
                )


if __name__ == "__main__":
    main()
