"""Per-job restart costs: a trace column and a cluster table keyed by (model, GPU count), the
constant restart_seconds kept for every other job.

Tiny hand-computed cases on the two-server tiny cluster (60-s slots, 4 GPUs per server). The
change-based paths against the full walks under such costs: tests/twins/paths.py (restart-costs).
"""

from __future__ import annotations

import copy
import json

import pytest

from scheduling import provenance
from scheduling.cli import main
from scheduling.errors import InputError
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.restart_costs import own_seconds
from scheduling.validator import validate
from tests.scenarios import TINY_CLUSTER, instance
from tests.test_restarts import X_ON_S0, X_ON_S1, run_doc

SUSPEND_AND_RESUME = {1: X_ON_S0, 3: (), 5: X_ON_S0}  # x: 2 slots of work, 2 suspended, resumed at 5


def test_a_job_with_its_own_restart_seconds_pays_them_instead_of_the_constant():
    # 180 s = 3 slots (not the constant's 2): restart [5, 8), then the 3 slots of work left.
    inst = instance("job_id,arrival,gpus,duration,restart_seconds\nx,1,2,300,180\n")
    run, doc = run_doc(inst, SUSPEND_AND_RESUME, restart_seconds=120)
    assert doc["restarts"] == [{"job_id": "x", "start": 5, "end": 8}]
    assert run.jobs[0].completion == 11
    assert doc["job_restart_slots"] == {"x": 3}
    assert validate(inst, doc) == []


def test_a_job_without_its_own_cost_pays_the_constant_beside_one_that_has_it():
    trace = "job_id,arrival,gpus,duration,restart_seconds\nx,1,2,300,\ny,1,2,300,0\n"
    inst = instance(trace)
    y_on_s1 = (("y", "s-1"),)
    from scheduling.speed import Allocation

    y = tuple(Allocation(j, s, "worker", "gpu", 2) for j, s in y_on_s1)
    plan = {1: X_ON_S0 + y, 3: (), 5: X_ON_S0 + y}
    run, doc = run_doc(inst, plan, restart_seconds=120)
    # x pays the constant 2 slots; y's own cost is 0: it resumes at once.
    assert doc["restarts"] == [{"job_id": "x", "start": 5, "end": 7}]
    assert {j.job_id: j.completion for j in run.jobs} == {"x": 10, "y": 8}
    assert doc["job_restart_slots"] == {"y": 0}
    assert validate(inst, doc) == []


TABLE = [
    {"model": "resnet", "gpus": 2, "seconds": 60},
    {"model": "resnet", "seconds": 240},
    {"gpus": 2, "seconds": 180},
]


def test_the_cluster_table_picks_model_and_gpus_then_model_then_gpus_and_the_column_wins():
    c = cluster_from_dict(dict(TINY_CLUSTER, restart_costs=TABLE))
    trace = (
        "job_id,arrival,gpus,duration,model,restart_seconds\n"
        "a,0,2,60,resnet,\nb,0,4,60,resnet,\nc,0,2,60,bert,\nd,0,1,60,bert,\ne,0,2,60,resnet,30\n"
    )
    jobs = {j.job_id: j for j in parse_trace(trace, c)}
    assert {k: own_seconds(c, j) for k, j in jobs.items()} == {"a": 60, "b": 240, "c": 180, "d": None, "e": 30}


def test_a_cluster_table_entry_is_charged_with_a_zero_constant():
    spec = dict(TINY_CLUSTER, restart_costs=[{"model": "resnet", "seconds": 240}])
    inst = instance("job_id,arrival,gpus,duration,model\nx,1,2,300,resnet\n", cluster=spec)
    run, doc = run_doc(inst, {1: X_ON_S0, 3: X_ON_S1}, restart_seconds=0)
    # a move at 3 costs 240 s = 4 slots: [3, 7), then the 3 slots left: done at 10.
    assert doc["restarts"] == [{"job_id": "x", "start": 3, "end": 7}]
    assert (doc["restart_slots"], doc["job_restart_slots"]) == (0, {"x": 4})
    assert run.jobs[0].completion == 10
    assert validate(inst, doc) == []


def test_the_validator_refuses_a_result_that_charges_the_constant_to_a_job_with_its_own_cost():
    inst = instance("job_id,arrival,gpus,duration,restart_seconds\nx,1,2,300,180\n")
    _run, doc = run_doc(inst, SUSPEND_AND_RESUME, restart_seconds=120)
    constant = copy.deepcopy(doc)  # the schedule the constant 2 slots would give
    constant["restarts"] = [{"job_id": "x", "start": 5, "end": 7}]
    constant["progress"][1].update(start=7, end=10)
    constant["jobs"][0]["completion"] = 10
    for p in constant["placements"]:
        p["end"] = min(p["end"], 10)
    problems = validate(inst, constant)
    assert any("the restart rule (3 slots) gives [(5, 8)]" in p for p in problems)
    dropped = copy.deepcopy(doc)
    del dropped["job_restart_slots"]
    assert any("job_restart_slots: none reported" in p for p in validate(inst, dropped))


def test_bad_restart_costs_are_refused_naming_the_job_or_row_and_field():
    with pytest.raises(InputError, match=r"job 'x'.*restart_seconds"):
        instance("job_id,arrival,gpus,duration,restart_seconds\nx,1,2,300,-5\n")
    with pytest.raises(InputError, match=r"restart_costs\[1\]"):
        cluster_from_dict(
            dict(TINY_CLUSTER, restart_costs=[{"model": "m", "seconds": 1}, {"model": "m", "seconds": 2}])
        )
    with pytest.raises(InputError, match=r"restart_costs\[0\]\.seconds"):
        cluster_from_dict(dict(TINY_CLUSTER, restart_costs=[{"model": "m"}]))
    with pytest.raises(InputError, match=r"unknown key 'size'"):
        cluster_from_dict(dict(TINY_CLUSTER, restart_costs=[{"model": "m", "seconds": 1, "size": 3}]))


def test_the_input_digests_change_with_the_restart_costs_and_not_without_them():
    plain = instance("job_id,arrival,gpus,duration\nx,1,2,300\n")
    blank = instance("job_id,arrival,gpus,duration,restart_seconds\nx,1,2,300,\n")
    own = instance("job_id,arrival,gpus,duration,restart_seconds\nx,1,2,300,60\n")
    table = instance(
        "job_id,arrival,gpus,duration\nx,1,2,300\n",
        cluster=dict(TINY_CLUSTER, restart_costs=[{"gpus": 2, "seconds": 5}]),
    )
    assert provenance.inputs(plain) == provenance.inputs(blank)
    assert provenance.inputs(own)["trace_sha256"] != provenance.inputs(plain)["trace_sha256"]
    assert provenance.inputs(table)["cluster_sha256"] != provenance.inputs(plain)["cluster_sha256"]


def test_simulate_reads_a_trace_with_per_job_restart_costs(tmp_path):
    cluster, trace, out = tmp_path / "c.json", tmp_path / "t.csv", tmp_path / "r.json"
    cluster.write_text(json.dumps(dict(TINY_CLUSTER, restart_costs=[{"gpus": 8, "seconds": 600}])))
    trace.write_text("job_id,arrival,gpus,duration,restart_seconds\nr1,0,4,600,\nr2,0,8,300,\nr3,2,6,120,60\n")
    args = ["simulate", "--cluster", str(cluster), "--trace", str(trace), "--algorithm", "tiresias"]
    assert main([*args, "--param", "queue_thresholds=60", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["job_restart_slots"] == {"r2": 10, "r3": 1}
    assert main(["check", "--cluster", str(cluster), "--trace", str(trace), "--result", str(out)]) == 0


def test_a_checkpoint_size_gives_the_restart_cost_at_the_clusters_reload_rate():
    # 18 GB at 0.1 GB/s = 180 s = 3 slots; the job's own restart_seconds still comes first, and
    # the size comes before the table.
    spec = dict(TINY_CLUSTER, checkpoint_gbps=0.1, restart_costs=[{"gpus": 2, "seconds": 600}])
    c = cluster_from_dict(spec)
    trace = "job_id,arrival,gpus,duration,checkpoint_gb,restart_seconds\na,0,2,60,18,\nb,0,2,60,18,30\nc,0,2,60,,\n"
    jobs = {j.job_id: j for j in parse_trace(trace, c)}
    assert {k: own_seconds(c, j) for k, j in jobs.items()} == {"a": 180, "b": 30, "c": 600}
    inst = instance(
        "job_id,arrival,gpus,duration,checkpoint_gb\nx,1,2,300,18\n", cluster=dict(TINY_CLUSTER, checkpoint_gbps=0.1)
    )
    run, doc = run_doc(inst, SUSPEND_AND_RESUME, restart_seconds=0)
    assert (doc["restarts"], run.jobs[0].completion) == ([{"job_id": "x", "start": 5, "end": 8}], 11)
    assert validate(inst, doc) == []


def test_a_checkpoint_size_without_a_reload_rate_is_informational():
    inst = instance("job_id,arrival,gpus,duration,checkpoint_gb\nx,1,2,300,18\n")
    _run, doc = run_doc(inst, SUSPEND_AND_RESUME, restart_seconds=0)
    assert "restarts" not in doc
