"""Simulated twins: generated instances, one simulation case (Sim) and the comparison of runs."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from scheduling import registry
from scheduling.engine import Run, simulate
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance
from tests.twins.core import first_difference

# -- instances -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rigid:
    """Rigid jobs (arrival slot, GPUs, duration in slots, group) on servers with the given GPUs;
    with ``cpus``, every one-GPU worker also needs 2 CPUs of servers with that many."""

    servers: tuple[int, ...]
    jobs: tuple[tuple[int, int, int, int], ...]
    cpus: int | None = None

    def build(self) -> Instance:
        spec: dict[str, Any] = {
            "slot_seconds": 60,
            "resources": ["gpu"] if self.cpus is None else ["gpu", "cpu"],
            "servers": [
                {"id": f"s{i}", "capacity": {"gpu": g} if self.cpus is None else {"gpu": g, "cpu": self.cpus}}
                for i, g in enumerate(self.servers)
            ],
        }
        if self.cpus is not None:
            spec["worker_types"] = [{"id": "gpu", "demand": {"gpu": 1, "cpu": 2}}]
        cluster = cluster_from_dict(spec)
        rows = ["job_id,arrival,gpus,duration,group"]
        rows += [f"r{i},{a},{g},{60 * d},g{grp}" for i, (a, g, d, grp) in enumerate(self.jobs)]
        return Instance(cluster, parse_trace("\n".join(rows) + "\n", cluster, "trace.csv", "csv"))


@dataclass(frozen=True)
class Preset:
    """A preset's generated instance (elastic PS / all-reduce / multi-resource jobs)."""

    name: str
    jobs: int
    seed: int
    size: float = 1.0

    def build(self) -> Instance:
        from tests.scenarios import preset_instance

        return preset_instance(self.name, self.jobs, self.seed, self.size)


@dataclass(frozen=True)
class Traced:
    """The golden schedules' random rigid trace (tests/golden/make_golden.py) on 4 x 8 GPUs."""

    seed: int
    jobs: int

    def build(self) -> Instance:
        from tests.golden.make_golden import RIGID_CLUSTER, rigid_trace

        cluster = cluster_from_dict(RIGID_CLUSTER)
        return Instance(cluster, parse_trace(rigid_trace(self.seed, self.jobs), cluster, "trace.csv", "csv"))


Source = Rigid | Preset | Traced


@lru_cache(maxsize=32)
def instance_of(source: Source) -> Instance:
    return source.build()


@st.composite
def rigid_sources(draw: Any, max_jobs: int = 40, cpus: bool = False) -> Rigid:
    """A few small servers and bursts of rigid jobs, each no larger than the cluster (at least a
    quarter of ``max_jobs``: queues, evictions and resumes)."""
    servers = tuple(draw(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=4)))
    total = sum(servers)
    deltas = st.sampled_from([0, 0, 0, 1, 2, 5])
    job = st.tuples(deltas, st.sampled_from([1, 1, 1, 2, 3, 4, 8, 16]), st.integers(1, 30), st.integers(0, 2))
    raw = draw(st.lists(job, min_size=max(1, max_jobs // 4), max_size=max_jobs))
    t, jobs = 0, []
    for delta, gpus, duration, group in raw:
        t += delta
        jobs.append((t, min(gpus, total), duration, group))
    return Rigid(servers, tuple(jobs), draw(st.sampled_from([None, 5, 10])) if cpus else None)


PRESETS = {"demo": 1.0, "zhou-ps": 1.0, "zhou-allreduce": 1.0, "oasis": 0.2, "edge-cloud": 0.1}


def preset_sources(names: tuple[str, ...] = tuple(PRESETS), jobs: tuple[int, int] = (8, 18)) -> Any:
    return st.builds(Preset, st.sampled_from(names), st.integers(*jobs), st.integers(0, 999)).map(
        lambda p: dataclasses.replace(p, size=PRESETS[p.name])
    )


def traced_sources(jobs: tuple[int, int] = (30, 60)) -> Any:
    return st.builds(Traced, st.integers(0, 999), st.integers(*jobs))


def sources(max_jobs: int = 40, cpus: bool = False) -> Any:
    return st.one_of(rigid_sources(max_jobs, cpus), traced_sources(), preset_sources())


# -- simulated twins -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sim:
    """One simulation case: an instance, an algorithm with its parameters and the restart cost."""

    source: Source
    algorithm: str
    params: tuple[tuple[str, str], ...] = ()
    restart_seconds: float = 0.0
    extra: Any = None  # what a twin needs besides (e.g. a seed for ready slots)

    @property
    def instance(self) -> Instance:
        return instance_of(self.source)

    def build(self) -> Any:
        spec = registry.get(self.algorithm)
        return spec.build(self.instance, spec.parse_params(dict(self.params)), 5)


@dataclass
class Outcome:
    run: Run
    algo: Any = None


RUN_FIELDS = ("jobs", "placements", "progress", "restarts")


def same_run(*fields: str) -> Callable[[Outcome, Outcome], str | None]:
    def compare(fast: Outcome, reference: Outcome) -> str | None:
        for name in fields:
            diff = first_difference(getattr(fast.run, name), getattr(reference.run, name), name)
            if diff is not None:
                return diff
        return None

    return compare


def run_features(outcome: Outcome) -> set[str]:
    """What a run exercised: jobs that queued, were suspended, moved between servers."""
    run = outcome.run
    seen = set()
    if any(j.start is not None and j.start > j.arrival for j in run.jobs):
        seen.add("queued")
    if any(j.preemptions for j in run.jobs):
        seen.add("suspended")
    where: dict[str, set[str]] = {}
    for p in run.placements:
        where.setdefault(p.job_id, set()).add(p.server)
    if any(len(s) > 1 for s in where.values()):
        seen.add("spread or moved")
    if run.restarts:
        seen.add("restarted")
    return seen


def incremental_run(incremental: bool, horizon: int | None = None) -> Callable[[Sim], Outcome]:
    """Build the case's algorithm, choose its path by ``incremental`` and simulate."""

    def run(case: Sim) -> Outcome:
        algo = case.build()
        algo.incremental = incremental
        return Outcome(simulate(case.instance, algo, horizon=horizon, restart_seconds=case.restart_seconds), algo)

    return run


def sims(source: Any, algorithms: list[tuple[str, dict[str, str]]], extra: Any = None) -> Any:
    """Cases of ``algorithms`` (name, parameters) on ``source``, without and with a restart cost."""
    return st.tuples(
        source, st.sampled_from(algorithms), st.sampled_from([0.0, 120.0]), st.none() if extra is None else extra
    ).map(lambda x: Sim(x[0], x[1][0], tuple(sorted(x[1][1].items())), x[2], x[3]))


def ready_slots(case: Sim) -> dict[str, int]:
    """Most jobs wait 0-12 slots after arriving before the walk may see them; a few are ready at once."""
    rng = random.Random(case.extra)
    return {j.job_id: j.arrival + rng.choice([0, 0, 1, 3, 12]) for j in case.instance.jobs}
