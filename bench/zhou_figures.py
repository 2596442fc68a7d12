"""Zhou et al. Sec. 7.1, Figs. 3/6 (number of servers) and Fig. 9 (worker types) on the presets.

    PYTHONPATH=. .venv/bin/python bench/zhou_figures.py servers --preset zhou-ps --servers 75,150,300 --seeds 0,1,2
    PYTHONPATH=. .venv/bin/python bench/zhou_figures.py types --preset zhou-allreduce --seeds 0,1,2
    PYTHONPATH=. .venv/bin/python bench/zhou_figures.py workers --preset zhou-ps --caps 1,2,5,10,20,50 --seeds 0,1,2

``servers``: "the objective value may grow with the increase of number of servers ... when the
overall resource capacities nearly remain the same" (Fig. 3 PS, Fig. 6 all-reduce). The preset's
150 servers are redrawn as H servers of the same EC2 shapes with every capacity scaled by 150 / H
(GPUs and vCPUs rounded to integers, at least 1; H < 150 cycles through the first H shapes), so the
cluster's total stays close (GPUs -3% to +13% of the 150-server cluster on seeds 0-2) while the
servers shrink (H > 150) or grow (H < 150). zhou's lambda = 2 T H R F + 1 follows H.

``types``: Fig. 9, "all jobs employ the same type of workers" for four EC2-like types, against
A_online choosing each job's type. The paper's p3.2xlarge, p2.xlarge (1 V100 / 1 K80) and its
"p3.4xlarge", p2.2xlarge (taken as 2 V100 / 2 K80) map to the preset's worker types v100-1, k80-1,
v100-2, k80-2; a restricted run keeps only that type's mini-batch time in every job.

``workers``: Fig. 10, "the total weighted job completion time decreases as the increase of number
of workers deployed for jobs": every job may use at most k workers (D_j capped at k, its work
E_j D_j K_j kept as an explicit ``work``), so A_online's enumeration of worker counts stops at k.

Every result is validated (api.run). Prints Markdown tables of sum w_j c_j (10^6) over the seeds:
median and mean with 95% bootstrap CIs (scheduling.stats, docs/statistics.md) and the per-seed
values; ``servers`` runs through scheduling.reproduce (per H, paired differences against zhou and
win counts).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

from bench.zhou_compare import parse
from scheduling import api, presets, repeat, reproduce, stats
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Cluster, Instance, frozen_amounts

FIG9_TYPES = {"p3.2xlarge": "v100-1", "p2.xlarge": "k80-1", "p3.4xlarge": "v100-2", "p2.2xlarge": "k80-2"}


def base_instance(preset: str, jobs: int, seed: int) -> Instance:
    files = presets.build(preset, jobs=jobs, seed=seed)
    cluster = parse_cluster(files.cluster)
    return Instance(cluster, parse_trace(files.trace, cluster, files.trace_name))


def resized(cluster: Cluster, count: int) -> Cluster:
    """``count`` servers cycling through the cluster's shapes, capacities scaled by len / count."""
    factor = len(cluster.servers) / count
    servers = []
    for i in range(count):
        shape = cluster.servers[i % len(cluster.servers)]
        cap = {}
        for res, amount in shape.capacity.items():
            scaled = amount * factor
            cap[res] = float(max(1, round(scaled))) if res in ("gpu", "cpu") else scaled
        servers.append(dataclasses.replace(shape, id=f"{shape.id}-{i}", capacity=frozen_amounts(cap)))
    return dataclasses.replace(cluster, servers=tuple(servers))


def run(inst: Instance, algo: str, seed: int) -> tuple[float, float]:
    """``algo``: a name, or "name:k=v;k=v" with parameters."""
    t0 = time.perf_counter()
    name, params = parse(algo)
    doc = api.run(inst, name, params, seed=seed)
    return doc["metrics"]["total_weighted_completion"], time.perf_counter() - t0


def _ci(ci: stats.Interval | None) -> str:
    return "no CI" if ci is None else f"[{ci.low / 1e6:.2f}, {ci.high / 1e6:.2f}]"


def per_seed_table(args: argparse.Namespace, by: str, head: str, table: Mapping[Any, list[float]]) -> None:
    """zhou's sum w_j c_j (10^6) per variant: median and mean with 95% CIs, and per seed."""
    print(f"\n### {args.preset}, {args.jobs} jobs, seeds {args.seeds}: zhou's sum w_j c_j (10^6) by {by}\n")
    print(f"| {head} | median [95% CI] | mean [95% CI] | per seed |")
    print("|---|---|---|---|")
    for key, values in table.items():
        s = stats.summarize(values)
        per_seed = " / ".join(f"{v / 1e6:.2f}" for v in values)
        median = f"{(s.median or 0) / 1e6:.2f} {_ci(s.median_ci)}"
        mean = f"{(s.mean or 0) / 1e6:.2f} {_ci(s.mean_ci)}"
        print(f"| {key} | {median} | {mean} | {per_seed} |")


def servers(args: argparse.Namespace) -> None:
    counts = [int(x) for x in args.servers.split(",")]
    algos = [(a, *parse(a)) for a in args.algos.split(",")]

    def builder(h: int) -> Callable[[int], Instance]:
        def build(seed: int) -> Instance:
            inst = base_instance(args.preset, args.jobs, seed)
            return Instance(resized(inst.cluster, h), inst.jobs)

        return build

    fig = dataclasses.replace(
        reproduce.FIGURES["zhou-fig2" if args.preset == "zhou-ps" else "zhou-fig5"],
        title="sum w_j c_j vs number of servers H at about the same total capacity (Figs. 3/6)",
        setting=f"preset {args.preset}, {args.jobs} jobs, servers resized to H",
        algorithms=tuple(algos),
        reference=algos[0][0],
        claimed_best=algos[0][0],
        points=tuple((str(h), builder(h)) for h in counts),
        x_label="H",
    )

    def show(point: str, row: repeat.Row, _doc: dict[str, Any]) -> None:
        value = row.metrics["total_weighted_completion"]
        print(f"seed={row.case.seed} H={point} {row.label}: sum_wc={value:.4g}", flush=True)

    print("\n" + reproduce.markdown(reproduce.run_figure(fig, repeat.parse_seeds(args.seeds), progress=show)))


def types(args: argparse.Namespace) -> None:
    table: dict[str, list[float]] = {}
    for seed in repeat.parse_seeds(args.seeds):
        inst = base_instance(args.preset, args.jobs, seed)
        variants = {"all types (A_online's choice)": inst}
        for label, wtype in FIG9_TYPES.items():
            jobs = tuple(
                dataclasses.replace(j, batch_time=frozen_amounts({wtype: j.batch_time_for(wtype)})) for j in inst.jobs
            )
            variants[f"only {wtype} ({label})"] = Instance(inst.cluster, jobs)
        for label, variant in variants.items():
            value, secs = run(variant, "zhou", seed)
            table.setdefault(label, []).append(value)
            print(f"seed={seed} {label}: sum_wc={value:.4g} ({secs:.1f} s)", flush=True)
    per_seed_table(args, "worker types", "worker types", table)


def workers(args: argparse.Namespace) -> None:
    caps = [int(x) for x in args.caps.split(",")]
    table: dict[int, list[float]] = {}
    for seed in repeat.parse_seeds(args.seeds):
        inst = base_instance(args.preset, args.jobs, seed)
        for k in caps:
            jobs = tuple(dataclasses.replace(j, work=j.work_required, chunks=min(j.chunks, k)) for j in inst.jobs)
            value, secs = run(Instance(inst.cluster, jobs), "zhou", seed)
            table.setdefault(k, []).append(value)
            print(f"seed={seed} at most {k} workers: sum_wc={value:.4g} ({secs:.1f} s)", flush=True)
    per_seed_table(args, "worker cap", "at most k workers per job", table)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("figure", choices=("servers", "types", "workers"))
    ap.add_argument("--preset", default="zhou-ps")
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--servers", default="75,150,300")
    ap.add_argument("--caps", default="1,2,5,10,20,50")
    ap.add_argument("--algos", default="zhou,fifo,drf,drf:fixed=true,antman,tiresias", help="name[:k=v;k=v],...")
    args = ap.parse_args()
    {"servers": servers, "types": types, "workers": workers}[args.figure](args)


if __name__ == "__main__":
    main()
