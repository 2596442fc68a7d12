"""Wall time of the shared baselines on the Zhou et al. presets at the paper's scale (150 servers,
uniform arrivals), with the total weighted completion time beside it so that two checkouts can be
compared for speed and for identical results.

    PYTHONPATH=. .venv/bin/python bench/zhou_baselines_speed.py --jobs 300 --algos "drf,drf:fixed=true"
    .venv/bin/python bench/zhou_baselines_speed.py --root /tmp/old-checkout ...   (time another checkout's code)
"""

from __future__ import annotations

import argparse
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".", help="checkout whose scheduling package is timed")
    ap.add_argument("--presets", default="zhou-ps,zhou-allreduce")
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--algos", default="fifo,drf,drf:fixed=true,antman,tiresias", help="name[:k=v;k=v],...")
    args = ap.parse_args()
    sys.path[:0] = [args.root]
    # Imported after --root is on the path, so that the chosen checkout's code runs.
    from bench.zhou_compare import instance, parse
    from scheduling import api

    for preset in args.presets.split(","):
        inst = instance(preset, args.jobs, args.seed)
        for spec in args.algos.split(","):
            name, params = parse(spec)
            t0 = time.perf_counter()
            doc = api.run(inst, name, params, seed=args.seed)
            secs = time.perf_counter() - t0
            wc = doc["metrics"]["total_weighted_completion"]
            where = f"{args.root} {preset} jobs={args.jobs} seed={args.seed} {spec}"
            print(f"{where}: {secs:.1f} s, sum_wc={wc:.6g}", flush=True)


if __name__ == "__main__":
    main()
