"""The exact ILP mapping of A-SRPT (Table II): equal to brute force, never worse than Heavy-Edge."""

from __future__ import annotations

import numpy as np
import pytest

from scheduling.algorithms.asrpt.exact import exact_mapping, placements
from scheduling.algorithms.asrpt.mapping import counts_of, heavy_edge, job_graph
from scheduling.model import Stage
from scheduling.pipeline import Link, alpha

LINK = Link(gpus=4, nic=10.0, intra=1000.0)


def random_case(rng: np.random.Generator, exact_fit: bool) -> tuple[tuple[Stage, ...], list[tuple[str, int]]]:
    """1-3 stages of 1-3 replicas, random times and data; 1-3 servers of up to 4 free GPUs."""
    n = int(rng.integers(1, 4))
    acts = [float(rng.uniform(0, 20)) for _ in range(n - 1)]
    stages = tuple(
        Stage(
            replicas=int(rng.integers(1, 4)),
            forward=float(rng.uniform(0.1, 2.0)),
            backward=float(rng.uniform(0.1, 2.0)),
            activation_in=acts[s - 1] if s > 0 else 0.0,
            activation_out=acts[s] if s < n - 1 else 0.0,
            params=float(rng.uniform(0, 50)),
        )
        for s in range(n)
    )
    need = sum(st.replicas for st in stages)
    free = [int(rng.integers(0, 5)) for _ in range(int(rng.integers(1, 4)))]
    if exact_fit:  # Heavy-Edge's input: free GPUs summing to g_i
        free = [min(f, max(0, need - sum(free[:i]))) for i, f in enumerate(free)]
    free[0] += max(0, need - sum(free))
    return stages, [(f"s{i}", f) for i, f in enumerate(free)]


@pytest.mark.parametrize("seed", range(6))
def test_exact_mapping_equals_brute_force_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(15):
        stages, servers = random_case(rng, exact_fit=False)
        links = {m: LINK for m, _ in servers}
        best = min(alpha(stages, c, links) for c in placements(stages, servers))
        ex = exact_mapping(stages, servers, links)
        assert ex.optimal
        assert ex.alpha == pytest.approx(best, rel=1e-7)
        for s, st in enumerate(stages):  # a real placement: every replica once, within free GPUs
            assert sum(ex.counts[s].values()) == st.replicas
        for m, free in servers:
            assert sum(c.get(m, 0) for c in ex.counts) <= free


@pytest.mark.parametrize("seed", range(6))
def test_heavy_edge_is_never_better_than_exact(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    for _ in range(15):
        stages, servers = random_case(rng, exact_fit=True)
        links = {m: LINK for m, _ in servers}
        graph = job_graph(stages)
        he = alpha(stages, counts_of(graph, heavy_edge(graph, servers)), links)
        assert exact_mapping(stages, servers, links).alpha <= he + 1e-9


def test_exact_mapping_keeps_a_heavy_allreduce_inside_one_server() -> None:
    # One stage of 2 replicas with 100 MB of parameters: split, the AllReduce takes 100/(1/4*10) = 40
    # slots; on the server with 2 free GPUs it takes 0.1. A server with one free GPU is a trap.
    stages = (Stage(replicas=2, forward=1.0, backward=1.0, params=100.0),)
    servers = [("a", 1), ("b", 2), ("c", 1)]
    ex = exact_mapping(stages, servers, {m: LINK for m, _ in servers})
    assert ex.counts == [{"b": 2}]
    assert ex.alpha == pytest.approx(2.1)


def test_too_few_free_gpus_is_an_error() -> None:
    with pytest.raises(ValueError, match="free GPUs"):
        exact_mapping((Stage(replicas=3),), [("a", 2)], {"a": LINK})
