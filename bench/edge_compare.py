"""Edge-cloud paper Sec. V-C (Figs. 7, 9): total JCT, JCT rate (vs srtf) and preemptions on preset edge-cloud.

Usage: PYTHONPATH=. python bench/edge_compare.py [--jobs 300] [--seeds 0-9] [--size 1.0]

A thin caller of ``scheduling.reproduce`` (figure ``edge-fig7``, also ``python -m scheduling
reproduce edge-fig7``): the Markdown table of total JCT over the seeds with 95% CIs, paired
differences against srtf and win counts (docs/statistics.md), then the per-seed JCT rates and
preemptions ("wall s": time since the previous run ended, so the first run of a seed includes
generating its instance). Every result passes the validator (api.run). Record the output in
bench/RESULTS-edge.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

from scheduling import repeat, reproduce


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--seeds", default="0-4")
    ap.add_argument("--size", type=float, default=1.0)
    args = ap.parse_args()
    base = reproduce.FIGURES["edge-fig7"]
    fig = dataclasses.replace(
        base,
        setting=f"preset edge-cloud, {args.jobs} jobs, size {args.size:g}",
        points=((f"{args.jobs} jobs", reproduce.preset_builder("edge-cloud", args.jobs, args.size)),),
    )
    walls: dict[tuple[str, int], float] = {}
    chunks: dict[tuple[str, int], Any] = {}
    last = [time.perf_counter()]

    def note(_point: str, row: repeat.Row, doc: dict[str, Any]) -> None:
        now = time.perf_counter()
        walls[row.label, row.case.seed] = now - last[0]
        last[0] = now
        chunks[row.label, row.case.seed] = doc.get("edge_cloud", {}).get("chunk_preemptions", "-")

    run = reproduce.run_figure(fig, repeat.parse_seeds(args.seeds), progress=note)
    print(reproduce.markdown(run))
    rows = run.points[0].rows
    srtf = {r.case.seed: r.metrics["total_jct"] for r in rows if r.label == "srtf"}
    print("| seed | algorithm | total JCT (slots) | JCT rate | preemptions | chunk preemptions | makespan | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        m, seed = r.metrics, r.case.seed
        rate = m["total_jct"] / srtf[seed] if srtf.get(seed) else float("nan")
        print(
            f"| {seed} | {r.label} | {m['total_jct']:.0f} | {rate:.3f} | {m['preemptions']} | "
            f"{chunks[r.label, seed]} | {m['makespan']} | {walls[r.label, seed]:.1f} |"
        )


if __name__ == "__main__":
    main()
