"""OASiS per-job decision latency (issue 4 target: median < 50 ms, p99 < 500 ms at T = 300, H = K = 50,
E 50-200, N 5-100, M 10-100; the paper reports < 1 s at T = 100).

Usage: PYTHONPATH=. python bench/oasis_latency.py [--jobs 200] [--seeds 1,2] [--small-seeds 1,2,3]
       [--bounds arrived|trace]

Part 1: preset oasis at full size (T = 300, 50 + 50 servers). Every arrival is decided in trace
order by Alg. 1 with the fast Alg. 2; the time of each decision (Alg. 2 plus booking and price
update, plus the price-log record) is measured with perf_counter (wall) and process_time (CPU of
this process: the machine is shared, so wall time includes waiting for a core).
With bounds=history (given a history trace) the bounds are calibrated once when the algorithm is
built, before slot 0: that time is reported separately ("calibration s") and is not part of any
decision. The default bounds=arrived updates U, L inside each decision (timed with it).
Part 2: the literal transcription of Alg. 2 (O(T W^2)) beside the fast path on small instances
(T = 10, workloads 25-200 units): both are timed on the same book at every arrival, and their
schedules compared.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from oasis_common import preset_instance, small_instance

from scheduling.algorithms.oasis.dp import best_schedule_fast, best_schedule_transcribed
from scheduling.algorithms.oasis.online import Oasis


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.array(xs), q))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--small-seeds", default="1,2,3,4,5,6")
    ap.add_argument("--bounds", default="arrived", choices=("arrived", "trace"), help="oasis param bounds")
    args = ap.parse_args()
    print("## Full size (T = 300, H = K = 50)")
    print()
    print(
        "| seed | jobs | max work E_i N_i | decision median ms | p90 ms | p99 ms | max ms | "
        "CPU median ms | CPU p99 ms | Alg. 2 median ms | Alg. 2 p99 ms | calibration s (CPU s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    every: list[float] = []
    for seed in (int(s) for s in args.seeds.split(",")):
        inst = preset_instance(args.jobs, seed)
        t0, c0 = time.perf_counter(), time.process_time()
        algo = Oasis(inst, {"bounds": args.bounds})
        build, build_cpu = time.perf_counter() - t0, time.process_time() - c0
        decide, cpu, alg2 = [], [], []
        for job in inst.jobs:
            shape = algo.shapes[job.job_id]
            t0 = time.perf_counter()
            best_schedule_fast(algo.book, shape)
            alg2.append((time.perf_counter() - t0) * 1e3)
            t0, c0 = time.perf_counter(), time.process_time()
            algo.arrive(job.job_id, job.arrival)
            decide.append((time.perf_counter() - t0) * 1e3)
            cpu.append((time.process_time() - c0) * 1e3)
        every += decide
        work = max(s.work for s in algo.shapes.values())
        print(
            f"| {seed} | {len(inst.jobs)} | {work} | {pct(decide, 50):.1f} | {pct(decide, 90):.1f} | "
            f"{pct(decide, 99):.1f} | {max(decide):.1f} | {pct(cpu, 50):.1f} | {pct(cpu, 99):.1f} | "
            f"{pct(alg2, 50):.1f} | {pct(alg2, 99):.1f} | {build:.1f} ({build_cpu:.1f}) |",
            flush=True,
        )
    print()
    print(f"all decisions: median {pct(every, 50):.1f} ms, p99 {pct(every, 99):.1f} ms, max {max(every):.1f} ms")
    print()
    print("## Transcription vs fast path (T = 10, 4 + 4 servers, 10 jobs per instance)")
    print()
    print("| seed | jobs | max work | transcription median ms | max ms | fast median ms | max ms | same schedules |")
    print("|---|---|---|---|---|---|---|---|")
    for seed in (int(s) for s in args.small_seeds.split(",")):
        inst = small_instance(seed, 8, 100.0)
        algo = Oasis(inst, {})
        lit_ms, fast_ms, same = [], [], 0
        for job in inst.jobs:
            shape = algo.shapes[job.job_id]
            t0 = time.perf_counter()
            lit = best_schedule_transcribed(algo.book, shape)
            lit_ms.append((time.perf_counter() - t0) * 1e3)
            t0 = time.perf_counter()
            fast = best_schedule_fast(algo.book, shape)
            fast_ms.append((time.perf_counter() - t0) * 1e3)
            same += (lit is None and fast is None) or (
                lit is not None and fast is not None and (lit.completion, lit.slots) == (fast.completion, fast.slots)
            )
            algo.arrive(job.job_id, job.arrival)
        work = max(s.work for s in algo.shapes.values())
        print(
            f"| {seed} | {len(inst.jobs)} | {work} | {pct(lit_ms, 50):.1f} | {max(lit_ms):.1f} | "
            f"{pct(fast_ms, 50):.2f} | {max(fast_ms):.2f} | {same}/{len(inst.jobs)} |",
            flush=True,
        )
    print()
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
