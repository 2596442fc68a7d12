"""``reproduce FIGURE`` with its x-axis points spread over several processes, for a figure whose
points take long on a shared machine (oasis-fig3 at 400 jobs): each group of points runs
``reproduce.run_figure`` in its own process, and the rows are assembled once
(``reproduce.assemble``) and written as ``reproduce`` writes them (the same runs, validated by
``api.run``, the same statistics and files).

    PYTHONPATH=. nice -n 10 .venv/bin/python bench/reproduce_split.py oasis-fig3 --seeds 10 \\
        --groups "50 jobs|100 jobs|200 jobs|200 jobs, restart 0;400 jobs" --out /tmp/oasis-fig3

``--groups``: point labels separated by "|", groups by ";" (one process per group); every point of
the figure must be in exactly one group.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from scheduling import provenance, repeat, reproduce


def run_group(name: str, labels: list[str], seeds: list[int]) -> tuple[dict[str, list[repeat.Row]], dict]:
    fig = reproduce.FIGURES[name]
    sub = dataclasses.replace(fig, points=tuple(p for p in fig.points if p[0] in labels))

    def progress(point: str, row: repeat.Row, doc: dict) -> None:
        print(f"{point} seed={row.case.seed} {row.label}: {fig.metric}={row.metrics.get(fig.metric)}", flush=True)

    run = reproduce.run_figure(sub, seeds, progress)
    return {p.label: p.rows for p in run.points}, run.inputs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("figure")
    ap.add_argument("--seeds", default=None)
    ap.add_argument("--groups", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    fig = reproduce.FIGURES[args.figure]
    seeds = reproduce.seeds_of(args.seeds, fig)
    groups = [g.split("|") for g in args.groups.split(";")]
    listed = [label for g in groups for label in g]
    if sorted(listed) != sorted(p for p, _ in fig.points):
        raise SystemExit(f"--groups must list every point once: {[p for p, _ in fig.points]}")
    provenance.code()  # the commit, before the workers start
    t0 = time.perf_counter()
    rows: dict[str, list[repeat.Row]] = {}
    inputs: dict = {}
    with ProcessPoolExecutor(max_workers=len(groups)) as pool:
        for got_rows, got_inputs in pool.map(run_group, [args.figure] * len(groups), groups, [seeds] * len(groups)):
            rows.update(got_rows)
            inputs.update(got_inputs)
    run = reproduce.assemble(fig, seeds, rows, time.perf_counter() - t0, inputs)
    for path in reproduce.write(run, Path(args.out)):
        print(path)


if __name__ == "__main__":
    main()
