"""A-SRPT vs spjf, spwf, wcs-* (total JCT) and the predictors' errors, on the asrpt preset and Philly.

Each case is a *history* of jobs followed by a *window* of jobs. Every predictor is fitted on the
history (with the true iterations) and predicts the window's jobs (out of sample); the window alone
is simulated with those predictions (``predictor=trace``). Baselines use the random forest, as in
Sec. V-B-2-d. Results (markdown) go to stdout; bench/RESULTS-asrpt.md records a run.

    PYTHONPATH=. python bench/asrpt_compare.py [--window 1500] [--history 3000]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from scheduling import api, presets
from scheduling.algorithms.asrpt.philly import convert
from scheduling.algorithms.asrpt.predictors import predict
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance

BASELINES = ("spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime")
PREDICTORS = ("perfect", "random-forest", "mean", "median")


def run_case(name: str, cluster_doc: dict[str, Any], rows: list[dict[str, Any]], history: int) -> None:
    cluster = parse_cluster(json.dumps(cluster_doc))
    every = parse_trace(json.dumps(rows), cluster, "trace.json", "json")
    print(
        f"\n### {name}: {len(rows) - history} jobs simulated after {history} history jobs, "
        f"{len(cluster.servers)} servers x 8 GPUs\n"
    )
    errors, results = {}, {}
    for kind in PREDICTORS:
        pred = predict(every[:history], every, kind, 1.0, np.random.default_rng(0))
        window_rows = [dict(r, predicted_iterations=round(pred.values[r["job_id"]])) for r in rows[history:]]
        instance = Instance(cluster, parse_trace(json.dumps(window_rows), cluster, "trace.json", "json"))
        errors[kind] = float(pred.errors(instance.jobs)["mean_abs_error"] or 0.0)
        algos = ["asrpt"] + (list(BASELINES) if kind == "random-forest" else [])
        for algo in algos:
            t0 = time.perf_counter()
            doc = api.run(instance, algo, {"predictor": "trace"}, seed=0)
            results[(algo, kind)] = (doc["metrics"]["total_jct"], doc["metrics"]["completed"], time.perf_counter() - t0)
    print("| predictor | mean abs. error (iterations) | A-SRPT total JCT (slots) |")
    print("|---|---|---|")
    for kind in PREDICTORS:
        print(f"| {kind} | {errors[kind]:.0f} | {results[('asrpt', kind)][0]:.0f} |")
    ours = results[("asrpt", "random-forest")][0]
    print("\n| algorithm (random forest) | total JCT (slots) | completed | A-SRPT reduction | wall (s) |")
    print("|---|---|---|---|---|")
    for algo in ("asrpt", *BASELINES):
        jct, done, wall = results[(algo, "random-forest")]
        red = "" if algo == "asrpt" else f"{100 * (1 - ours / jct):.0f}%"
        print(f"| {algo} | {jct:.0f} | {done} | {red} | {wall:.1f} |")
    sys.stdout.flush()


def preset_case(window: int, history: int, size: float, seed: int) -> None:
    files = presets.build("asrpt", jobs=history + window, seed=seed, size=size)
    rows = sorted(json.loads(files.trace), key=lambda r: (r["arrival"], r["job_id"]))
    run_case(f"preset asrpt (seed {seed}, size {size})", json.loads(files.cluster), rows, history)


def philly_case(window: int, history: int, load: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "philly.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "scheduling",
                "import",
                "--format",
                "generic-gpu",
                "--input",
                "/work/shared/traces/philly/philly.csv",
                "--out",
                str(out),
                "--limit",
                str(history + window),
            ],
            check=True,
            capture_output=True,
        )
        raw = json.loads(out.read_text())
    cluster = json.loads(presets.build("asrpt", jobs=1).cluster)
    rows = sorted(convert(raw, cluster, seed=0), key=lambda r: (r["arrival"], r["job_id"]))
    win = rows[history:]
    # Size the cluster so that the window offers `load` of its GPU time (Philly's own cluster is not given).
    gpu_seconds = sum(r["gpus"] * r["work"] * r["batch_time"] for r in win)
    span = (win[-1]["arrival"] - win[0]["arrival"] + 1) * cluster["slot_seconds"]
    servers = max(math.ceil(gpu_seconds / (span * 8 * load)), math.ceil(max(r["gpus"] for r in win) / 8))
    cluster["servers"][0]["count"] = servers
    run_case(f"Philly (first {history + window} jobs, load {load})", cluster, rows, history)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=int, default=1500)
    parser.add_argument("--history", type=int, default=3000)
    args = parser.parse_args()
    preset_case(args.window, args.history, size=0.1, seed=1)
    philly_case(args.window, args.history, load=0.8)


if __name__ == "__main__":
    main()
