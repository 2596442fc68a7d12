"""OASiS Sec. V-A, Figs. 3-4: total utility, admissions and completion timeliness on preset oasis.

Usage: PYTHONPATH=. python bench/oasis_compare.py [--jobs 100,200,400] [--seeds 1,2,3]
       [--algorithms oasis,oasis:bounds=trace,fifo,drf:fixed=false,rrh,dorm] [--out bench/oasis_compare.json]
       [--worker-limit M|N]
An algorithm may carry parameters: "oasis:ratio_scale=1e-8" (several joined by ";"). `oasis` alone
is its default (bounds=arrived since issue 17: U, L over the jobs arrived so far; the recorded
tables used the former default, a replay of the trace's own first third);
`oasis:bounds=trace` uses the paper's actual values (U, L of (23)-(26) from the whole trace).
Every result passes the validator (api.run). Record the output in bench/RESULTS-oasis.md.

A thin caller of ``scheduling.reproduce`` (figure ``oasis-fig3``, also ``python -m scheduling
reproduce oasis-fig3``): the per-run rows as before (and in ``--out``), then per job count the
Markdown table of total utility over the seeds with 95% CIs, paired differences against the first
algorithm and win counts (docs/statistics.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oasis_common import preset_instance

from scheduling import repeat, reproduce
from scheduling.model import Instance


def calibration(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The bounds=history calibration of an oasis result, without its grid (None for others)."""
    cal = doc.get("oasis", {}).get("calibration")
    return None if cal is None else {k: v for k, v in cal.items() if k != "grid"}


def calibration_cell(doc: dict[str, Any]) -> str:
    """'scale s (W jobs -> replay jobs, seconds)', 'fallback (W jobs)' or '-'."""
    cal = calibration(doc)
    if cal is None:
        return "-"
    if cal["used"] != "history":
        return f"fallback ({cal['window_jobs']} jobs)"
    return f"{cal['scale']:g} ({cal['window_jobs']} -> {cal['replay_jobs']} jobs, {cal['seconds']:.1f} s)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default="100,200,400")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--algorithms", default="oasis,oasis:bounds=trace,fifo,drf:fixed=false,rrh,dorm")
    ap.add_argument("--out", default="bench/oasis_compare.json")
    ap.add_argument("--worker-limit", default="M", choices=("M", "N"), help="preset reading (oasis_common)")
    args = ap.parse_args()
    algos = []
    for label in args.algorithms.split(","):
        name, _, raw = label.partition(":")
        algos.append((label, name, dict(kv.split("=", 1) for kv in raw.split(";") if kv)))
    counts = [int(x) for x in args.jobs.split(",")]

    def builder(n: int) -> Callable[[int], Instance]:
        return lambda seed: preset_instance(n, seed, worker_limit=args.worker_limit)

    fig = dataclasses.replace(
        reproduce.FIGURES["oasis-fig3"],
        setting=f"preset oasis, worker limit {args.worker_limit}",
        algorithms=tuple(algos),
        reference=algos[0][0],
        points=tuple((str(n), builder(n)) for n in counts),
        x_label="jobs",
    )
    rows: list[dict[str, Any]] = []
    out = Path(args.out)
    last = [time.perf_counter()]
    print(
        "| jobs | seed | algorithm | total utility | admitted | completed | "
        "sensitive: mean (std) | critical: mean (std) | wall s | calibration |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")

    def note(point: str, run_row: repeat.Row, doc: dict[str, Any]) -> None:
        wall = time.perf_counter() - last[0]  # since the previous run (includes the instance of a new seed)
        last[0] = time.perf_counter()
        m = doc["metrics"]
        tl = m["timeliness"]
        n = int(point)
        rows.append(
            {
                "jobs": n,
                "seed": run_row.case.seed,
                "algorithm": run_row.label,
                "total_utility": m["total_utility"],
                "admitted": m["admitted"],
                "completed": m["completed"],
                "timeliness": tl,
                "wall_s": wall,
                "calibration": calibration(doc),
            }
        )
        out.write_text(json.dumps(rows, indent=1) + "\n")

        def fmt(c: str) -> str:
            x = tl[c]
            return "-" if x["mean"] is None else f"{x['mean']:.1f} ({x['std']:.1f})"

        print(
            f"| {n} | {run_row.case.seed} | {run_row.label} | {m['total_utility']:.1f} | {m['admitted']} | "
            f"{m['completed']} | {fmt('time-sensitive')} | {fmt('time-critical')} | {wall:.1f} | "
            f"{calibration_cell(doc)} |",
            flush=True,
        )

    run = reproduce.run_figure(fig, repeat.parse_seeds(args.seeds), progress=note)
    print("\n" + reproduce.markdown(run))


if __name__ == "__main__":
    main()
