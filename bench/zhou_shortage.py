"""The shortage the Zhou presets give the baselines, measured (issue 34; DESIGN section 9).

    PYTHONPATH=. nice -n 10 .venv/bin/python bench/zhou_shortage.py [--presets zhou-ps,zhou-allreduce]
        [--seeds 0-9] [--loads 4,1] [--bandwidth 1,2] [--algos fifo,antman,tiresias]

Per preset, load, server-bandwidth factor and algorithm, over the seeds: the range (min-max) and
median of mean wait / mean JCT, of the GPU utilisation during the arrival period and of the GPU-slots
held over GPUs x arrival period (``presets.zhou.measured_shortage``). The default's criterion: fifo's
wait share >= 0.25 and GPU utilisation during arrivals >= 0.70. Every result is validated (api.run).
Record the output in docs/results-zhou.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from scheduling import api, repeat
from scheduling.figures import variant_builder
from scheduling.presets.zhou import measured_shortage


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", default="zhou-ps,zhou-allreduce")
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--loads", default="4,1")
    ap.add_argument("--bandwidth", default="1,2")
    ap.add_argument("--algos", default="fifo,antman,tiresias")
    args = ap.parse_args()
    seeds = repeat.parse_seeds(args.seeds)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.1f} (shared)")
    print(f"\n{args.jobs} jobs, seeds {args.seeds}; each cell: median (min-max) over the seeds\n")
    head = "mean wait / mean JCT | GPU utilisation, arrival period | GPU-slots held / (GPUs x arrival period)"
    print(f"| preset | load | bw x | algorithm | {head} |")
    print("|---|---|---|---|---|---|---|")
    for preset in args.presets.split(","):
        for load in (float(x) for x in args.loads.split(",")):
            for bw in (float(x) for x in args.bandwidth.split(",")):
                build = variant_builder(preset, args.jobs, load=load, bandwidth=bw)
                instances = [(s, build(s)) for s in seeds]
                for algo in args.algos.split(","):
                    got = [measured_shortage(inst, api.run(inst, algo, seed=s)) for s, inst in instances]
                    cells = []
                    for key in ("wait_share", "gpu_busy", "held"):
                        v = [g[key] for g in got]
                        cells.append(f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})")
                    print(f"| {preset} | {load:g} | {bw:g} | {algo} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
