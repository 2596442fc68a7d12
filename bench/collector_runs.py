"""Benchmark: one run in a long-lived process with Python's default collector thresholds and inside
``scheduling.collector.fewer_collections`` (what a Celery worker does for each run), alternating.

    PYTHONPATH=. nice .venv/bin/python bench/collector_runs.py --trace /tmp/philly/trace.csv \\
        --servers 100 --algorithms srtf,fifo --rounds 2

Each round runs ``scheduling.api.run`` (simulate, result document, validation) in this process,
first one way then the other (the order swapped every round), on an instance loaded once; the
process's own thresholds stay the defaults between runs. With ``--check``, each round also runs
the worker's trace check (``workers.checks.check_trace``: parse the trace against the cluster,
summarize it) on the same files. Prints wall and CPU per run, the collections counted during it
(gc.callbacks) and their time. Record results in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_scale import GcPauses
from tiresias_common import machine
from trace_replay import gpu_instance

from scheduling import api, collector
from workers import checks
from workers.checks import CheckInput


def alternate(label: str, rounds: int, work: Callable[[], str]) -> None:
    """``work`` with the defaults and inside ``fewer_collections``, alternately (the order swapped
    every round); one line each: wall, CPU, the collections made and their time, ``work``'s note."""
    ways = {"defaults": contextlib.nullcontext, "fewer_collections": collector.fewer_collections}
    for r in range(rounds):
        for way in list(ways) if r % 2 == 0 else list(ways)[::-1]:
            pauses = GcPauses()
            w0, c0 = time.perf_counter(), time.process_time()
            with pauses.on(), ways[way]():
                note = work()
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            print(
                f"{label} round {r + 1} {way}: {wall:.2f} s wall, {cpu:.2f} s CPU, {pauses.count} collections "
                f"({pauses.seconds:.2f} s), {note}"
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", required=True)
    ap.add_argument("--servers", type=int, default=100)
    ap.add_argument("--slot-seconds", type=float, default=60.0)
    ap.add_argument("--algorithms", default="srtf")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--check", action="store_true", help="also time the worker's trace check")
    args = ap.parse_args()
    print(f"machine: {machine()}; thresholds {gc.get_threshold()} -> {collector.THRESHOLDS} inside")
    instance = gpu_instance(args.trace, args.servers, args.slot_seconds)
    print(f"{len(instance.jobs)} jobs on {args.servers} x 8 GPUs")
    if args.check:
        spec = {  # the cluster of gpu_instance
            "slot_seconds": args.slot_seconds,
            "resources": ["gpu"],
            "servers": [{"id": "n", "count": args.servers, "capacity": {"gpu": 8}}],
        }
        check_input = CheckInput("cluster.json", json.dumps(spec), Path(args.trace).name, Path(args.trace).read_text())
        alternate(
            "trace check",
            args.rounds,
            lambda: f"{checks.check_trace(check_input, lambda _p, _phase: None)['jobs']} jobs",
        )
    for name in args.algorithms.split(","):
        alternate(name, args.rounds, lambda name=name: f"avg JCT {api.run(instance, name)['metrics']['avg_jct']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
