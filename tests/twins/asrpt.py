"""Twins of A-SRPT and its baselines (scheduling/algorithms/asrpt/): the incremental path
(change-based decisions, free-GPU buckets, Heavy-Edge plans reused per demand shape, the lazy
release=arrival queue, one heap of waiting jobs per GPU demand) against the plain transcription
(``readable``), and the parts it is built from: bucketed server selection against sorting, and
heavy_edge_fast against heavy_edge."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from hypothesis import strategies as st

from scheduling import presets, registry
from scheduling.algorithms.asrpt.cluster import Gpus
from scheduling.algorithms.asrpt.mapping import heavy_edge, heavy_edge_fast, job_graph
from scheduling.engine import simulate
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance, Job, Stage
from scheduling.speed import Allocation
from tests.twins.core import Twin, first_difference
from tests.twins.sims import RUN_FIELDS, Outcome, run_features, same_run

CASES: list[tuple[str, dict[str, str]]] = [
    ("asrpt", {}),
    ("asrpt", {"release": "arrival"}),
    ("asrpt", {"tau": "5", "comm_heavy": "1.05"}),
    ("asrpt", {"release": "arrival", "tau": "0", "comm_heavy": "1.05", "allreduce": "tree"}),
    ("spjf", {}),
    ("spwf", {"selection": "least"}),
    ("wcs-duration", {}),
    ("wcs-workload", {"selection": "first"}),
    ("wcs-subtime", {}),
]


@dataclass(frozen=True)
class Loaded:
    """A loaded random asrpt-preset instance (load 6: queues form) with a history from another
    seed; ``mixed``: two server shapes with different links instead of the preset's one; ``rigid``:
    the same jobs as rigid trace jobs (g_i one-GPU workers for a recorded duration)."""

    seed: int
    jobs: int
    mixed: bool
    rigid: bool

    def build(self) -> Instance:
        files = presets.build("asrpt", jobs=self.jobs, seed=self.seed, size=0.02, load=6.0)
        spec = json.loads(files.cluster)
        if self.mixed:
            base = spec["servers"][0]
            spec["servers"] = [
                {**base, "id": "big", "count": 3},
                {
                    **base,
                    "id": "small",
                    "count": 4,
                    "capacity": {"gpu": 4},
                    "nic_bw_gbps": 25.0,
                    "intra_bw_gbps": 600.0,
                },
            ]
        cluster = cluster_from_dict(spec)
        past = presets.build("asrpt", jobs=self.jobs, seed=self.seed + 1000, size=0.02, load=6.0)
        history = parse_trace(past.trace, cluster, past.trace_name, "json")
        inst = Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, "json"), history=history)
        return as_rigid(inst) if self.rigid else inst


def as_rigid(inst: Instance) -> Instance:
    def rigid(j: Job) -> Job:
        return Job(
            j.job_id, j.arrival, gpus=j.gpus, duration=max(1, int(j.work_required) // 500), group=j.group, user=j.user
        )

    return Instance(inst.cluster, tuple(map(rigid, inst.jobs)), history=tuple(map(rigid, inst.history)))


@lru_cache(maxsize=16)
def loaded(source: Loaded) -> Instance:
    return source.build()


@dataclass(frozen=True)
class AsrptCase:
    source: Loaded
    algorithm: str
    params: tuple[tuple[str, str], ...]


def run(readable: bool):
    def go(case: AsrptCase) -> Outcome:
        inst = loaded(case.source)
        spec = registry.get(case.algorithm)
        assert spec.unsupported(inst) is None
        algo = spec.make(inst, spec.parse_params(dict(case.params)), np.random.default_rng(3), readable=readable)  # type: ignore[call-arg]
        return Outcome(simulate(inst, algo))

    return go


ASRPT_CASES = st.tuples(
    st.builds(Loaded, st.integers(0, 999), st.integers(30, 90), st.booleans(), st.booleans()), st.sampled_from(CASES)
).map(lambda x: AsrptCase(x[0], x[1][0], tuple(sorted(x[1][1].items()))))


# -- bucketed server selection (Gpus.select_fast against Gpus.select) -----------------------------


@dataclass(frozen=True)
class Selections:
    """Server groups (count, GPUs per server); steps (release or not, pick, GPUs wanted, how)."""

    groups: tuple[tuple[int, int], ...]
    steps: tuple[tuple[bool, int, int, str], ...]


def selections(fast: bool):
    def go(case: Selections) -> list[Any]:
        cluster = cluster_from_dict(
            {
                "slot_seconds": 60,
                "resources": ["gpu"],
                "servers": [
                    {"id": f"m{i}", "count": c, "capacity": {"gpu": g}} for i, (c, g) in enumerate(case.groups)
                ],
            }
        )
        gpus = Gpus(cluster, fast=fast)
        held: list[tuple[Allocation, ...]] = []
        log: list[Any] = []
        for release, pick, wanted, how in case.steps:
            if held and (gpus.available == 0 or release):
                gpus.release(held.pop(pick % len(held)))
                continue
            if gpus.available == 0:
                continue
            n = 1 + wanted % gpus.available
            chosen = gpus.select(n, how)  # select_fast when fast
            assert sum(k for _, k in chosen) == n
            log.append(chosen)
            allocs = tuple(Allocation("j", m, "worker", "gpu", k) for m, k in chosen)
            gpus.take(allocs)
            held.append(allocs)
            if fast:
                for f, bucket in enumerate(gpus.by_free):
                    assert bucket == sorted(gpus.order[s] for s, free in gpus.free.items() if free == f)
        return log

    return go


SELECTIONS = st.builds(
    Selections,
    st.lists(st.tuples(st.integers(1, 4), st.sampled_from([1, 2, 4, 8])), min_size=1, max_size=4).map(tuple),
    st.lists(
        st.tuples(st.booleans(), st.integers(0, 100), st.integers(0, 100), st.sampled_from(["most", "least", "first"])),
        min_size=1,
        max_size=80,
    ).map(tuple),
)

# -- Heavy-Edge ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mapping:
    stages: tuple[Stage, ...]
    servers: tuple[tuple[str, int], ...]
    allreduce: str


@st.composite
def mappings(draw: Any) -> Mapping:
    stages = draw(
        st.lists(
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
    )
    free = draw(st.lists(st.integers(0, 8), min_size=1, max_size=40))
    left = sum(s.replicas for s in stages)
    servers = []
    for i, f in enumerate(free):
        servers.append((f"m{i}", min(f, left)))
        left -= min(f, left)
    servers += [(f"pad{i}", 1) for i in range(left)]  # the rest on one-GPU servers (case 2)
    return Mapping(tuple(stages), tuple(servers), draw(st.sampled_from(["ring", "tree"])))


def large_fragmented(replicas: int, n_stages: int, seed: int) -> Mapping:
    """A long pipeline spread over many small free-GPU fragments."""
    rng = random.Random(seed)
    stages = tuple(
        Stage(replicas, 1.0, 1.0, activation_in=50.0 * (s > 0), activation_out=50.0 * (s < n_stages - 1), params=100.0)
        for s in range(n_stages)
    )
    servers: list[tuple[str, int]] = []
    left = replicas * n_stages
    while left:
        take = min(left, rng.choice([1, 1, 1, 2, 3, 5, 8]))
        servers.append((f"m{len(servers)}", take))
        left -= take
    return Mapping(stages, tuple(servers), "ring")


def mapped(fast: bool):
    def go(case: Mapping) -> list[str]:
        graph = job_graph(case.stages, case.allreduce)
        return (heavy_edge_fast if fast else heavy_edge)(graph, list(case.servers))

    return go


TWINS = [
    Twin(
        "asrpt",
        "A-SRPT and baselines: incremental path vs readable transcription",
        ASRPT_CASES,
        run(False),
        run(True),
        same_run(*RUN_FIELDS),
        examples=16,
        features=run_features,
        must_see=frozenset({"queued", "spread or moved"}),
    ),
    Twin(
        "asrpt-gpu-buckets",
        "Gpus.select_fast (free-GPU buckets) vs Gpus.select (sorting)",
        SELECTIONS,
        selections(True),
        selections(False),
        lambda a, b: first_difference(a, b, "selections"),
        examples=60,
    ),
    Twin(
        "heavy-edge",
        "heavy_edge_fast vs heavy_edge (Heavy-Edge, A-SRPT Alg. 2)",
        mappings(),
        mapped(True),
        mapped(False),
        lambda a, b: first_difference(a, b, "servers per GPU"),
        examples=300,
        named={
            f"{r} x {n} stages on fragments ({seed})": large_fragmented(r, n, seed)
            for r, n in ((2, 64), (2, 32), (1, 16), (4, 8))
            for seed in range(3)
        },
    ),
]
