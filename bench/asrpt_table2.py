"""Table II: Heavy-Edge vs the exact ILP mapping (per-iteration time and placement time).

For each model configuration, 20 cases of a cluster of ``servers`` x 8 GPUs whose servers have a
random number of free GPUs (uniform 0..8, redrawn until they hold the job's g_i). Heavy-Edge maps
the job onto the g_i GPUs of the servers with the most free GPUs (Alg. 1 line 9-10); the ILP
(scheduling/algorithms/asrpt/exact.py, HiGHS) minimises alpha of eq. (7) (a) over *all* free GPUs
and (b) over the same servers Heavy-Edge was given. PITT = alpha (ms), PCT = wall time of the
placement (ms), both averaged over the cases. Paper setting: 8-GPU V100 servers, 10 Gbps NIC,
300 GB/s NVLink (the asrpt preset's profiles of Table I models).

    PYTHONPATH=. python bench/asrpt_table2.py [--cases 20] [--time-limit 120]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from scheduling.algorithms.asrpt.exact import exact_mapping
from scheduling.algorithms.asrpt.mapping import counts_of, heavy_edge, job_graph
from scheduling.model import Stage
from scheduling.pipeline import Link, alpha
from scheduling.presets import ASRPT_MODELS, ASRPT_NIC_GBPS, ASRPT_NVLINK_GBPS, pipeline_stages

LINK = Link(8.0, ASRPT_NIC_GBPS * 125.0, ASRPT_NVLINK_GBPS * 125.0)  # MB/s: alpha in seconds
# model, stages, replicas, servers, large (fewer cases, shorter ILP time limit)
CASES = (("VGG19", 2, 2, 8, False), ("VGG19", 4, 2, 8, False), ("GPT-175B", 64, 2, 32, True))


def most_free(servers: list[tuple[str, int]], gpus: int) -> list[tuple[str, int]]:
    """Alg. 1 line 9: g_i GPUs from the servers with the most free GPUs (ties: cluster order)."""
    out, left = [], gpus
    for server, free in sorted((s for s in servers if s[1] > 0), key=lambda s: -s[1]):
        if left == 0:
            break
        out.append((server, min(left, free)))
        left -= out[-1][1]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--large-cases", type=int, default=5, help="cases for GPT-175B (128 GPUs)")
    parser.add_argument("--large-time-limit", type=float, default=20.0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(
        f"Cases per configuration: {args.cases} ({args.large_cases} for GPT-175B); ILP time limit "
        f"{args.time_limit:.0f} s per solve ({args.large_time_limit:.0f} s for GPT-175B).\n"
    )
    print(
        "| model (stages x replicas, servers) | Heavy-Edge PITT (ms) | Heavy-Edge PCT (ms) "
        "| ILP all free GPUs PITT (ms) | PCT (ms) | ILP on Heavy-Edge's servers PITT (ms) | PCT (ms) "
        "| HE / ILP-all | cases HE = ILP-all | ILP proven optimal |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, n_stages, replicas, n_servers, large in CASES:
        cases = args.large_cases if large else args.cases
        limit = args.large_time_limit if large else args.time_limit
        model = next(m for m in ASRPT_MODELS if m.name == name)
        keys = ("forward", "backward", "activation_in", "activation_out", "params")
        rows = pipeline_stages(model, n_stages, replicas)
        stages = tuple(Stage(int(r["replicas"]), *(float(r[k]) for k in keys)) for r in rows)
        gpus = n_stages * replicas
        graph = job_graph(stages)
        he_a, he_t, all_a, all_t, same_a, same_t, equal, optimal = [], [], [], [], [], [], 0, 0
        for _ in range(cases):
            free = rng.integers(0, 9, size=n_servers)
            while free.sum() < gpus:
                free = rng.integers(0, 9, size=n_servers)
            servers = [(f"m{i}", int(f)) for i, f in enumerate(free)]
            links = {m: LINK for m, _ in servers}
            t0 = time.perf_counter()
            chosen = most_free(servers, gpus)
            where = heavy_edge(graph, chosen)
            a = alpha(stages, counts_of(graph, where), links)
            he_t.append(time.perf_counter() - t0)
            he_a.append(a)
            t0 = time.perf_counter()
            ex = exact_mapping(stages, servers, links, limit)
            all_t.append(time.perf_counter() - t0)
            all_a.append(ex.alpha)
            t0 = time.perf_counter()
            ex2 = exact_mapping(stages, chosen, links, limit)
            same_t.append(time.perf_counter() - t0)
            same_a.append(ex2.alpha)
            equal += abs(a - ex.alpha) <= 1e-9 * a
            optimal += ex.optimal and ex2.optimal
        ms = 1000.0
        print(
            f"| {name} ({n_stages} x {replicas}, {n_servers}) | {np.mean(he_a) * ms:.2f} | {np.mean(he_t) * ms:.2f} "
            f"| {np.mean(all_a) * ms:.2f} | {np.mean(all_t) * ms:.1f} | {np.mean(same_a) * ms:.2f} "
            f"| {np.mean(same_t) * ms:.1f} | {np.mean(np.array(he_a) / np.array(all_a)):.3f} "
            f"| {equal}/{cases} | {optimal}/{cases} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
