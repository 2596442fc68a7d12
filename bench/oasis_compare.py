"""OASiS Sec. V-A, Figs. 3-4: total utility, admissions and completion timeliness on preset oasis.

Usage: PYTHONPATH=. python bench/oasis_compare.py [--jobs 100,200,400] [--seeds 1,2,3]
       [--algorithms oasis,oasis:bounds=trace,fifo,drf:fixed=false,rrh,dorm] [--out bench/oasis_compare.json]
       [--worker-limit M|N]
An algorithm may carry parameters: "oasis:ratio_scale=1e-8" (several joined by ";"). `oasis` alone
is its default (bounds=arrived since issue 17: U, L over the jobs arrived so far; the recorded
tables used the former default, a replay of the trace's own first third);
`oasis:bounds=trace` uses the paper's actual values (U, L of (23)-(26) from the whole trace).
Every result passes the validator (api.run). Record the output in bench/RESULTS-oasis.md.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from oasis_common import preset_instance

from scheduling import api


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
    rows = []
    out = Path(args.out)
    print(
        "| jobs | seed | algorithm | total utility | admitted | completed | "
        "sensitive: mean (std) | critical: mean (std) | wall s | calibration |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.jobs.split(",")):
        for seed in (int(s) for s in args.seeds.split(",")):
            inst = preset_instance(n, seed, worker_limit=args.worker_limit)
            for label in args.algorithms.split(","):
                name, _, raw = label.partition(":")
                params = dict(kv.split("=", 1) for kv in raw.split(";") if kv)
                t0 = time.perf_counter()
                doc = api.run(inst, name, params, seed=seed)
                wall = time.perf_counter() - t0
                m = doc["metrics"]
                tl = m["timeliness"]
                row = {
                    "jobs": n,
                    "seed": seed,
                    "algorithm": label,
                    "total_utility": m["total_utility"],
                    "admitted": m["admitted"],
                    "completed": m["completed"],
                    "timeliness": tl,
                    "wall_s": wall,
                    "calibration": calibration(doc),
                }
                rows.append(row)
                out.write_text(json.dumps(rows, indent=1) + "\n")

                def fmt(c: str, tl: dict[str, dict[str, float]] = tl) -> str:
                    x = tl[c]
                    return "-" if x["mean"] is None else f"{x['mean']:.1f} ({x['std']:.1f})"

                print(
                    f"| {n} | {seed} | {label} | {m['total_utility']:.1f} | {m['admitted']} | {m['completed']} | "
                    f"{fmt('time-sensitive')} | {fmt('time-critical')} | {wall:.1f} | {calibration_cell(doc)} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
