"""Size and cost of the price log (the result's ``prices``) of a price-based algorithm on a preset.

    PYTHONPATH=<checkout> .venv/bin/python bench/price_log.py --preset oasis --jobs 1000 --algorithm oasis \
        [--seed 2] [--out RESULT.json] [--same-as OTHER.json]

Prints the simulation's CPU time (the price log is recorded during it), the result document's
build time, the number of ``changes`` in the log and of the price entries they cover, and the
bytes of the log and of the whole result as JSON and as the dashboard stores it (compact JSON,
gzip level 6, webapp/runstore.py), also per 1,000 jobs (DESIGN section 6: under 1 MB compressed).
Only public entry points are used, so the same script runs against an older checkout
(``PYTHONPATH``). ``--same-as`` compares this run's log with another result's (schema
``mlsched.prices/1``, ``/2`` or ``/3``): the summaries must be equal and the matrices of every
resource after every decision (``scheduling.prices.matrices``) the same, past slots taken at the
price they had when they passed (what /3 records; /1 and /2 record the algorithm's later prices of
past slots too). Record results in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from scheduling import registry, results
from scheduling.engine import simulate

sys.path.insert(0, str(Path(__file__).resolve().parent))

from preset_speed import instance
from tiresias_common import machine


def covered(prices: dict[str, Any]) -> int:
    """Price entries the log's changes set (single entries in /1, runs of n slots since /2)."""
    if prices["schema"] == "mlsched.prices/1":
        return sum(len(d["changes"]) for d in prices["decisions"])
    return sum(c[3] for d in prices["decisions"] for c in d["changes"])


def as_passed(prices: dict[str, Any], resource: str) -> Iterator[np.ndarray]:
    """The log's matrices with every past slot (before the decision's) at the price it had at the
    last decision while it was still to come: what schema /3 records; the same matrices for /3."""
    from scheduling.prices import matrices, past_columns  # (--same-as needs a checkout with /3)

    each = matrices(prices, resource)
    shown = next(each).copy()  # before any decision
    for d, matrix in zip(prices["decisions"], each, strict=True):
        past = past_columns(d["t"], prices["slot0"], prices["slots"])
        shown[:, past:] = matrix[:, past:]
        yield shown


def same_matrices(a: dict[str, Any], b: dict[str, Any]) -> None:
    if a["summary"] != b["summary"] or len(a["decisions"]) != len(b["decisions"]):
        raise SystemExit("the logs differ: summaries or number of decisions")
    for r in a["resources"]:
        for k, (x, y) in enumerate(zip(as_passed(a, r), as_passed(b, r), strict=True)):
            if not np.array_equal(x, y):
                raise SystemExit(f"the logs differ: decision {k}, resource {r}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", required=True)
    ap.add_argument("--jobs", type=int, required=True)
    ap.add_argument("--algorithm", required=True)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None, help="write the result here")
    ap.add_argument("--same-as", type=Path, default=None, help="another result of the same run to compare logs with")
    args = ap.parse_args()
    inst = instance(args.preset, args.jobs, args.seed)
    spec = registry.get(args.algorithm)
    params = spec.parse_params({})
    algo = spec.build(inst, params, 0)
    c0 = time.process_time()
    outcome = simulate(inst, algo)
    c1 = time.process_time()
    doc = results.build(inst, outcome, args.algorithm, params, 0)
    c2 = time.process_time()
    prices = doc.get("prices")
    if not prices:
        raise SystemExit(f"{args.algorithm} wrote no price log")
    text = json.dumps(doc, separators=(",", ":"))
    stored = len(gzip.compress(text.encode("utf-8"), compresslevel=6))
    log_text = json.dumps(prices, separators=(",", ":"))
    log_stored = len(gzip.compress(log_text.encode("utf-8"), compresslevel=6))
    changes = sum(len(d["changes"]) for d in prices["decisions"])
    per_k = 1000 / len(inst.jobs)
    print(f"{machine()}; {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"{args.algorithm} on {args.preset} {args.jobs} jobs (seed {args.seed}): schema {prices['schema']}")
    print(f"simulate {c1 - c0:.2f} s CPU, result build {c2 - c1:.2f} s CPU; {len(prices['decisions'])} decisions")
    print(f"changes {changes:,} covering {covered(prices):,} price entries")
    print(f"prices: {len(log_text) / 1e6:.2f} MB JSON, {log_stored / 1e6:.2f} MB gzip")
    print(
        f"whole result: {len(text) / 1e6:.2f} MB JSON, {stored / 1e6:.2f} MB gzip "
        f"({stored * per_k / 1e6:.2f} MB per 1,000 jobs)"
    )
    if args.out is not None:
        args.out.write_text(text)
    if args.same_as is not None:
        same_matrices(prices, json.loads(args.same_as.read_text())["prices"])
        print(f"same matrices at every decision as {args.same_as}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
