"""OASiS Sec. V-A, Fig. 5: performance ratio OPT / OASiS on small instances (T = 10, 10 jobs).

Usage: PYTHONPATH=. python bench/oasis_ratio.py [--servers 2,4,6] [--priorities 10,50,100] [--seeds 1,2]
       [--time-limit 120]
For each (servers, priority range, seed): offline-opt (exact ILP of problem (1), HiGHS) and oasis,
both replayed through the engine and validated. Prints one row per instance and a summary.
The "oasis bounds" column says where oasis's U and L came from: with 10 jobs the history window
(the first T/3 slots) holds fewer than history_min_jobs jobs, so the default falls back to trace.
"""

from __future__ import annotations

import argparse
import math
import time

from oasis_common import small_instance

from scheduling import api


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", default="2,4,6")
    ap.add_argument("--priorities", default="10,50,100")
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--floor", type=float, default=None, help="oasis utility_floor (default: the registry's)")
    args = ap.parse_args()
    params = {} if args.floor is None else {"utility_floor": args.floor}
    ratios = []
    print("| servers | priority max | seed | max U/L | oasis bounds | OPT | OPT status (gap) | oasis | ratio | ILP s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for servers in (int(x) for x in args.servers.split(",")):
        for pmax in (float(x) for x in args.priorities.split(",")):
            for seed in (int(x) for x in args.seeds.split(",")):
                inst = small_instance(seed * 1000 + servers * 10 + int(pmax), servers, pmax)
                t0 = time.perf_counter()
                opt = api.run(inst, "offline-opt", {"time_limit": args.time_limit})
                ilp = time.perf_counter() - t0
                oas = api.run(inst, "oasis", params)
                b = oas["oasis"]["bounds"]
                ratio_ul = max(
                    max(b["U1"].values()) / b["L1"],
                    max(b["U2"].values()) / b["L2"],
                )
                u_opt, u_oas = opt["metrics"]["total_utility"], oas["metrics"]["total_utility"]
                ratio = u_opt / u_oas if u_oas > 0 else math.inf
                if u_opt > 1e-9:  # an instance where no schedule earns anything has no ratio
                    ratios.append(ratio)
                info = opt["offline_opt"]
                gap = "-" if info["gap"] is None else f"{info['gap']:.3f}"
                cal = oas["oasis"].get("calibration")
                used = "trace" if cal is None else cal["used"] if cal["used"] == "history" else "trace (fallback)"
                print(
                    f"| {servers} | {pmax:g} | {seed} | {ratio_ul:.3g} | {used} | {u_opt:.1f} | "
                    f"{info['status']} ({gap}) | {u_oas:.1f} | {ratio:.3f} | {ilp:.1f} |",
                    flush=True,
                )
    finite = [r for r in ratios if math.isfinite(r)]
    print()
    print(
        f"instances: {len(ratios)}; ratio mean {sum(finite) / len(finite):.3f}, min {min(finite):.3f}, "
        f"max {max(finite):.3f}; median {sorted(finite)[len(finite) // 2]:.3f}; "
        f"infinite (oasis earned 0): {len(ratios) - len(finite)}"
    )


if __name__ == "__main__":
    main()
