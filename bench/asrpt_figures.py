"""A-SRPT Sec. V-B-2 sweeps: total JCT vs number of jobs (Fig. 6), share of single-GPU jobs (Fig. 7),
NIC bandwidth (Fig. 8) and predictor (Fig. 9), at a reduced scale.

Every case is a *history* of jobs followed by a *window* (as in bench/asrpt_compare.py): the
predictor is fitted on the history and predicts the window's jobs out of sample; the window alone
is simulated with those predictions (``predictor=trace``). Baselines use the random forest, as in
the paper. The cluster is the asrpt preset at ``--size`` (default 1.0: the paper's 250 servers of
8 GPUs; smaller clusters keep the preset's GPU demands up to 128, which then block a strict-order
queue far more often).

* Fig. 6: windows of ``--jobs`` jobs (the paper: 37,500-150,000 jobs on 250 servers).
* Fig. 7: the share of single-GPU job groups set to 80%, 60%, 40%, 20%, 0%; the other groups keep
  the preset's distribution of multi-GPU demands (the paper: jobs "randomly set for single-GPU or
  distributed training").
* Fig. 8: 0% single-GPU jobs, NIC bandwidth 1, 5, 10, 25, 50 Gbps (only the cluster changes;
  iteration counts stay, so slower networks mean longer runs).
* Fig. 9: A-SRPT with each predictor, and the baselines with the random forest.

    PYTHONPATH=. python bench/asrpt_figures.py [--size 1.0] [--seeds 0,1] [--figs 6,7,8,9]

Every run is validated (api.run). Markdown goes to stdout: per point the median and mean total
JCT over the seeds with 95% CIs, paired differences against A-SRPT and win counts
(scheduling/reproduce.py, docs/statistics.md), and whether A-SRPT is best across the seeds;
bench/RESULTS-asrpt.md records a run. The instances come from ``scheduling.reproduce.asrpt_window``
(also behind ``python -m scheduling reproduce asrpt-fig6``); since it was moved there the random
forest is seeded with the case's seed (it was seeded with 0 for the runs recorded before).
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from scheduling import repeat, reproduce
from scheduling.model import Instance

ALGORITHMS = ("asrpt", "spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime")
PREDICTORS = ("perfect", "random-forest", "random-forest-mae", "mean", "median")
BASELINES = [(a, a, {"predictor": "trace"}) for a in ALGORITHMS[1:]]


def builder(jobs: int, size: float, opts: dict[str, Any]) -> reproduce.Builder:
    def build(seed: int) -> Instance:
        n = opts.get("jobs", jobs)
        return reproduce.asrpt_window(n, seed, size, opts.get("share"), opts.get("nic"))[0]

    return build


def sweep(
    title: str, label: str, points: list[tuple[str, dict[str, Any]]], seeds: list[int], jobs: int, size: float
) -> None:
    fig = dataclasses.replace(
        reproduce.FIGURES["asrpt-fig6"],
        title=title,
        setting=f"preset asrpt at size {size:g}, history then window, random-forest predictions",
        points=tuple((name, builder(jobs, size, opts)) for name, opts in points),
        x_label=label,
    )
    run = reproduce.run_figure(fig, seeds)
    print(reproduce.markdown(run), flush=True)


def predictors(seeds: list[int], jobs: int, size: float) -> None:
    print("\n### Fig. 9: predictors (preset GPU demands)\n")
    print("| seed | predictor | mean abs. error (iterations) | A-SRPT total JCT | best baseline (random forest) |")
    print("|---|---|---|---|---|")
    for seed in seeds:
        rf_instance, _ = reproduce.asrpt_window(jobs, seed, size)
        rows = repeat.run([repeat.Case(f"seed={seed}", seed, None, rf_instance)], BASELINES)
        base = min(float(r.metrics["total_jct"]) for r in rows)
        for kind in PREDICTORS:
            instance, error = reproduce.asrpt_window(jobs, seed, size, predictor=kind)
            case = repeat.Case(f"seed={seed}", seed, None, instance)
            (row,) = repeat.run([case], [("asrpt", "asrpt", {"predictor": "trace"})])
            print(f"| {seed} | {kind} | {error or 0:.0f} | {row.metrics['total_jct']:.0f} | {base:.0f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=float, default=1.0)
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--jobs", type=int, default=1000, help="window jobs of Figs. 7-9")
    ap.add_argument("--figs", default="6,7,8,9")
    args = ap.parse_args()
    seeds = repeat.parse_seeds(args.seeds)
    figs = set(args.figs.split(","))
    if "6" in figs:
        points = [(str(n), {"jobs": n}) for n in (250, 500, 1000, 1500)]
        sweep("Fig. 6: number of jobs", "window jobs", points, seeds, args.jobs, args.size)
    if "7" in figs:
        points = [(f"{int(100 * s)}%", {"share": s}) for s in (0.8, 0.6, 0.4, 0.2, 0.0)]
        sweep("Fig. 7: share of single-GPU jobs", "single-GPU groups", points, seeds, args.jobs, args.size)
    if "8" in figs:
        points = [(f"{g:g} Gbps", {"share": 0.0, "nic": g}) for g in (1.0, 5.0, 10.0, 25.0, 50.0)]
        sweep("Fig. 8: NIC bandwidth (0% single-GPU jobs)", "NIC", points, seeds, args.jobs, args.size)
    if "9" in figs:
        predictors(seeds, args.jobs, args.size)


if __name__ == "__main__":
    main()
