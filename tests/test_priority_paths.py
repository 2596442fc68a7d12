"""The change-based paths (fifo, srtf, tiresias; drf on rigid traces) give the same schedule as
the full transcriptions they replace."""

from __future__ import annotations

import json

import pytest

from scheduling import presets, registry
from scheduling.engine import simulate
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance
from tests.golden.make_golden import RIGID_CLUSTER, rigid_trace


def rigid(seed: int) -> Instance:
    cluster = cluster_from_dict(RIGID_CLUSTER)
    return Instance(cluster, parse_trace(rigid_trace(seed, 60), cluster, "trace.csv", "csv"))


def preset(name: str, jobs: int, seed: int) -> Instance:
    files = presets.build(name, jobs, seed)
    cluster = cluster_from_dict(json.loads(files.cluster))
    fmt = files.trace_name.rsplit(".", 1)[1]
    return Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, fmt))


INSTANCES = {"rigid-21": lambda: rigid(21), "rigid-22": lambda: rigid(22), "demo": lambda: preset("demo", 16, 9)}
CASES = [
    ("fifo", {}),
    ("fifo", {"backfill": "true"}),
    ("srtf", {}),
    ("tiresias", {"order": "start", "queue_thresholds": "600,3000"}),
    ("drf", {}),
]


@pytest.mark.parametrize("restart_seconds", [0.0, 120.0])
@pytest.mark.parametrize(("algorithm", "params"), CASES)
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_the_change_based_path_schedules_as_the_full_walk(name, algorithm, params, restart_seconds):
    inst = INSTANCES[name]()
    spec = registry.get(algorithm)
    runs = []
    for incremental in (True, False):
        algo = spec.build(inst, spec.parse_params(params), 5)
        algo.incremental = incremental
        runs.append(simulate(inst, algo, restart_seconds=restart_seconds))
    fast, full = runs
    assert fast.jobs == full.jobs
    assert fast.placements == full.placements
    assert fast.progress == full.progress
    assert fast.restarts == full.restarts
