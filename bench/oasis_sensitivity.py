"""OASiS Sec. V-A, Fig. 6: total utility when U_1^r/L_1 and U_2^r/L_2 are estimated at a percentage of
their actual values (oasis parameter ratio_scale), T = 300, preset oasis.

Usage: PYTHONPATH=. python bench/oasis_sensitivity.py [--jobs 200,400] [--seeds 1,2]
       [--scales 100,1,0.01,1e-4,1e-6,1e-8,1e-9,1e-10]
ratio_scale s sets U/L to s times its estimate by dividing L by s (scale_moves=L, the default).
The estimate is the paper's "actual values" (bounds=trace: U, L of (23)-(26) from the whole trace),
as in the recorded table; --bounds arrived scales the online estimate (the algorithm's default) instead.
"""

from __future__ import annotations

import argparse

from oasis_common import preset_instance

from scheduling import api


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default="200,400")
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--scales", default="100,1,0.01,1e-4,1e-6,1e-8,1e-9,1e-10")
    ap.add_argument("--bounds", default="trace", choices=("trace", "arrived"))
    args = ap.parse_args()
    scales = [float(s) for s in args.scales.split(",")]
    print("| jobs | seed | " + " | ".join(f"{s:g}x" for s in scales) + " |")
    print("|---|---|" + "---|" * len(scales))
    for n in (int(x) for x in args.jobs.split(",")):
        for seed in (int(s) for s in args.seeds.split(",")):
            inst = preset_instance(n, seed)
            cells = []
            for scale in scales:
                doc = api.run(inst, "oasis", {"ratio_scale": scale, "bounds": args.bounds}, seed=seed)
                m = doc["metrics"]
                cells.append(f"{m['total_utility']:.0f} ({m['admitted']})")
            print(f"| {n} | {seed} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
