"""The engine commits what algorithms propose, and refuses what does not fit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from scheduling import results
from scheduling.engine import Decision, View, simulate
from scheduling.errors import ScheduleError
from scheduling.speed import Allocation
from scheduling.validator import validate
from tests.scenarios import RIGID_TRACE, instance


class Scripted:
    """An algorithm that plays back a fixed allocation per decision slot."""

    def __init__(self, plan: Mapping[int, tuple[Allocation, ...]], wake: Mapping[int, int] | None = None) -> None:
        self.plan = plan
        self.wake = wake or {}
        self.seen: list[int] = []

    def decide(self, view: View) -> Decision:
        self.seen.append(view.t)
        allocs = self.plan.get(view.t, view.allocations)
        return Decision(allocations=tuple(allocs), wake_at=self.wake.get(view.t))

    def report(self) -> Mapping[str, Any]:
        return {}


def one_rigid_job(gpus: int = 2, duration_s: int = 300) -> str:
    return f"job_id,arrival,gpus,duration\nx,1,{gpus},{duration_s}\n"


def test_a_rigid_job_completes_after_its_recorded_duration():
    inst = instance(one_rigid_job())
    algo = Scripted({1: (Allocation("x", "s-0", "worker", "gpu", 2),)})
    run = simulate(inst, algo)
    (job,) = run.jobs
    assert (job.start, job.completion) == (1, 6)  # 300 s = 5 slots of 60 s


def test_a_job_with_too_few_gpus_makes_no_progress():
    inst = instance(one_rigid_job())
    algo = Scripted({1: (Allocation("x", "s-0", "worker", "gpu", 1),)}, wake={1: 4})
    run = simulate(inst, algo, horizon=4)
    assert run.jobs[0].completion is None
    assert run.jobs[0].work_done == 0


def test_the_engine_refuses_an_overbooked_server():
    inst = instance(one_rigid_job(gpus=5))
    algo = Scripted({1: (Allocation("x", "s-0", "worker", "gpu", 5),)})
    with pytest.raises(ScheduleError, match="do not fit on server 's-0'"):
        simulate(inst, algo)


def test_the_engine_refuses_a_placement_before_arrival():
    inst = instance("job_id,arrival,gpus,duration\nx,0,1,60\ny,3,1,60\n")
    algo = Scripted({0: (Allocation("x", "s-0", "worker", "gpu", 1), Allocation("y", "s-0", "worker", "gpu", 1))})
    with pytest.raises(ScheduleError, match="'y'"):
        simulate(inst, algo)


class Rejecting(Scripted):
    """Repeats the committed allocation and, at ``at``, also rejects the running job ``x``."""

    def __init__(self, at: int) -> None:
        super().__init__({1: (Allocation("x", "s-0", "worker", "gpu", 2),)}, wake={1: at})
        self.at = at

    def decide(self, view: View) -> Decision:
        d = super().decide(view)
        return Decision(d.allocations, reject=("x",)) if view.t == self.at else d


def test_a_complete_decision_is_checked_even_where_it_repeats_the_committed_allocation():
    # The engine skips the checks of a job whose allocations equal the committed ones (checked when
    # committed); what the repeat cannot make valid must still be refused.
    inst = instance(one_rigid_job())
    with pytest.raises(ScheduleError, match="may not run now"):
        simulate(inst, Rejecting(at=3))  # rejected by the decision that repeats its allocation
    held = Allocation("x", "s-0", "worker", "gpu", 2)
    zero = Allocation("x", "s-0", "worker", "gpu", 0)  # would merge into the committed allocation
    with pytest.raises(ScheduleError, match="count 0"):
        simulate(inst, Scripted({1: (held,), 3: (held, zero)}, wake={1: 3}))
    stranger = Allocation("nobody", "s-0", "worker", "gpu", 1)
    with pytest.raises(ScheduleError, match="'nobody'"):
        simulate(inst, Scripted({1: (held,), 3: (held, stranger)}, wake={1: 3}))


def test_suspending_a_running_job_counts_one_preemption():
    inst = instance(one_rigid_job())
    run_alloc = (Allocation("x", "s-0", "worker", "gpu", 2),)
    algo = Scripted({1: run_alloc, 3: (), 5: run_alloc}, wake={1: 3, 3: 5})
    run = simulate(inst, algo)
    job = run.jobs[0]
    assert job.preemptions == 1
    assert job.completion == 8  # 2 slots, 2 idle, 3 more


def test_progress_is_one_segment_per_constant_allocation():
    inst = instance(one_rigid_job())
    algo = Scripted({1: (Allocation("x", "s-0", "worker", "gpu", 2),)}, wake={1: 2, 2: 3})
    run = simulate(inst, algo)
    assert [(p.start, p.end) for p in run.progress] == [(1, 6)]


def test_the_engine_only_wakes_at_events():
    inst = instance(one_rigid_job(duration_s=600_000))
    algo = Scripted({1: (Allocation("x", "s-0", "worker", "gpu", 2),)})
    simulate(inst, algo)
    assert algo.seen == [1]


def test_a_scripted_schedule_passes_the_validator():
    inst = instance(RIGID_TRACE)
    plan = {
        0: (Allocation("r1", "s-0", "worker", "gpu", 4), Allocation("r2", "s-1", "worker", "gpu", 4)),
    }
    algo = Scripted(plan, wake={0: 5})
    plan[5] = (Allocation("r1", "s-0", "worker", "gpu", 4),)
    plan[10] = (Allocation("r2", "s-0", "worker", "gpu", 4), Allocation("r2", "s-1", "worker", "gpu", 4))
    algo.wake = {0: 5, 5: 10}
    run = simulate(inst, algo, horizon=20)
    doc = results.build(inst, run, "scripted", {}, 0)
    assert validate(inst, doc) == []


def test_utilization_over_time_is_a_step_function_of_the_placements():
    from scheduling.metrics import Usage, utilization_timeline

    usages = [Usage(0, 4, {"gpu": 4.0}, True), Usage(2, 6, {"gpu": 2.0}, True), Usage(1, 9, {"gpu": 8.0}, False)]
    assert utilization_timeline(usages, {"gpu": 8.0}) == {"gpu": [(0, 0.5), (2, 0.75), (4, 0.25), (6, 0.0)]}
