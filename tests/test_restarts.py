"""Restart cost (DESIGN section 9): a job that restarts on another allocation loses restart time.

Tiny hand-computed cases on the two-server tiny cluster (60-s slots, 4 GPUs per server) with a
restart time of 120 s = 2 slots.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import pytest

from scheduling import api, results
from scheduling.cli import main
from scheduling.engine import Decision, View, simulate
from scheduling.loaders import cluster_from_dict
from scheduling.speed import Allocation
from scheduling.validator import validate
from tests.scenarios import ELASTIC_TRACE, RIGID_TRACE, TINY_CLUSTER, instance

RESTART = 120.0  # seconds: 2 slots of 60 s


class Scripted:
    """Plays back a fixed allocation per decision slot and asks to wake at the next planned slot."""

    def __init__(self, plan: Mapping[int, tuple[Allocation, ...]]) -> None:
        self.plan = plan

    def decide(self, view: View) -> Decision:
        allocs = self.plan.get(view.t, tuple(view.allocations))
        later = [t for t in self.plan if t > view.t]
        return Decision(allocations=tuple(allocs), wake_at=min(later, default=None))

    def report(self) -> Mapping[str, Any]:
        return {}


X_ON_S0 = (Allocation("x", "s-0", "worker", "gpu", 2),)
X_ON_S1 = (Allocation("x", "s-1", "worker", "gpu", 2),)
ONE_JOB = "job_id,arrival,gpus,duration\nx,1,2,300\n"  # 5 slots of work from slot 1


def run_doc(inst, plan, restart_seconds=RESTART):
    run = simulate(inst, Scripted(plan), restart_seconds=restart_seconds)
    doc = results.build(inst, run, "scripted", {}, 0)
    return run, doc


def test_a_first_start_costs_nothing():
    run, doc = run_doc(instance(ONE_JOB), {1: X_ON_S0})
    assert run.jobs[0].completion == 6
    assert doc["restarts"] == []
    assert validate(instance(ONE_JOB), doc) == []


def test_a_resume_after_a_suspension_loses_the_restart_time():
    inst = instance(ONE_JOB)
    run, doc = run_doc(inst, {1: X_ON_S0, 3: (), 5: X_ON_S0})
    # 2 slots of work, suspended for 2, restarting for 2 (holding s-0), then the 3 slots left.
    assert [(p.start, p.end) for p in run.progress] == [(1, 3), (7, 10)]
    assert doc["restarts"] == [{"job_id": "x", "start": 5, "end": 7}]
    assert run.jobs[0].completion == 10
    assert (doc["metrics"]["restarts"], doc["metrics"]["restart_gpu_slots"]) == (1, 4.0)
    assert validate(inst, doc) == []


def test_a_migration_loses_the_restart_time_but_is_no_preemption():
    inst = instance(ONE_JOB)
    run, doc = run_doc(inst, {1: X_ON_S0, 3: X_ON_S1})
    assert [(p.start, p.end) for p in run.progress] == [(1, 3), (5, 8)]
    assert doc["restarts"] == [{"job_id": "x", "start": 3, "end": 5}]
    assert (run.jobs[0].completion, run.jobs[0].preemptions) == (8, 0)
    assert validate(inst, doc) == []


def test_a_resize_loses_the_restart_time():
    inst = instance(ELASTIC_TRACE)
    one = (Allocation("a", "s-0", "worker", "w1", 1), Allocation("a", "s-0", "ps", "p1", 1))
    two = (Allocation("a", "s-0", "worker", "w1", 2), Allocation("a", "s-0", "ps", "p1", 1))
    free, _ = run_doc(inst, {0: one, 3: two}, restart_seconds=0)
    charged, doc = run_doc(inst, {0: one, 3: two})
    a_free = next(j for j in free.jobs if j.job_id == "a")
    a_charged = next(j for j in charged.jobs if j.job_id == "a")
    assert doc["restarts"] == [{"job_id": "a", "start": 3, "end": 5}]
    # The same work at the same rates, shifted by the two restart slots.
    assert a_charged.completion == a_free.completion + 2
    assert [(p.start, p.end) for p in charged.progress if p.job_id == "a"] == [(0, 3), (5, a_charged.completion)]
    assert validate(inst, doc) == []


def test_a_restart_cut_short_by_another_change_ends_there():
    inst = instance(ONE_JOB)
    run, doc = run_doc(inst, {1: X_ON_S0, 3: X_ON_S1, 4: X_ON_S0})
    assert doc["restarts"] == [{"job_id": "x", "start": 3, "end": 4}, {"job_id": "x", "start": 4, "end": 6}]
    assert run.jobs[0].completion == 9
    assert validate(inst, doc) == []


def test_without_a_restart_time_the_document_has_no_restart_fields():
    _run, doc = run_doc(instance(ONE_JOB), {1: X_ON_S0, 3: X_ON_S1}, restart_seconds=0)
    assert "restarts" not in doc and "restart_seconds" not in doc
    assert doc["metrics"]["restarts"] == 0


def test_the_validator_finds_a_missing_restart_and_progress_during_one():
    inst = instance(ONE_JOB)
    _run, doc = run_doc(inst, {1: X_ON_S0, 3: (), 5: X_ON_S0})
    missing = copy.deepcopy(doc)
    missing["restarts"] = []
    assert any("restart periods [], the restart rule (2 slots) gives [(5, 7)]" in p for p in validate(inst, missing))
    early = copy.deepcopy(doc)
    early["progress"][1].update(start=6, end=9)
    assert any("progresses during its restart period [5, 7)" in p for p in validate(inst, early))


def test_the_validator_finds_a_pause_outside_any_restart():
    inst = instance(ONE_JOB)
    _run, doc = run_doc(inst, {1: X_ON_S0}, restart_seconds=0)
    doc["progress"] = [
        {"job_id": "x", "start": 1, "end": 3, "rate": 1.0},
        {"job_id": "x", "start": 4, "end": 6, "rate": 1.0},
    ]
    doc["jobs"][0]["work_done"] = 4.0
    assert any("progresses for 4 slots" in p for p in validate(inst, doc))


def test_the_cluster_field_sets_the_restart_time_and_the_run_overrides_it():
    spec = dict(TINY_CLUSTER, restart_seconds=RESTART)
    c = cluster_from_dict(spec)
    assert c.restart_seconds == RESTART
    inst = instance(ONE_JOB, cluster=spec)
    _run, doc = run_doc(inst, {1: X_ON_S0, 3: X_ON_S1}, restart_seconds=None)
    assert doc["restart_slots"] == 2
    _run, doc = run_doc(inst, {1: X_ON_S0, 3: X_ON_S1}, restart_seconds=0)
    assert "restarts" not in doc


def test_a_negative_cluster_restart_time_is_refused_with_its_field():
    from scheduling.errors import InputError

    with pytest.raises(InputError, match="restart_seconds"):
        cluster_from_dict(dict(TINY_CLUSTER, restart_seconds=-1))


def test_preempting_baselines_are_charged_and_pass_the_validator():
    inst = instance(RIGID_TRACE)
    free = api.run(inst, "tiresias", {"queue_thresholds": "60"}, restart_seconds=0)
    charged = api.run(inst, "tiresias", {"queue_thresholds": "60"}, restart_seconds=RESTART)
    assert free["metrics"]["preemptions"] > 0
    assert charged["metrics"]["restarts"] > 0
    assert charged["metrics"]["total_jct"] > free["metrics"]["total_jct"]


def test_simulate_takes_restart_seconds_on_the_command_line(tmp_path, capsys):
    cluster, trace, out = tmp_path / "c.json", tmp_path / "t.csv", tmp_path / "r.json"
    cluster.write_text(json.dumps(TINY_CLUSTER))
    trace.write_text(RIGID_TRACE)
    args = ["simulate", "--cluster", str(cluster), "--trace", str(trace), "--algorithm", "tiresias"]
    assert main([*args, "--param", "queue_thresholds=60", "--restart-seconds", "120", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["restart_seconds"] == 120 and doc["restarts"]
    with pytest.raises(SystemExit) as exc:
        main([*args, "--restart-seconds", "-5", "--out", str(out)])
    assert exc.value.code == 2
    assert "--restart-seconds" in capsys.readouterr().err


def test_the_gantt_draws_restart_periods_over_the_jobs_bars_with_their_own_hatch():
    from webapp.charts.placements import gantt

    _run, doc = run_doc(instance(ONE_JOB), {1: X_ON_S0, 3: (), 5: X_ON_S0})
    (trace,) = [d for d in gantt(doc)["data"] if d["name"] == "restarting (no progress)"]
    assert (trace["base"], trace["x"]) == ([5], [2])
    assert trace["marker"]["pattern"]["shape"] == "x"


def test_a_restart_time_between_slots_loses_exactly_that_time_and_is_reported_as_given():
    # 90 s on 60-s slots: a period of 2 slots, no progress in the first, half the rate in the second.
    inst = instance(ONE_JOB)
    run, doc = run_doc(inst, {1: X_ON_S0, 3: X_ON_S1}, restart_seconds=90)
    assert (doc["restart_seconds"], doc["restart_slots"]) == (90, 2)
    assert doc["restarts"] == [{"job_id": "x", "start": 3, "end": 5}]
    rates = [(g["start"], g["end"], g["rate"]) for g in doc["progress"]]
    assert rates == [(1, 3, 1.0), (4, 5, 0.5), (5, 8, 1.0)]  # 5 slots of work: 2 + 0.5 + 2.5 (of 3 slots)
    assert run.jobs[0].completion == 8
    assert doc["metrics"]["restart_gpu_slots"] == 2 * 1.5
    assert validate(inst, doc) == []


def test_a_restart_of_thirty_seconds_on_hour_slots_costs_thirty_seconds_not_an_hour():
    spec = dict(TINY_CLUSTER, slot_seconds=3600)
    inst = instance("job_id,arrival,gpus,duration\nx,1,2,18000\n", spec)  # 5 slots of work
    run, doc = run_doc(inst, {1: X_ON_S0, 3: X_ON_S1}, restart_seconds=30)
    assert doc["restarts"] == [{"job_id": "x", "start": 3, "end": 4}]
    (slot,) = [g for g in doc["progress"] if g["start"] == 3]
    assert slot["end"] == 4 and slot["rate"] == pytest.approx(1 - 30 / 3600)
    assert run.jobs[0].completion == 7  # 2 + (1 - 1/120) + 2 slots, and the 1/120 left in slot 6
    assert validate(inst, doc) == []


def test_the_validator_refuses_a_full_rate_slot_where_a_restart_costs_part_of_it():
    spec = dict(TINY_CLUSTER, slot_seconds=3600)
    inst = instance("job_id,arrival,gpus,duration\nx,1,2,18000\n", spec)
    _run, doc = run_doc(inst, {1: X_ON_S0, 3: X_ON_S1}, restart_seconds=30)
    tampered = copy.deepcopy(doc)
    for g in tampered["progress"]:
        if g["start"] == 3:
            g["rate"] = 1.0  # as if the restart cost nothing
    problems = validate(inst, tampered)
    assert any("restart period" in p for p in problems), problems


def test_the_dashboard_gantt_draws_restart_periods_from_its_index():
    from webapp.charts.placements import gantt, gantt_from_index
    from webapp.runstore import gantt_index

    _run, doc = run_doc(instance(ONE_JOB), {1: X_ON_S0, 3: (), 5: X_ON_S0})
    index = gantt_index(doc)
    assert index["restarts"]["start"] == [5] and index["restarts"]["end"] == [7]
    figure = gantt_from_index(index)
    (trace,) = [d for d in figure["data"] if d["name"] == "restarting (no progress)"]
    assert (trace["base"], trace["x"]) == ([5], [2])
    assert figure == gantt(doc, total=len(doc["placements"]))
