"""Zhou et al. Sec. 7.1 (Figs. 2 and 5): total weighted completion time of `zhou` vs fifo, drf,
antman and tiresias on the zhou-ps and zhou-allreduce presets, over several seeds.

    PYTHONPATH=. .venv/bin/python bench/zhou_compare.py --seeds 0,1,2 --jobs 40 [--variants default,paper,literal]
    [--window 1]  (arrivals squeezed into [0, window): --window 1 puts every job at slot 0)
    [--arrivals google]  (arrival slots redrawn as the oasis preset draws them, "according to the
                          Google cluster data" of Bao et al. [4], whose settings Sec. 7 follows)
    [--baselines fifo,drf,drf:fixed=true,antman,tiresias]  (name[:param=value;...])

A thin caller of ``scheduling.reproduce`` (figures ``zhou-fig2``/``zhou-fig5``, also ``python -m
scheduling reproduce zhou-fig2``): per preset, the Markdown table of sum w_j c_j (10^6 slot x weight)
over the seeds with 95% CIs, paired differences against the first zhou variant and win counts
(docs/statistics.md), then the means and their ratio to zhou as before; every result is validated
(api.run).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
from typing import Any

import numpy as np

from scheduling import presets, repeat, reproduce
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance
from scheduling.presets.oasis import google_like_arrivals

VARIANTS = {
    "default": {},  # tie=completion, start=early
    "paper": {"start": "paper"},
    "literal": {"start": "paper", "tie": "loop"},  # the printed loop order at equal costs
    "now": {"start": "now"},
    "density": {"order": "density"},
}


def instance(preset: str, jobs: int, seed: int, window: int | None = None, arrivals: str = "uniform") -> Instance:
    """The preset's instance; ``window``: arrivals rescaled from [0, ZHOU_T) to [0, window);
    ``arrivals="google"``: the jobs, in their order, get sorted arrival slots drawn over
    [0, ZHOU_T) by the oasis preset's Google-like process (its own generator, seeded by ``seed``)."""
    files = presets.build(preset, jobs=jobs, seed=seed)
    cluster = parse_cluster(files.cluster)
    inst = Instance(cluster, parse_trace(files.trace, cluster, files.trace_name))
    moved = list(inst.jobs)
    if arrivals == "google":
        slots = google_like_arrivals(np.random.default_rng(10_000 + seed), len(moved), presets.ZHOU_T)
        moved = [dataclasses.replace(j, arrival=int(a)) for j, a in zip(moved, slots, strict=True)]
    if window is not None:
        moved = [dataclasses.replace(j, arrival=j.arrival * window // presets.ZHOU_T) for j in moved]
    return Instance(cluster, tuple(sorted(moved, key=lambda j: (j.arrival, j.job_id))))


def parse(spec: str) -> tuple[str, dict[str, str]]:
    """ "drf:fixed=true;ps=2" -> ("drf", {"fixed": "true", "ps": "2"})."""
    name, _, raw = spec.partition(":")
    return name, dict(kv.split("=", 1) for kv in raw.split(";") if kv)


FIGURE = {"zhou-ps": "zhou-fig2", "zhou-allreduce": "zhou-fig5"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", default="zhou-ps,zhou-allreduce")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument("--variants", default="default,now")
    ap.add_argument("--baselines", default="fifo,drf,drf:fixed=true,antman,tiresias", help="name[:k=v;k=v],...")
    ap.add_argument("--window", type=int, default=None, help="arrivals over [0, window) instead of [0, 150)")
    ap.add_argument("--arrivals", choices=("uniform", "google"), default="uniform")
    args = ap.parse_args()
    seeds = repeat.parse_seeds(args.seeds)
    algos = [(f"zhou[{v}]", "zhou", VARIANTS[v]) for v in args.variants.split(",")]
    algos += [(b, *parse(b)) for b in args.baselines.split(",")]
    for preset in args.presets.split(","):

        def build(seed: int, preset: str = preset) -> Instance:
            return instance(preset, args.jobs, seed, args.window, args.arrivals)

        window = args.window or presets.ZHOU_T
        label = f"{args.jobs} jobs, arrivals {args.arrivals} over {window} slots"
        fig = dataclasses.replace(
            reproduce.FIGURES[FIGURE.get(preset, "zhou-fig2")],
            setting=f"preset {preset}, {label}",
            algorithms=tuple(algos),
            reference=algos[0][0],
            claimed_best=algos[0][0],
            points=((label, build),),
        )

        def show(_point: str, row: repeat.Row, _doc: dict[str, Any], preset: str = preset) -> None:
            m = row.metrics
            print(
                f"{preset} seed={row.case.seed} {row.label}: sum_wc={m['total_weighted_completion']:.4g} "
                f"avg_jct={m['avg_jct']:.1f} completed={m['completed']}/{m['jobs']}",
                flush=True,
            )

        run = reproduce.run_figure(fig, seeds, progress=show)
        print("\n" + reproduce.markdown(run))
        rows = run.points[0].rows
        means = {
            a: statistics.mean(r.metrics["total_weighted_completion"] for r in rows if r.label == a)
            for a, _, _ in algos
        }
        jct = {a: statistics.mean(r.metrics["avg_jct"] for r in rows if r.label == a) for a, _, _ in algos}
        ref = means[algos[0][0]]
        print("| algorithm | mean sum w_j c_j (10^6) | vs first zhou | mean avg JCT (slots) |")
        print("|---|---|---|---|")
        for a, mean in means.items():
            print(f"| {a} | {mean / 1e6:.2f} | {mean / ref:.2f} | {jct[a]:.1f} |")
        print(flush=True)


if __name__ == "__main__":
    main()
