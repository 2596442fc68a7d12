"""Zhou et al. Sec. 7.2, Fig. 8 (and Figs. 11, 12): total weight A_maxweight (`zhou-maxweight`)
schedules by a deadline tau against Jain et al.'s greedy (`jain-greedy`), every job present at
slot 0 (the offline batch problem (7)). Both run through `api.run`, so every schedule is validated;
the figure is the weight of the jobs completed (by construction, by the paper's time tau,
slot tau - 1; checked).

    PYTHONPATH=. .venv/bin/python bench/zhou_offline.py --jobs 20,40,60 --tau 64 --seeds 0,1,2 [--F 1,10]
    [--servers 75,150,300]  (Fig. 12: the preset's cluster redrawn as H servers at about the same
    total capacity, as in bench/zhou_figures.py)
    [--order arrival|weight|density]  (A_maxweight's job order)
    [--lam 1]  (A_maxweight with lambda = 1: every price 0, so no job is turned away by u_j > 0 and
    each gets its earliest-completing schedule: the greedy's rule in A_maxweight's order)
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import statistics
from typing import Any

from zhou_figures import resized

from scheduling import api, presets
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance


def weight_by(doc: dict[str, Any], tau: int) -> float:
    """Total weight of the jobs completed by the paper's time ``tau`` (slot tau - 1; the objective of
    problem (7))."""
    done = [j for j in doc["jobs"] if j["completion"] is not None]
    assert all(j["completion"] <= tau - 1 for j in done), "a batch job completed after its deadline"
    return float(sum(j["weight"] for j in done))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="zhou-ps")
    ap.add_argument("--jobs", default="20,40,60")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--tau", type=int, default=64)
    ap.add_argument("--F", default="1")
    ap.add_argument("--servers", default="150", help="H values; 150 is the preset's own cluster")
    ap.add_argument("--order", default="arrival", help="A_maxweight's job order: arrival, weight or density")
    ap.add_argument("--lam", type=float, default=0.0, help="A_maxweight's lambda; 0 = 2 T H R F + 1")
    args = ap.parse_args()
    print(
        f"| jobs | H | F | A_maxweight total weight | Jain greedy total weight | ratio |"
        f"  ({args.preset}, tau={args.tau}, order={args.order}, lam={args.lam:g})"
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
            params = {"tau": args.tau, "F": f, "lam": args.lam, "T": 300, "order": args.order}
            mw.append(weight_by(api.run(inst, "zhou-maxweight", params, seed=seed), args.tau))
            jg.append(weight_by(api.run(inst, "jain-greedy", {"tau": args.tau}, seed=seed), args.tau))
        a, b = statistics.mean(mw), statistics.mean(jg)
        print(f"| {n} | {h} | {f:g} | {a:.0f} | {b:.0f} | {a / b if b else float('nan'):.2f} |", flush=True)


if __name__ == "__main__":
    main()
