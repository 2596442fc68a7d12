"""`dorm`'s placement by round-robin plans against the stepwise rule: same schedule, and the time of each.

    .venv/bin/python -m scheduling generate --preset oasis --seed 1 --out /tmp/dorm_in
    PYTHONPATH=. nice .venv/bin/python bench/dorm_paths.py --dir /tmp/dorm_in

Both runs are made in this process, the plans first (``Dorm.stepwise`` False, then True), with the
MILP's ``time_limit`` at 600 s by default so that both solve the same problems to the same answers
(with the registry's 2 s, a loaded machine may stop a solve at a different point). The script
prints each simulation's wall time, the part of it spent placing (``Dorm._place``) and solving
(``Dorm.solve``), and whether the decisions and the runs are identical (exit status 1 if not).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scheduling import registry
from scheduling.api import load_instance
from scheduling.engine import simulate


def timed(spent: dict[str, float], key: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            spent[key] += time.perf_counter() - t0

    return call


def recording(decisions: list[Any], decide: Callable[..., Any]) -> Callable[..., Any]:
    def call(view: Any) -> Any:
        decisions.append(decide(view))
        return decisions[-1]

    return call


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="a folder with cluster.json and trace.csv (the generate command's)")
    ap.add_argument("--time-limit", default="600")
    a = ap.parse_args()
    instance = load_instance(Path(a.dir) / "cluster.json", Path(a.dir) / "trace.csv")
    spec = registry.get("dorm")
    params = spec.parse_params({"time_limit": a.time_limit})
    outcomes = []
    for stepwise in (False, True):
        algorithm = spec.build(instance, params, 1)
        algorithm.stepwise = stepwise  # type: ignore[attr-defined]
        spent = {"place": 0.0, "solve": 0.0}
        algorithm._place = timed(spent, "place", algorithm._place)
        algorithm.solve = timed(spent, "solve", algorithm.solve)
        decisions: list[Any] = []
        algorithm.decide = recording(decisions, algorithm.decide)
        t0 = time.perf_counter()
        run = simulate(instance, algorithm)
        wall = time.perf_counter() - t0
        label = "stepwise rule" if stepwise else "plans"
        print(
            f"{label}: {wall:.2f} s wall (placing {spent['place']:.2f} s, MILP {spent['solve']:.2f} s),"
            f" {len(decisions)} decisions, {len(instance.jobs)} jobs",
            flush=True,
        )
        outcomes.append((decisions, run.jobs, run.placements, run.progress, algorithm.report()))
    same = outcomes[0] == outcomes[1]
    print(f"identical: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
