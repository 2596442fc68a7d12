"""Tuning of the `bounds=history` estimate of OASiS (history window share W/T) on tuning seeds only
(>= 100; the results pages evaluate on seeds 1-5).

Usage: PYTHONPATH=. python bench/oasis_history_tune.py [--jobs 100,200,400] [--seeds 100,101,102]
       [--shares 0.2,0.3333,0.5] [--extra rrh,oasis:bounds=trace]
Per (jobs, seed): total utility of `oasis` with bounds=history for each history_share (the chosen
scale on the replay's U/L, the window's and the replay's job counts, the calibration's wall time),
and of the --extra algorithms for reference. Every result passes the validator (api.run).
"""

from __future__ import annotations

import argparse
import time

from oasis_common import preset_instance

from scheduling import api


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default="100,200,400")
    ap.add_argument("--seeds", default="100,101,102")
    ap.add_argument("--shares", default="0.2,0.3333,0.5")
    ap.add_argument("--extra", default="rrh,oasis:bounds=trace")
    args = ap.parse_args()
    print(
        "| jobs | seed | run | total utility | admitted | window jobs | replay jobs | scale | calibration s | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.jobs.split(",")):
        for seed in (int(s) for s in args.seeds.split(",")):
            inst = preset_instance(n, seed)
            runs = [(f"history_share={s}", "oasis", {"history_share": s}) for s in args.shares.split(",")]
            for label in (x for x in args.extra.split(",") if x):
                name, _, raw = label.partition(":")
                runs.append((label, name, dict(kv.split("=", 1) for kv in raw.split(";") if kv)))
            for label, name, params in runs:
                t0 = time.perf_counter()
                doc = api.run(inst, name, params, seed=seed)
                wall = time.perf_counter() - t0
                m = doc["metrics"]
                cal = doc.get("oasis", {}).get("calibration", {})
                cells = [cal.get(k, "-") for k in ("window_jobs", "replay_jobs", "scale", "seconds")]
                if cal.get("used") == "trace":
                    cells[1] = "fallback"
                print(
                    f"| {n} | {seed} | {label} | {m['total_utility']:.0f} | {m['admitted']} | "
                    + " | ".join(f"{c:g}" if isinstance(c, float) else str(c) for c in cells)
                    + f" | {wall:.1f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
