"""Benchmark: how long the schedule validator takes on whole-trace results, and what it says.

    .venv/bin/python -m scheduling import --format generic-gpu \\
        --input ../shared/traces/philly/philly.csv --out /tmp/philly/trace.csv
    PYTHONPATH=<checkout> .venv/bin/python bench/validator_speed.py --trace /tmp/philly/trace.csv \\
        --servers 32 --algorithms fifo,srtf,antman [--rounds 3]

For each algorithm: one simulation of the trace on ``--servers`` x 8 GPUs, the result document
built once, then ``validate`` timed ``--rounds`` times (median), with the garbage collector as
a run has it (``collector.fewer_collections``). Also validated: ``--mutations`` copies of the
document, each with one placement, progress segment or job record changed at random (seeded), so
that the checks that find problems run too. Prints the times and a digest of every problem list
(the unchanged document's and the mutated ones'): the same digest from two checkouts means their
validators say the same about these documents. Only public entry points are used, so the script
runs against an older checkout. Record results in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from trace_replay import gpu_instance

from scheduling import collector, registry, results
from scheduling.engine import simulate
from scheduling.validator import validate


def mutated(doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A copy of ``doc`` with one field of one placement, progress segment or job changed."""
    out = dict(doc)
    part = rng.choice(["placements", "progress", "jobs"])
    rows = out[part] = list(doc[part])
    i = rng.randrange(len(rows))
    row = rows[i] = copy.deepcopy(rows[i])
    if part == "placements":
        key = rng.choice(["start", "end", "count"])
        row[key] += rng.choice([-1, 1])
    elif part == "progress":
        key = rng.choice(["start", "end", "rate"])
        row[key] = row[key] * 1.5 if key == "rate" else row[key] + rng.choice([-1, 1])
    else:
        key = rng.choice(["start", "work_done", "preemptions"])
        row[key] = (row[key] or 0) + 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--servers", type=int, default=32)
    ap.add_argument("--slot-seconds", type=float, default=60.0)
    ap.add_argument("--algorithms", default="fifo,srtf,antman")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mutations", type=int, default=20)
    a = ap.parse_args()
    inst = gpu_instance(a.trace, a.servers, a.slot_seconds)
    print(f"trace {a.trace}: {len(inst.jobs)} jobs on {a.servers} x 8 GPUs")
    digest = hashlib.sha256()
    for name in a.algorithms.split(","):
        spec = registry.get(name)
        with collector.fewer_collections():
            run = simulate(inst, spec.build(inst, spec.parse_params({}), 0))
            doc = results.build(inst, run, name, {}, 0)
            times, problems = [], []
            for _ in range(a.rounds):
                t0 = time.perf_counter()
                problems = validate(inst, doc)
                times.append(time.perf_counter() - t0)
            rng = random.Random(name)
            found = []
            for _ in range(a.mutations):
                found.append(validate(inst, mutated(doc, rng)))
        digest.update(json.dumps([name, problems, found]).encode())
        caught = sum(1 for f in found if f)
        print(
            f"{name}: validate {statistics.median(times):.2f} s (median of {a.rounds}; min {min(times):.2f}), "
            f"{len(doc['placements'])} placements, {len(doc['progress'])} progress segments, "
            f"problems {len(problems)}; mutations caught {caught} of {a.mutations}"
        )
    print(f"problems digest: {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
