"""A-SRPT's incremental path gives the same schedules as its plain transcription (``readable``).

The incremental path returns change-based decisions, picks servers from free-GPU buckets, reuses
Heavy-Edge plans per demand shape, reads the release=arrival queue lazily and keeps the baselines'
waiting jobs in one heap per GPU demand; the transcription rebuilds each of these at every event.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling import presets, registry
from scheduling.algorithms.asrpt.cluster import Gpus
from scheduling.algorithms.asrpt.mapping import heavy_edge, heavy_edge_fast, job_graph
from scheduling.engine import Decision, Run, View, simulate
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance, Job, Stage
from scheduling.speed import Allocation

CASES: tuple[tuple[str, dict[str, str]], ...] = (
    ("asrpt", {}),
    ("asrpt", {"release": "arrival"}),
    ("asrpt", {"tau": "5", "comm_heavy": "1.05"}),
    ("asrpt", {"release": "arrival", "tau": "0", "comm_heavy": "1.05", "allreduce": "tree"}),
    ("spjf", {}),
    ("spwf", {"selection": "least"}),
    ("wcs-duration", {}),
    ("wcs-workload", {"selection": "first"}),
    ("wcs-subtime", {}),
)


def instance(seed: int, mixed: bool) -> Instance:
    """A loaded random asrpt-preset instance (load 6: queues form) with a history from another seed;
    ``mixed``: two server shapes with different links instead of the preset's one."""
    files = presets.build("asrpt", jobs=90, seed=seed, size=0.02, load=6.0)
    spec = json.loads(files.cluster)
    if mixed:
        base = spec["servers"][0]
        spec["servers"] = [
            {**base, "id": "big", "count": 3},
            {**base, "id": "small", "count": 4, "capacity": {"gpu": 4}, "nic_bw_gbps": 25.0, "intra_bw_gbps": 600.0},
        ]
    cluster = cluster_from_dict(spec)
    past = presets.build("asrpt", jobs=90, seed=seed + 1000, size=0.02, load=6.0)
    history = parse_trace(past.trace, cluster, past.trace_name, "json")
    return Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, "json"), history=history)


def run(inst: Instance, algorithm: str, params: dict[str, str], readable: bool) -> Run:
    spec = registry.get(algorithm)
    algo = spec.make(inst, spec.parse_params(params), np.random.default_rng(3), readable=readable)  # type: ignore[call-arg]
    return simulate(inst, algo)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(("algorithm", "params"), CASES)
def test_incremental_and_readable_paths_give_the_same_schedule(
    seed: int, algorithm: str, params: dict[str, str]
) -> None:
    inst = instance(seed, mixed=seed % 2 == 1)
    fast, readable = run(inst, algorithm, params, False), run(inst, algorithm, params, True)
    assert fast.placements == readable.placements
    assert fast.progress == readable.progress
    assert fast.jobs == readable.jobs
    assert len({p.server for p in fast.placements}) > 1
    assert any(j.start is not None and j.start > j.arrival for j in fast.jobs)  # jobs did queue


def rigid(inst: Instance) -> Instance:
    """The same jobs as rigid trace jobs (g_i one-GPU workers for a recorded duration)."""
    jobs = tuple(
        Job(j.job_id, j.arrival, gpus=j.gpus, duration=max(1, int(j.work_required) // 500), group=j.group, user=j.user)
        for j in inst.jobs
    )
    history = tuple(
        Job(j.job_id, j.arrival, gpus=j.gpus, duration=max(1, int(j.work_required) // 500), group=j.group, user=j.user)
        for j in inst.history
    )
    return Instance(inst.cluster, jobs, history=history)


@pytest.mark.parametrize(("algorithm", "params"), CASES)
def test_both_paths_agree_on_rigid_jobs(algorithm: str, params: dict[str, str]) -> None:
    inst = rigid(instance(5, mixed=True))
    assert all(j.rigid for j in inst.jobs) and registry.get(algorithm).unsupported(inst) is None
    fast, readable = run(inst, algorithm, params, False), run(inst, algorithm, params, True)
    assert (fast.placements, fast.progress, fast.jobs) == (readable.placements, readable.progress, readable.jobs)
    assert any(j.start is not None and j.start > j.arrival for j in fast.jobs)


@pytest.mark.parametrize("how", ["most", "least", "first"])
def test_bucketed_server_selection_equals_sorting(how: str) -> None:
    inst = instance(0, mixed=True)
    gpus = Gpus(inst.cluster, fast=True)
    rng = random.Random(5)
    held: list[tuple[Allocation, ...]] = []
    for _ in range(400):
        if held and (gpus.available == 0 or rng.random() < 0.45):
            gpus.release(held.pop(rng.randrange(len(held))))
            continue
        n = rng.randint(1, gpus.available)
        chosen = gpus.select_fast(n, how)
        gpus.fast = False
        assert chosen == gpus.select(n, how)
        gpus.fast = True
        assert sum(k for _, k in chosen) == n
        allocs = tuple(Allocation("j", m, "worker", "gpu", k) for m, k in chosen)
        gpus.take(allocs)
        held.append(allocs)
        for f, bucket in enumerate(gpus.by_free):
            assert bucket == sorted(gpus.order[s] for s, free in gpus.free.items() if free == f)


class Recorder:
    """Keeps every decision of the wrapped scheduler."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.decisions: list[tuple[int, Decision]] = []

    def decide(self, view: View) -> Decision:
        d = self.inner.decide(view)
        self.decisions.append((view.t, d))
        return d

    def report(self) -> Any:
        return self.inner.report()


@pytest.mark.parametrize("algorithm", ["asrpt", "wcs-duration"])
def test_decisions_name_only_the_jobs_they_start(algorithm: str) -> None:
    inst = instance(2, mixed=False)
    spec = registry.get(algorithm)
    rec = Recorder(spec.make(inst, spec.parse_params({}), np.random.default_rng(3)))
    result = simulate(inst, rec)
    start = {j.job_id: j.start for j in result.jobs}
    named = 0
    for t, d in rec.decisions:
        assert d.changes is not None and d.allocations == ()
        for job_id, allocs in d.changes.items():
            assert start[job_id] == t and allocs
            named += 1
    assert named == len(inst.jobs)


stage_lists = st.lists(
    st.builds(
        Stage,
        replicas=st.integers(1, 5),
        forward=st.just(1.0),
        backward=st.just(1.0),
        activation_in=st.sampled_from([0.0, 5.0, 20.0]),  # few values: ties between edge weights
        activation_out=st.sampled_from([0.0, 5.0, 20.0]),
        params=st.sampled_from([0.0, 10.0, 40.0]),
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=300, deadline=None)
@given(stage_lists, st.lists(st.integers(0, 8), min_size=1, max_size=40), st.sampled_from(["ring", "tree"]))
def test_fast_heavy_edge_equals_heavy_edge(stages: list[Stage], free: list[int], allreduce: str) -> None:
    graph = job_graph(stages, allreduce)
    servers: list[tuple[str, int]] = []
    left = graph.size
    for i, f in enumerate(free):
        servers.append((f"m{i}", min(f, left)))
        left -= min(f, left)
    servers += [(f"pad{i}", 1) for i in range(left)]  # the rest on one-GPU servers (case 2)
    assert heavy_edge_fast(graph, servers) == heavy_edge(graph, servers)


def test_fast_heavy_edge_equals_heavy_edge_on_large_fragmented_jobs() -> None:
    rng = random.Random(11)
    for replicas, n_stages in ((2, 64), (2, 32), (1, 16), (4, 8)):
        stages = [
            Stage(
                replicas=replicas,
                forward=1.0,
                backward=1.0,
                activation_in=50.0 * (s > 0),
                activation_out=50.0 * (s < n_stages - 1),
                params=100.0,
            )
            for s in range(n_stages)
        ]
        graph = job_graph(stages)
        for _ in range(20):
            servers, left = [], graph.size
            while left:
                take = min(left, rng.choice([1, 1, 1, 2, 3, 5, 8]))
                servers.append((f"m{len(servers)}", take))
                left -= take
            assert heavy_edge_fast(graph, servers) == heavy_edge(graph, servers)
