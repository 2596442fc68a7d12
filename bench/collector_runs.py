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
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiresias_common import machine
from trace_replay import gpu_instance

from scheduling import api, collector
from workers import checks
from workers.checks import CheckInput


class Collections:
    """Number and total time of the collections made while it is on."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self._t0 = 0.0

    def __call__(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.count += 1
            self.seconds += time.perf_counter() - self._t0

    @contextlib.contextmanager
    def on(self) -> Iterator[None]:
        gc.callbacks.append(self)
        try:
            yield
        finally:
            gc.callbacks.remove(self)


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
    ways = {"defaults": contextlib.nullcontext, "fewer_collections": collector.fewer_collections}
    if args.check:
        spec = {  # the cluster of gpu_instance
            "slot_seconds": args.slot_seconds,
            "resources": ["gpu"],
            "servers": [{"id": "n", "count": args.servers, "capacity": {"gpu": 8}}],
        }
        check_input = CheckInput("cluster.json", json.dumps(spec), Path(args.trace).name, Path(args.trace).read_text())
        for r in range(args.rounds):
            for way in list(ways) if r % 2 == 0 else list(ways)[::-1]:
                counted = Collections()
                w0, c0 = time.perf_counter(), time.process_time()
                with counted.on(), ways[way]():
                    summary = checks.check_trace(check_input, lambda _p, _phase: None)
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                print(
                    f"trace check round {r + 1} {way}: {wall:.2f} s wall, {cpu:.2f} s CPU, {counted.count} "
                    f"collections ({counted.seconds:.2f} s), {summary['jobs']} jobs"
                )
                del summary
    for name in args.algorithms.split(","):
        for r in range(args.rounds):
            for way in list(ways) if r % 2 == 0 else list(ways)[::-1]:
                counted = Collections()
                w0, c0 = time.perf_counter(), time.process_time()
                with counted.on(), ways[way]():
                    doc = api.run(instance, name)
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                print(
                    f"{name} round {r + 1} {way}: {wall:.2f} s wall, {cpu:.2f} s CPU, {counted.count} collections "
                    f"({counted.seconds:.2f} s), avg JCT {doc['metrics']['avg_jct']:.1f}"
                )
                del doc
    return 0


if __name__ == "__main__":
    sys.exit(main())
