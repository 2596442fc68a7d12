"""``reproduce FIGURE`` with its x-axis points spread over several processes, for a figure whose
points take long on a shared machine (oasis-fig3 at 400 jobs): each group of points runs
``reproduce.run_figure`` in its own process, and the rows are assembled once
(``reproduce.assemble``) and written as ``reproduce`` writes them (the same runs, validated by
``api.run``, the same statistics and files).

    PYTHONPATH=. nice -n 10 .venv/bin/python bench/reproduce_split.py oasis-fig3 --seeds 10 \\
        --groups "50 jobs|100 jobs|200 jobs|200 jobs, restart 0;400 jobs" --out /tmp/oasis-fig3

``--groups``: point labels separated by "|", groups by ";" (one process per group); a label may
name a part of the seeds, ``LABEL@SEEDS`` ("400 jobs@0-2"), the rest going to other groups. Every
(point, seed) must be in exactly one group.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from scheduling import provenance, repeat, reproduce


def run_group(name: str, items: list[str], seeds: list[int]) -> tuple[dict[str, list[repeat.Row]], dict]:
    """Run ``items`` (point labels, or LABEL@SEEDS) of figure ``name``; the rows and inputs per point."""
    fig = reproduce.FIGURES[name]
    rows: dict[str, list[repeat.Row]] = {}
    inputs: dict = {}
    for label, part in parts(items, seeds):
        sub = dataclasses.replace(fig, points=tuple(p for p in fig.points if p[0] == label))

        def progress(point: str, row: repeat.Row, doc: dict) -> None:
            print(f"{point} seed={row.case.seed} {row.label}: {fig.metric}={row.metrics.get(fig.metric)}", flush=True)

        run = reproduce.run_figure(sub, part, progress)
        for p in run.points:  # the instances stay here (rows go back to the parent, which needs no instance)
            rows.setdefault(p.label, []).extend(dataclasses.replace(r, case=bare(r.case)) for r in p.rows)
        for label_, by_seed in run.inputs.items():
            inputs.setdefault(label_, {}).update(by_seed)
    return rows, inputs


def bare(case: repeat.Case) -> repeat.Case:
    """The case without its instance (which does not pickle); statistics and files read key and seed."""
    return dataclasses.replace(case, instance=None)  # type: ignore[arg-type]


def parts(items: list[str], seeds: list[int]) -> list[tuple[str, list[int]]]:
    """(point label, its seeds in this group) per item: "LABEL@SEEDS" or "LABEL" (every seed)."""
    out = []
    for item in items:
        label, _, part = item.partition("@")
        out.append((label, [s for s in repeat.parse_seeds(part) if s in seeds] if part else list(seeds)))
    return out


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
    listed = sorted((label, s) for g in groups for label, part in parts(g, seeds) for s in part)
    if listed != sorted((p, s) for p, _ in fig.points for s in seeds):
        raise SystemExit(f"--groups must list every (point, seed) once: points {[p for p, _ in fig.points]}")
    provenance.code()  # the commit, before the workers start
    t0 = time.perf_counter()
    rows: dict[str, list[repeat.Row]] = {}
    inputs: dict = {}
    with ProcessPoolExecutor(max_workers=len(groups)) as pool:
        for got_rows, got_inputs in pool.map(run_group, [args.figure] * len(groups), groups, [seeds] * len(groups)):
            for label, got in got_rows.items():
                rows.setdefault(label, []).extend(got)
            for label, by_seed in got_inputs.items():
                inputs.setdefault(label, {}).update(by_seed)
    order = {s: i for i, s in enumerate(seeds)}
    rows = {label: sorted(got, key=lambda r: order[r.case.seed]) for label, got in rows.items()}
    run = reproduce.assemble(fig, seeds, rows, time.perf_counter() - t0, inputs)
    for path in reproduce.write(run, Path(args.out)):
        print(path)


if __name__ == "__main__":
    main()
