"""Zhou et al. Sec. 7.2, Fig. 8 (and Fig. 11): total weight A_maxweight schedules by a deadline tau
against Jain et al.'s greedy [44], every job present at time 0 (the offline batch problem (7)).

    PYTHONPATH=. .venv/bin/python bench/zhou_offline.py --jobs 20,40,60 --tau 64 --seeds 0,1,2 [--F 1,10]
    [--servers 75,150,300]  (Fig. 12: the preset's cluster redrawn as H servers at about the same
    total capacity, as in bench/zhou_figures.py)
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import statistics

from zhou_figures import resized

from scheduling import presets
from scheduling.algorithms.zhou.jain import jain_greedy, maxweight_batch
from scheduling.algorithms.zhou.online import Params, Zhou
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="zhou-ps")
    ap.add_argument("--jobs", default="20,40,60")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--tau", type=int, default=64)
    ap.add_argument("--F", default="1")
    ap.add_argument("--servers", default="150", help="H values; 150 is the preset's own cluster")
    ap.add_argument("--order", default="arrival", help="A_maxweight's job order: arrival, weight or density")
    args = ap.parse_args()
    print(
        f"| jobs | H | F | A_maxweight total weight | Jain greedy total weight | ratio |"
        f"  ({args.preset}, tau={args.tau})"
    )
    print("|---|---|---|---|---|---|")
    for n, h, f in itertools.product(
        (int(x) for x in args.jobs.split(",")),
        [int(x) for x in args.servers.split(",")],
        [float(x) for x in args.F.split(",")],
    ):
        mw, jg = [], []
        for seed in (int(s) for s in args.seeds.split(",")):
            files = presets.build(args.preset, jobs=n, seed=seed)
            cluster = parse_cluster(files.cluster)
            if h != len(cluster.servers):
                cluster = resized(cluster, h)
            jobs = [dataclasses.replace(j, arrival=0) for j in parse_trace(files.trace, cluster, files.trace_name)]
            inst = Instance(cluster, tuple(jobs))
            params = Params(
                F=f, lam=0.0, T=300, alpha=0, order=args.order, start="paper", ra_order="ascending", fast=True
            )
            mw.append(maxweight_batch(Zhou(inst, params), jobs, args.tau))
            jg.append(jain_greedy(Zhou(inst, params), jobs, args.tau))
        a, b = statistics.mean(mw), statistics.mean(jg)
        print(f"| {n} | {h} | {f:g} | {a:.0f} | {b:.0f} | {a / b if b else float('nan'):.2f} |", flush=True)


if __name__ == "__main__":
    main()
