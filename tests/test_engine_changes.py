"""The change-based Decision: the engine checks and commits only what changes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from scheduling.engine import Decision, View, simulate
from scheduling.errors import ScheduleError
from scheduling.speed import Allocation
from tests.scenarios import instance


class Changes:
    """Plays back a fixed set of changes per decision slot and records what each view said."""

    def __init__(self, plan: Mapping[int, Mapping[str, tuple[Allocation, ...]]]) -> None:
        self.plan = plan
        self.completed: dict[int, tuple[str, ...]] = {}
        self.running: dict[int, set[str]] = {}

    def decide(self, view: View) -> Decision:
        self.completed[view.t] = view.completed
        self.running[view.t] = set(view.running())
        later = [t for t in self.plan if t > view.t]
        return Decision(changes=self.plan.get(view.t, {}), wake_at=min(later, default=None))

    def report(self) -> Mapping[str, Any]:
        return {}


TWO_JOBS = "job_id,arrival,gpus,duration\nx,0,4,120\ny,5,4,120\n"


def on(job: str, server: str, gpus: int = 4) -> tuple[Allocation, ...]:
    return (Allocation(job, server, "worker", "gpu", gpus),)


def test_jobs_not_named_keep_their_allocation():
    inst = instance("job_id,arrival,gpus,duration\nx,0,4,180\ny,1,4,60\n")
    algo = Changes({0: {"x": on("x", "s-0")}, 1: {"y": on("y", "s-1")}})
    run = simulate(inst, algo)
    assert {j.job_id: (j.start, j.completion) for j in run.jobs} == {"x": (0, 3), "y": (1, 2)}
    assert algo.running[1] == {"x"}


def test_a_change_that_overbooks_a_server_raises():
    inst = instance("job_id,arrival,gpus,duration\nx,0,4,180\ny,1,4,60\n")
    algo = Changes({0: {"x": on("x", "s-0")}, 1: {"y": on("y", "s-0")}})
    with pytest.raises(ScheduleError, match="do not fit on server 's-0'"):
        simulate(inst, algo)


def test_a_move_frees_the_old_servers_in_the_same_decision():
    inst = instance("job_id,arrival,gpus,duration\nx,0,4,180\ny,1,4,60\n")
    algo = Changes({0: {"x": on("x", "s-0")}, 1: {"x": on("x", "s-1"), "y": on("y", "s-0")}})
    run = simulate(inst, algo)
    assert [(p.job_id, p.server, p.start, p.end) for p in run.placements] == [
        ("x", "s-0", 0, 1),
        ("x", "s-1", 1, 3),
        ("y", "s-0", 1, 2),
    ]


def test_a_completion_while_nothing_waits_is_told_at_the_next_decision():
    algo = Changes({0: {"x": on("x", "s-0")}, 5: {"y": on("y", "s-0")}})
    run = simulate(instance(TWO_JOBS), algo)
    assert algo.completed == {0: (), 5: ("x",)}  # x completed at 2, when no job was active
    assert [j.completion for j in run.jobs] == [2, 7]
