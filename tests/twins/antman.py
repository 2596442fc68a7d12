"""Twins of antman (scheduling/algorithms/antman.py): the change path (AntMan.decide -> _Changes)
against the full walk (AntMan.decide_full), from the first event or started again mid-run."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from scheduling.engine import Decision, View, simulate
from tests.twins.core import Twin
from tests.twins.sims import (
    RUN_FIELDS,
    Outcome,
    Rigid,
    Sim,
    incremental_run,
    rigid_sources,
    run_features,
    same_run,
    sims,
    sources,
)

# opportunistic_runs (extra) and the end slot too
SAME = same_run(*RUN_FIELDS, "extra", "horizon")

PARAMS = [
    {},  # quota 0.5, max_wait 24
    {"quota": "0"},  # every job opportunistic
    {"quota": "1"},
    {"quota": "0.25", "max_wait": "1"},
    {"quota": "0.7", "max_wait": "3"},
]


def change_path(case: Sim) -> Outcome:
    out = incremental_run(True)(case)
    state = out.algo._state
    assert state is not None  # the path asked for is the one taken
    # The waiting jobs' queues per (shape, workers), nothing else.
    queued = {state.ids[r]: key for key, ranks in state.queues.items() for r in ranks}
    assert all(ranks == sorted(set(ranks)) for ranks in state.queues.values())
    assert all(state.queues.values()) and queued.keys() == state.waiting
    assert all(state.need[job_id] == key for job_id, key in queued.items())
    assert state.ids == {r: job_id for job_id, r in state.rank.items()}
    assert state.fresh == sorted(state.rank[j] for j in state.unstarted)  # never started
    assert state.started == sorted(state.rank[j] for j in state.rank.keys() - state.unstarted)
    return out


def full_walk(case: Sim) -> Outcome:
    out = incremental_run(False)(case)
    assert out.algo._state is None
    return out


def features(outcome: Outcome) -> set[str]:
    # "starved": a job that ran as opportunistic after waiting max_wait slots without starting
    algo = outcome.algo
    starved = any(j.start is not None and j.start - j.arrival >= algo.max_wait for j in outcome.run.jobs)
    return run_features(outcome) | ({"starved"} if starved else set())


class Alternating:
    """Shows antman a copied view (its jobs a tuple: the full walk, and the change path's state
    dropped) at every third event and the engine's own view otherwise, so that the change path
    starts again mid-run from jobs that already run, were suspended or wait."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.events = 0
        self.rebuilt = 0

    def decide(self, view: View) -> Decision:
        self.events += 1
        if self.events % 3 == 0:
            return self.inner.decide(dataclasses.replace(view, jobs=tuple(view.jobs)))
        self.rebuilt += self.inner._state is None
        return self.inner.decide(view)

    def report(self) -> Any:
        return self.inner.report()


def alternating(case: Sim) -> Outcome:
    mixed = Alternating(case.build())
    return Outcome(simulate(case.instance, mixed, restart_seconds=case.restart_seconds), mixed)


def random_rigid(seed: int, jobs: int) -> Rigid:
    """Rigid jobs in bursts on a few small servers (each job at most the cluster's GPUs)."""
    rng = random.Random(seed)
    servers = rng.randint(2, 4)
    per = rng.choice([2, 4, 8])
    t, rows = 0, []
    for _ in range(jobs):
        t += rng.choice([0, 0, 0, 1, 2, 5])
        rows.append((t, min(servers * per, rng.choice([1, 1, 1, 2, 3, 4, 8, 16])), rng.randint(1, 30), 0))
    return Rigid((per,) * servers, tuple(rows))


TWINS = [
    Twin(
        "antman",
        "AntMan change path (_Changes) vs decide_full",
        sims(sources(max_jobs=40), [("antman", p) for p in PARAMS]),
        change_path,
        full_walk,
        SAME,
        examples=40,
        features=features,
        must_see=frozenset({"queued", "suspended", "spread or moved", "starved", "restarted"}),
        named={
            # many events with long queues: every decision's suffix starts at a different place
            "a long congested rigid run": Sim(
                random_rigid(99, 400), "antman", (("max_wait", "6"), ("quota", "0.5")), 120.0
            ),
        },
    ),
    Twin(
        "antman-mid-run",
        "AntMan change path started again mid-run vs decide_full",
        sims(rigid_sources(max_jobs=40), [("antman", {"quota": "0.5", "max_wait": "4"})]),
        alternating,
        full_walk,
        SAME,
        examples=15,
        features=lambda outcome: {"rebuilt"} if outcome.algo.rebuilt > 1 else set(),
        must_see=frozenset({"rebuilt"}),
    ),
]
