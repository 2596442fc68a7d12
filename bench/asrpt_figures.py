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

Every run is validated (api.run) and must complete every job. Markdown goes to stdout;
bench/RESULTS-asrpt.md records a run.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from scheduling import api, presets
from scheduling.algorithms.asrpt.predictors import predict
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance

ALGORITHMS = ("asrpt", "spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime")
PREDICTORS = ("perfect", "random-forest", "random-forest-mae", "mean", "median")


@contextmanager
def single_gpu_share(share: float | None) -> Iterator[None]:
    """Generate presets with ``share`` of single-GPU groups (None: the preset's own 72%).

    The override goes to ``scheduling.presets.asrpt``, whose generator reads it there; rebinding the
    package's re-exported ``presets.ASRPT_GPU_SHARES`` would not reach the generator.
    """
    original = presets.asrpt.ASRPT_GPU_SHARES
    if share is not None:
        multi = [(g, p) for g, p in original if g > 1]
        total = sum(p for _, p in multi)
        presets.asrpt.ASRPT_GPU_SHARES = ((1, share), *((g, (1 - share) * p / total) for g, p in multi))
    try:
        yield
    finally:
        presets.asrpt.ASRPT_GPU_SHARES = original


def case(jobs: int, seed: int, size: float, share: float | None = None, nic_gbps: float | None = None) -> Any:
    """(cluster doc, every row) of a preset with ``jobs`` history + ``jobs`` window jobs."""
    with single_gpu_share(share):
        files = presets.build("asrpt", jobs=2 * jobs, seed=seed, size=size)
    cluster = json.loads(files.cluster)
    if nic_gbps is not None:
        for server in cluster["servers"]:
            server["nic_bw_gbps"] = nic_gbps
    return cluster, json.loads(files.trace)


def window(cluster_doc: dict[str, Any], rows: list[dict[str, Any]], kind: str) -> tuple[Instance, float]:
    """The second half of ``rows`` with ``kind`` predictions fitted on the first half, and their error."""
    cluster = parse_cluster(json.dumps(cluster_doc))
    every = parse_trace(json.dumps(rows), cluster, "trace.json", "json")
    half = len(rows) // 2
    pred = predict(every[:half], every, kind, 1.0, np.random.default_rng(0))
    win = [dict(r, predicted_iterations=round(pred.values[r["job_id"]])) for r in rows[half:]]
    instance = Instance(cluster, parse_trace(json.dumps(win), cluster, "trace.json", "json"))
    error = float(pred.errors(instance.jobs)["mean_abs_error"] or 0.0)
    return instance, error


def total_jct(instance: Instance, algorithm: str) -> float:
    doc = api.run(instance, algorithm, {"predictor": "trace"}, seed=0)  # raises if the validator objects
    assert doc["metrics"]["completed"] == len(instance.jobs), f"{algorithm} left jobs unfinished"
    return float(doc["metrics"]["total_jct"])


def sweep(
    title: str, label: str, points: list[tuple[str, dict[str, Any]]], seeds: list[int], jobs: int, size: float
) -> None:
    print(f"\n### {title}\n")
    print(
        "Total JCT (60-s slots), summed over seeds "
        + ",".join(map(str, seeds))
        + "; best in bold; last column: A-SRPT vs the best baseline.\n"
    )
    print(f"| {label} | " + " | ".join(ALGORITHMS) + " | A-SRPT vs best baseline |")
    print("|---" * (len(ALGORITHMS) + 2) + "|")
    for name, opts in points:
        sums = dict.fromkeys(ALGORITHMS, 0.0)
        for seed in seeds:
            cluster, rows = case(opts.get("jobs", jobs), seed, size, opts.get("share"), opts.get("nic"))
            instance, _ = window(cluster, rows, "random-forest")
            for algo in ALGORITHMS:
                sums[algo] += total_jct(instance, algo)
        best = min(sums.values())
        cells = " | ".join(f"**{v:.0f}**" if v == best else f"{v:.0f}" for v in sums.values())
        base = min(sums[a] for a in ALGORITHMS[1:])
        print(f"| {name} | {cells} | {100 * (sums['asrpt'] / base - 1):+.0f}% |", flush=True)


def predictors(seeds: list[int], jobs: int, size: float) -> None:
    print("\n### Fig. 9: predictors (preset GPU demands)\n")
    print("| seed | predictor | mean abs. error (iterations) | A-SRPT total JCT | best baseline (random forest) |")
    print("|---|---|---|---|---|")
    for seed in seeds:
        cluster, rows = case(jobs, seed, size)
        rf_instance, _ = window(cluster, rows, "random-forest")
        base = min(total_jct(rf_instance, a) for a in ALGORITHMS[1:])
        for kind in PREDICTORS:
            instance, error = window(cluster, rows, kind)
            print(f"| {seed} | {kind} | {error:.0f} | {total_jct(instance, 'asrpt'):.0f} | {base:.0f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=float, default=1.0)
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--jobs", type=int, default=1000, help="window jobs of Figs. 7-9")
    ap.add_argument("--figs", default="6,7,8,9")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
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
