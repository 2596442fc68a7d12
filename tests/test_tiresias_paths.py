"""`tiresias`' change-based path gives the same schedule as its full transcription (decide_full)."""

from __future__ import annotations

import pytest

from scheduling import registry
from scheduling.engine import simulate
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance
from tests.golden.make_golden import RIGID_CLUSTER, rigid_trace
from tests.scenarios import preset_instance


def rigid(seed: int, jobs: int, servers: int = 4) -> Instance:
    cluster = cluster_from_dict({**RIGID_CLUSTER, "servers": [{"id": "m", "count": servers, "capacity": {"gpu": 8}}]})
    return Instance(cluster, parse_trace(rigid_trace(seed, jobs), cluster, "trace.csv", "csv"))


def cpu_bound(seed: int, jobs: int) -> Instance:
    """Rigid jobs whose one-GPU workers also need 2 CPUs, on servers with 8 GPUs and 10 CPUs: GPU
    counting no longer decides what fits, so evictions that do not make room (and are undone) occur."""
    cluster = cluster_from_dict(
        {
            "slot_seconds": 60,
            "resources": ["gpu", "cpu"],
            "servers": [{"id": "m", "count": 3, "capacity": {"gpu": 8, "cpu": 10}}],
            "worker_types": [{"id": "gpu", "demand": {"gpu": 1, "cpu": 2}}],
        }
    )
    return Instance(cluster, parse_trace(rigid_trace(seed, jobs), cluster, "trace.csv", "csv"))


INSTANCES = {
    "rigid-21": lambda: rigid(21, 60),
    "rigid-22": lambda: rigid(22, 60),
    "rigid-busy": lambda: rigid(23, 150, servers=2),  # a long queue: many evictions
    "cpu-bound": lambda: cpu_bound(31, 80),
    "demo": lambda: preset_instance("demo", 16, 9),  # elastic jobs with PSs
    "zhou-ps": lambda: preset_instance("zhou-ps", 14, 4),
    # separate worker and PS pools with several resources: jobs that eviction cannot place are
    # refused before evicting (ChangePath._could_fit_evicting)
    "oasis": lambda: preset_instance("oasis", 30, 5, 0.2),
}
PARAMS = [
    {},
    {"queue_thresholds": "600,3000"},
    {"queue_thresholds": "300,1200,6000", "promote_knob": "2"},
    {"queue_thresholds": "600,3000", "promote_knob": "1.5"},
]


def run_both(inst: Instance, params: dict[str, str], restart_seconds: float) -> tuple:
    spec = registry.get("tiresias")
    runs = []
    for incremental in (True, False):
        algo = spec.build(inst, spec.parse_params(params), 5)
        algo.incremental = incremental
        # A horizon: with a restart cost, tiny thresholds and PromoteKnob, jobs can keep taking
        # turns without finishing (both paths alike).
        runs.append(simulate(inst, algo, horizon=3000, restart_seconds=restart_seconds))
        assert algo._path == ("fast" if incremental else "full")
    return tuple(runs)


@pytest.mark.parametrize("restart_seconds", [0.0, 120.0])
@pytest.mark.parametrize("params", PARAMS, ids=lambda p: ";".join(f"{k}={v}" for k, v in p.items()) or "default")
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_the_change_based_path_schedules_as_the_full_transcription(name, params, restart_seconds):
    fast, full = run_both(INSTANCES[name](), params, restart_seconds)
    assert fast.jobs == full.jobs
    assert fast.placements == full.placements
    assert fast.progress == full.progress
    assert fast.restarts == full.restarts


def test_the_busy_instance_preempts_and_promotes():
    """The comparison above is not vacuous: jobs are suspended (evicted) and resumed."""
    fast, _full = run_both(INSTANCES["rigid-busy"](), PARAMS[2], 0.0)
    assert sum(j.preemptions for j in fast.jobs) > 20


@pytest.mark.parametrize("params", [PARAMS[0], PARAMS[2]], ids=["default", "promote"])
def test_the_oasis_instance_spares_evictions(params):
    """The comparison is not vacuous for the check before evicting either: on separate pools it
    refuses jobs (without evicting anything) that the full transcription evicts for and restores."""
    inst = INSTANCES["oasis"]()
    spec = registry.get("tiresias")
    algo = spec.build(inst, spec.parse_params(params), 5)
    simulate(inst, algo, horizon=3000)
    assert algo._fast is not None and algo._fast.spared > 20
