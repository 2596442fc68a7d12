"""OASiS: the bounds=history default with a history that does not overlap the scheduled trace.

`bounds=history` (oasis_history.py) takes its window from the start of the trace it then
schedules, so at slot 0 it has seen the jobs of slots [0, T/3). Here the window comes instead from
a *different* trace of the same generator (preset oasis at seed + 1000: another period of the same
cluster type and load, a true "past experience"); nothing of the scheduled trace is read before
it arrives. Compared with rrh and with the default on the same evaluation seeds.

    PYTHONPATH=. .venv/bin/python bench/oasis_heldout.py --jobs 100,200,400 --seeds 1,2,3,4,5

Every result is validated (api.run).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from typing import Any

from oasis_common import preset_instance

from scheduling import api
from scheduling.algorithms.oasis import online as oasis
from scheduling.algorithms.oasis.dp import JobShape

HISTORY_OFFSET = 1000  # history trace = the generator at seed + 1000


def run_with_history(n: int, seed: int) -> dict[str, Any]:
    """oasis (default params) on the seed's trace, its window taken from the history trace."""
    inst = preset_instance(n, seed)
    past = preset_instance(n, seed + HISTORY_OFFSET)
    real = oasis.calibrate

    def calibrate_on_past(_shapes: Sequence[JobShape], *rest: Any) -> Any:
        shapes = [oasis.job_shape(inst.cluster, j, list(inst.cluster.resource_names())) for j in past.jobs]
        return real(shapes, *rest)

    oasis.calibrate = calibrate_on_past  # type: ignore[assignment]
    try:
        return api.run(inst, "oasis", {}, seed=seed)
    finally:
        oasis.calibrate = real


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default="100,200,400")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    args = ap.parse_args()
    print("| jobs | seed | oasis, history from seed+1000 | scale | oasis (default) | scale | rrh | held-out / rrh |")
    print("|---|---|---|---|---|---|---|---|")
    ratios: dict[int, list[float]] = {}
    for n in (int(x) for x in args.jobs.split(",")):
        for seed in (int(s) for s in args.seeds.split(",")):
            held = run_with_history(n, seed)
            inst = preset_instance(n, seed)
            own = api.run(inst, "oasis", {}, seed=seed)
            rrh = api.run(inst, "rrh", {}, seed=seed)
            u_held, u_own, u_rrh = (d["metrics"]["total_utility"] for d in (held, own, rrh))

            def scale(doc: dict[str, Any]) -> str:
                cal = doc["oasis"]["calibration"]
                return f"{cal['scale']:g}" if cal["used"] == "history" else "fallback"

            ratios.setdefault(n, []).append(u_held / u_rrh)
            print(
                f"| {n} | {seed} | {u_held:.0f} | {scale(held)} | {u_own:.0f} | {scale(own)} | {u_rrh:.0f} | "
                f"{u_held / u_rrh:.2f} |",
                flush=True,
            )
    for n, values in ratios.items():
        wins = sum(v >= 1 for v in values)
        print(f"{n} jobs: held-out history >= rrh on {wins}/{len(values)}, mean ratio {statistics.mean(values):.2f}")


if __name__ == "__main__":
    main()
