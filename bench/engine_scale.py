"""Benchmark: engine + validator + result size on large rigid traces (DESIGN section 6 targets).

Usage: .venv/bin/python bench/engine_scale.py [--jobs 150000[,5000,...]] [--algorithms fifo,srtf]
    [--no-validate]
Prints one line per (job count, algorithm): wall time of simulate, build and validate, the
number of events (decisions) and the simulate time per event, peak RSS of the process, and the
gzip size of the result per 1,000 jobs. Record results in bench/RESULTS.md.

Only public entry points are used (registry, simulate, results, validate), so the same script
runs against an older checkout for a before/after comparison (PYTHONPATH=<that checkout>).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import gzip
import json
import resource
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from scheduling import registry, results
from scheduling.engine import simulate
from scheduling.loaders import cluster_from_dict
from scheduling.model import Instance, Job
from scheduling.validator import validate


def philly_like(n: int, seed: int, servers: int, load: float = 0.9) -> Instance:
    """Rigid jobs with Philly's shape (93% one-GPU, heavy-tailed durations) and Poisson arrivals
    at the rate that offers ``load`` times the cluster's GPU capacity."""
    rng = np.random.default_rng(seed)
    cluster = cluster_from_dict(
        {"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "n", "count": servers, "capacity": {"gpu": 8}}]}
    )
    gpus = rng.choice([1, 2, 4, 8, 16], size=n, p=[0.93, 0.03, 0.02, 0.015, 0.005])
    duration = np.maximum(1, rng.lognormal(3.0, 1.5, n)).astype(int)  # slots
    per_slot = load * 8 * servers / float(np.mean(gpus * duration))  # arrivals per slot
    arrivals = np.floor(np.cumsum(rng.exponential(1.0 / per_slot, n))).astype(int)
    jobs = tuple(
        Job(job_id=f"j{i:06d}", arrival=int(arrivals[i]), gpus=int(gpus[i]), duration=int(duration[i]))
        for i in range(n)
    )
    return Instance(cluster, jobs)


class GcPauses:
    """The garbage collector's collections while ``on()`` (gc.callbacks): how many, their total
    and their longest time (bench/asrpt_scale.py, bench/collector_runs.py)."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self.longest = 0.0
        self._t0 = 0.0

    def __call__(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            pause = time.perf_counter() - self._t0
            self.count += 1
            self.seconds += pause
            self.longest = max(self.longest, pause)

    @contextlib.contextmanager
    def on(self) -> Iterator[None]:
        gc.callbacks.append(self)
        try:
            yield
        finally:
            gc.callbacks.remove(self)


class Counted:
    """Counts the decisions (events) of the wrapped algorithm."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.events = 0

    def decide(self, view: Any) -> Any:
        self.events += 1
        return self.inner.decide(view)

    def report(self) -> Any:
        return self.inner.report()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default="150000", help="comma-separated job counts")
    ap.add_argument("--servers", type=int, default=200)
    ap.add_argument("--algorithms", default="fifo")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--load", type=float, default=0.9, help="offered GPU load (0.9 = 90%% of capacity)")
    ap.add_argument("--no-validate", action="store_true", help="skip the validator (scaling tables)")
    a = ap.parse_args()
    for jobs in (int(n) for n in a.jobs.split(",")):
        run_size(a, jobs)


def run_size(a: argparse.Namespace, jobs: int) -> None:
    t0 = time.perf_counter()
    inst = philly_like(jobs, a.seed, a.servers, a.load)
    built = time.perf_counter() - t0
    print(f"instance: {jobs} jobs on {a.servers} x 8 GPUs at load {a.load}, built in {built:.1f} s")
    for name in a.algorithms.split(","):
        spec = registry.get(name)
        algo = Counted(spec.build(inst, spec.parse_params({}), a.seed))
        t0, c0 = time.perf_counter(), time.process_time()
        run = simulate(inst, algo)
        t1, c1 = time.perf_counter(), time.process_time()
        doc = results.build(inst, run, name, {}, a.seed)
        t2 = time.perf_counter()
        problems = [] if a.no_validate else validate(inst, doc)
        t3 = time.perf_counter()
        size = len(gzip.compress(json.dumps(doc, separators=(",", ":")).encode()))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{name} {jobs}: simulate {t1 - t0:.1f} s wall ({c1 - c0:.1f} s CPU), {algo.events} events, "
            f"{(t1 - t0) / max(1, algo.events) * 1e3:.3f} ms/event, {(t1 - t0) / jobs * 1e3:.3f} ms/job, "
            f"build {t2 - t1:.1f} s, validate {t3 - t2:.1f} s, "
            f"peak RSS {rss:.0f} MiB, result {size / 1024:.0f} KiB gzip = {size / 1024 / (jobs / 1000):.1f} KiB "
            f"per 1,000 jobs, completed {doc['metrics']['completed']}, avg JCT {doc['metrics']['avg_jct']:.1f} slots, "
            f"valid {'not checked' if a.no_validate else not problems}"
        )


if __name__ == "__main__":
    main()
