"""antman's change path (AntMan.decide -> _Changes) gives the same run as the full walk
(AntMan.decide_full) it replaces: jobs, placements, progress, restarts and the report."""

from __future__ import annotations

import dataclasses
import random

import pytest

from scheduling import registry
from scheduling.engine import Decision, Run, View, simulate
from scheduling.loaders import cluster_from_dict
from scheduling.model import Instance, Job
from tests.scenarios import preset_instance


def random_rigid(seed: int, jobs: int = 70) -> Instance:
    """Rigid jobs in bursts on a few small servers: queues, starvation and guaranteed jobs that
    displace opportunistic ones (a job of up to a whole cluster's GPUs, so every job can run)."""
    rng = random.Random(seed)
    servers = rng.randint(2, 4)
    per = rng.choice([2, 4, 8])
    cluster = cluster_from_dict(
        {
            "slot_seconds": 60,
            "resources": ["gpu"],
            "servers": [{"id": f"s{i}", "capacity": {"gpu": per}} for i in range(servers)],
        }
    )
    t, rows = 0, []
    for i in range(jobs):
        t += rng.choice([0, 0, 0, 1, 2, 5])
        gpus = min(servers * per, rng.choice([1, 1, 1, 2, 3, 4, 8, 16]))
        rows.append(Job(job_id=f"r{i:03d}", arrival=t, gpus=gpus, duration=rng.randint(1, 30)))
    return Instance(cluster, tuple(rows))


# Rigid jobs, and elastic PS / all-reduce / multi-resource jobs on preset clusters small enough
# to be congested.
INSTANCES = {
    **{f"rigid-{seed}": (lambda seed=seed: random_rigid(seed)) for seed in range(8)},
    "demo": lambda: preset_instance("demo", 20, 9),
    "zhou-ps": lambda: preset_instance("zhou-ps", 16, 4),
    "zhou-allreduce": lambda: preset_instance("zhou-allreduce", 16, 5),
    "oasis": lambda: preset_instance("oasis", 18, 6, 0.2),
    "edge-cloud": lambda: preset_instance("edge-cloud", 16, 7, 0.1),
}
PARAMS = [
    {},  # quota 0.5, max_wait 24
    {"quota": "0"},  # every job opportunistic
    {"quota": "1"},
    {"quota": "0.25", "max_wait": "1"},
    {"quota": "0.7", "max_wait": "3"},
]


def runs(inst: Instance, params: dict[str, str], restart_seconds: float = 0.0) -> tuple[Run, Run]:
    spec = registry.get("antman")
    out = []
    for incremental in (True, False):
        algo = spec.build(inst, spec.parse_params(params), 5)
        algo.incremental = incremental
        out.append(simulate(inst, algo, restart_seconds=restart_seconds))
        assert (algo._state is not None) == incremental  # the path asked for is the one taken
        if algo._state is not None:  # the waiting jobs' queues per (shape, workers), nothing else
            state = algo._state
            queued = {state.ids[r]: key for key, ranks in state.queues.items() for r in ranks}
            assert all(ranks == sorted(set(ranks)) for ranks in state.queues.values())
            assert all(state.queues.values()) and queued.keys() == state.waiting
            assert all(state.need[job_id] == key for job_id, key in queued.items())
            assert state.ids == {r: job_id for job_id, r in state.rank.items()}
            assert state.fresh == sorted(state.rank[j] for j in state.unstarted)  # never started
            assert state.started == sorted(state.rank[j] for j in state.rank.keys() - state.unstarted)
    return out[0], out[1]


def assert_same(fast: Run, full: Run) -> None:
    assert fast.jobs == full.jobs
    assert fast.placements == full.placements
    assert fast.progress == full.progress
    assert fast.restarts == full.restarts
    assert fast.extra == full.extra  # opportunistic_runs
    assert fast.horizon == full.horizon


@pytest.mark.parametrize("restart_seconds", [0.0, 120.0])
@pytest.mark.parametrize("params", PARAMS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "default")
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_the_change_path_runs_as_the_full_walk(name, params, restart_seconds):
    fast, full = runs(INSTANCES[name](), params, restart_seconds)
    assert_same(fast, full)


def test_the_rigid_instances_exercise_suspensions_moves_and_starvation():
    # What the change path must get right besides starts: guaranteed jobs that suspend or move
    # opportunistic ones, and jobs that run as opportunistic after waiting max_wait slots.
    suspended = moved = starved = 0
    for seed in range(8):
        inst = random_rigid(seed)
        fast, full = runs(inst, {"quota": "0.7", "max_wait": "3"})
        assert_same(fast, full)
        suspended += sum(j.preemptions for j in fast.jobs)
        servers: dict[str, set[tuple[int, str]]] = {}
        for p in fast.placements:
            servers.setdefault(p.job_id, set()).add((p.start, p.server))
        moved += sum(1 for segs in servers.values() if len({s for _, s in segs}) > 1)
        starved += sum(1 for j in fast.jobs if j.start is not None and j.start - j.arrival >= 3)
    assert suspended > 0 and moved > 0 and starved > 0


def test_a_long_congested_rigid_run():
    # Many events with long queues: every decision's suffix starts at a different place.
    fast, full = runs(random_rigid(99, jobs=400), {"quota": "0.5", "max_wait": "6"}, 120.0)
    assert_same(fast, full)
    assert fast.extra["antman"]["opportunistic_runs"] > 0


class Alternating:
    """Shows antman a copied view (its jobs a tuple: the full walk, and the change path's state
    dropped) at every third event and the engine's own view otherwise, so that the change path
    starts again mid-run from jobs that already run, were suspended or wait."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.events = 0
        self.rebuilt = 0

    def decide(self, view: View) -> Decision:
        self.events += 1
        if self.events % 3 == 0:
            return self.inner.decide(dataclasses.replace(view, jobs=tuple(view.jobs)))
        self.rebuilt += self.inner._state is None
        return self.inner.decide(view)

    def report(self):
        return self.inner.report()


@pytest.mark.parametrize("seed", range(6))
def test_the_change_path_starts_mid_run_from_the_jobs_as_they_are(seed):
    inst = random_rigid(seed)
    spec = registry.get("antman")
    params = spec.parse_params({"quota": "0.5", "max_wait": "4"})
    mixed = Alternating(spec.build(inst, params, 5))
    fast = simulate(inst, mixed, restart_seconds=60.0)
    full_algo = spec.build(inst, params, 5)
    full_algo.incremental = False
    assert_same(fast, simulate(inst, full_algo, restart_seconds=60.0))
    assert mixed.rebuilt > 1
