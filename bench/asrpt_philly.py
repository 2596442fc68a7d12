"""A-SRPT vs spjf, spwf, wcs-* (total JCT) on several windows of the imported Philly trace.

The Philly trace (rigid GPU jobs) is imported (`python -m scheduling import --format generic-gpu`)
and turned into stage-graph jobs (`scheduling.algorithms.asrpt.philly`). ``--windows`` windows of
``--window`` consecutive jobs are spread evenly over the trace; each is preceded by ``--history``
jobs on which the random forest is fitted (the window's predictions are out of sample, simulated
with ``predictor=trace``; every algorithm gets the same predictions, as in Sec. V-B-2-d).

Each window is simulated on a cluster of 8-GPU servers (10 Gbps NIC, 300 GB/s NVLink) sized so
that the window offers ``load`` of its GPU time (GPU-seconds / (arrival span x GPUs)); the shipped
trace does not give Philly's cluster size. The paper replays a trace of a 6,000-GPU cluster on
2,000 GPUs; ``--loads 0.8 2.4`` covers a lightly loaded cluster and the paper's relation (a third
of the GPUs of a cluster at load 0.8).

    PYTHONPATH=. python bench/asrpt_philly.py [--windows 8] [--window 1200] [--history 3000] [--loads 0.8 2.4]

``--errors`` skips the simulations and prints, per window, the mean absolute prediction error
(iterations, over the window's jobs) of every predictor fitted on that window's history.
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

RUNS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("asrpt (completion)", "asrpt", {"release": "completion"}),
    ("asrpt (arrival)", "asrpt", {"release": "arrival"}),
    ("spjf", "spjf", {}),
    ("spwf", "spwf", {}),
    ("wcs-duration", "wcs-duration", {}),
    ("wcs-workload", "wcs-workload", {}),
    ("wcs-subtime", "wcs-subtime", {}),
)


def philly_rows() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "philly.json"
        cmd = [sys.executable, "-m", "scheduling", "import", "--format", "generic-gpu"]
        cmd += ["--input", "/work/shared/traces/philly/philly.csv", "--out", str(out)]
        subprocess.run(cmd, check=True, capture_output=True)
        return list(json.loads(out.read_text()))


def window_instance(
    cluster: dict[str, Any], rows: list[dict[str, Any]], history: int, load: float
) -> tuple[Instance, int, float]:
    """The window (rows after ``history``) with random-forest predictions, on a cluster offered ``load``."""
    win = rows[history:]
    gpu_seconds = sum(r["gpus"] * r["work"] * r["batch_time"] for r in win)
    span = (win[-1]["arrival"] - win[0]["arrival"] + 1) * cluster["slot_seconds"]
    servers = max(math.ceil(gpu_seconds / (span * 8 * load)), math.ceil(max(r["gpus"] for r in win) / 8))
    doc = json.loads(json.dumps(cluster))
    doc["servers"][0]["count"] = servers
    parsed = parse_cluster(json.dumps(doc))
    every = parse_trace(json.dumps(rows), parsed, "trace.json", "json")
    pred = predict(every, "random-forest", history / len(rows), np.random.default_rng(0))
    window_rows = [dict(r, predicted_iterations=round(pred.values[r["job_id"]])) for r in win]
    instance = Instance(parsed, parse_trace(json.dumps(window_rows), parsed, "trace.json", "json"))
    error = float(pred.errors(instance.jobs)["mean_abs_error"] or 0.0)
    return instance, servers, error


PREDICTORS = ("perfect", "random-forest", "random-forest-mae", "mean", "median")


def print_errors(cluster: dict[str, Any], rows: list[dict[str, Any]], starts: Any, history: int, span: int) -> None:
    """Mean absolute error per predictor and window (fitted on the window's history, as simulated)."""
    parsed = parse_cluster(json.dumps(cluster))
    print("\n### Prediction error per window (mean absolute error over the window's jobs, iterations)\n")
    print(f"| window (first job) | {' | '.join(PREDICTORS)} | best non-perfect |")
    print("|---" * (len(PREDICTORS) + 2) + "|")
    for start in starts:
        every = parse_trace(json.dumps(rows[start : start + span]), parsed, "trace.json", "json")
        window_ids = {r["job_id"] for r in rows[start + history : start + span]}
        window = [j for j in every if j.job_id in window_ids]
        err = {}
        for kind in PREDICTORS:
            pred = predict(every, kind, history / span, np.random.default_rng(0))
            err[kind] = float(pred.errors(window)["mean_abs_error"] or 0.0)
        best = min(PREDICTORS[1:], key=lambda k: err[k])
        print(f"| {start + history} | {' | '.join(f'{err[k]:.0f}' for k in PREDICTORS)} | {best} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--windows", type=int, default=8)
    parser.add_argument("--window", type=int, default=1200)
    parser.add_argument("--history", type=int, default=3000)
    parser.add_argument("--loads", type=float, nargs="+", default=[0.8, 2.4])
    parser.add_argument("--errors", action="store_true", help="only the predictors' errors per window")
    args = parser.parse_args()
    cluster = json.loads(presets.build("asrpt", jobs=1).cluster)
    rows = sorted(convert(philly_rows(), cluster, seed=0), key=lambda r: (r["arrival"], r["job_id"]))
    span = args.history + args.window
    starts = np.linspace(0, len(rows) - span, args.windows).astype(int)
    if args.errors:
        print_errors(cluster, rows, starts, args.history, span)
        return
    names = [name for name, _a, _p in RUNS]
    for load in args.loads:
        print(f"\n### load {load}: {args.windows} windows of {args.window} jobs after {args.history} history jobs\n")
        print("Total JCT in 60-s slots (best in bold); last column: A-SRPT (arrival) vs the best baseline.\n")
        print(f"| window (first job) | servers | RF error | {' | '.join(names)} | winner | arrival vs best baseline |")
        print("|---" * (len(names) + 5) + "|")
        wins: dict[str, int] = dict.fromkeys(names, 0)
        walls: dict[str, float] = dict.fromkeys(names, 0.0)
        for start in starts:
            case = rows[start : start + span]
            instance, servers, error = window_instance(cluster, case, args.history, load)
            jct: dict[str, float] = {}
            for name, algo, params in RUNS:
                t0 = time.perf_counter()
                doc = api.run(instance, algo, {"predictor": "trace", **params}, seed=0)  # validated
                walls[name] += time.perf_counter() - t0
                assert doc["metrics"]["completed"] == len(instance.jobs)
                jct[name] = doc["metrics"]["total_jct"]
            best = min(jct.values())
            winners = [n for n in names if jct[n] == best]
            winner = " = ".join(winners)  # a tie is nobody's win
            if len(winners) == 1:
                wins[winners[0]] += 1
            base = min(jct[n] for n in names[2:])
            cells = " | ".join(f"**{jct[n]:.0f}**" if jct[n] == best else f"{jct[n]:.0f}" for n in names)
            print(
                f"| {start + args.history} | {servers} | {error:.0f} | {cells} | {winner} "
                f"| {100 * (jct['asrpt (arrival)'] / base - 1):+.0f}% |",
                flush=True,
            )
        print("\nWindows won outright: " + ", ".join(f"{n} {w}" for n, w in wins.items()))
        print("Wall per run (s, mean): " + ", ".join(f"{n} {walls[n] / len(starts):.1f}" for n in names))


if __name__ == "__main__":
    main()
