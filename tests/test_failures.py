"""Server failures replayed from the cluster's failure trace: jobs on a failed server are killed,
lose their work since their last checkpoint and pay the restart cost when they run again.

Two 4-GPU servers, 60-s slots; job x needs 4 GPUs for 10 slots and fifo puts it on s0 at slot 0.
"""

from __future__ import annotations

import copy
import random
from itertools import pairwise

import pytest

from scheduling import api
from scheduling.errors import InputError
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance
from scheduling.validator import validate


def spec(failures: list[dict] | None, checkpoint_seconds: float | None = None, servers: int = 2) -> dict:
    out: dict = {
        "slot_seconds": 60,
        "resources": ["gpu"],
        "servers": [{"id": f"s{i}", "capacity": {"gpu": 4}} for i in range(servers)],
        "restart_seconds": 60,
    }
    if failures is not None:
        out["failures"] = failures
    if checkpoint_seconds is not None:
        out["checkpoint_seconds"] = checkpoint_seconds
    return out


def inst(cluster: dict, trace: str = "job_id,arrival,gpus,duration\nx,0,4,600\n") -> Instance:
    c = cluster_from_dict(cluster)
    return Instance(c, parse_trace(trace, c, "trace.csv"))


S0_DOWN = [{"server": "s0", "start": 4, "end": 6}]


def test_a_killed_job_loses_the_work_since_its_last_checkpoint_and_restarts_elsewhere():
    # Checkpoints every 3 slots: killed at 4, x keeps 3 and loses 1; fifo moves it to s1 at 4, it
    # restarts for 1 slot and makes the 7 slots left from 5: done at 12.
    i = inst(spec(S0_DOWN, checkpoint_seconds=180))
    doc = api.run(i, "fifo")
    assert doc["failure_kills"] == [{"job_id": "x", "server": "s0", "slot": 4, "lost_work": 1.0}]
    assert [(p["server"], p["start"], p["end"]) for p in doc["placements"]] == [("s0", 0, 4), ("s1", 4, 12)]
    assert [(g["start"], g["end"]) for g in doc["progress"]] == [(0, 4), (5, 12)]
    assert doc["restarts"] == [{"job_id": "x", "start": 4, "end": 5}]
    assert (doc["jobs"][0]["completion"], doc["jobs"][0]["work_done"], doc["jobs"][0]["preemptions"]) == (12, 10.0, 0)
    assert (doc["metrics"]["failure_kills"], doc["metrics"]["lost_work"]) == (1, 1.0)
    assert validate(i, doc) == []


def test_without_checkpoints_a_killed_job_loses_all_its_work():
    doc = api.run(inst(spec(S0_DOWN)), "fifo")
    assert doc["failure_kills"][0]["lost_work"] == 4.0
    assert doc["jobs"][0]["completion"] == 15  # restart [4, 5), then all 10 slots


def test_a_job_waits_for_the_repair_when_no_other_server_is_free():
    # y holds s1 for 20 slots: x waits until s0 is repaired at 6, restarts [6, 7), makes 7 slots.
    trace = "job_id,arrival,gpus,duration\nx,0,4,600\ny,0,4,1200\n"
    i = inst(spec(S0_DOWN, checkpoint_seconds=180), trace)
    doc = api.run(i, "fifo")
    x = [(p["server"], p["start"], p["end"]) for p in doc["placements"] if p["job_id"] == "x"]
    assert x == [("s0", 0, 4), ("s0", 6, 14)]
    assert validate(i, doc) == []


def test_a_failure_of_an_idle_server_changes_nothing_but_the_document():
    i = inst(spec([{"server": "s1", "start": 2, "end": 9}]))
    doc = api.run(i, "fifo")
    assert (doc["jobs"][0]["completion"], doc["failure_kills"]) == (10, [])
    assert doc["failures"] == [{"server": "s1", "start": 2, "end": 9}]
    assert "failures" not in api.run(inst(spec(None)), "fifo")


def test_the_validator_refuses_a_result_that_ignores_the_failure_or_the_checkpoint_loss():
    i = inst(spec(S0_DOWN, checkpoint_seconds=180))
    doc = api.run(i, "fifo")
    no_loss = copy.deepcopy(doc)
    no_loss["failure_kills"][0]["lost_work"] = 0.0
    no_loss["metrics"]["lost_work"] = 0.0
    assert any("failure_kills: 1 reported, the placements and checkpoints give" in p for p in validate(i, no_loss))
    untouched = api.run(inst(spec(None)), "fifo")  # the schedule without the failure
    untouched.update(failures=doc["failures"], failure_kills=[])
    untouched["metrics"].update(failure_kills=0, lost_work=0.0)
    problems = validate(i, untouched)
    assert any("the server is down over [4, 6)" in p for p in problems)
    dropped = copy.deepcopy(doc)
    del dropped["failure_kills"]
    assert any("failure_kills: 0 reported" in p for p in validate(i, dropped))
    short = copy.deepcopy(doc)  # a job reported done with the lost slot of work missing
    short["progress"][1]["end"] = 11
    short["jobs"][0]["completion"] = 11
    assert any("with 9.0 of 10.0 work done" in p for p in validate(i, short))


def test_the_gantt_shades_the_failed_servers_row_while_it_is_down():
    from webapp.charts.placements import gantt

    doc = api.run(inst(spec(S0_DOWN, checkpoint_seconds=180)), "fifo")
    (trace,) = [d for d in gantt(doc)["data"] if d["name"] == "server down (failure)"]
    assert (trace["base"], trace["x"], trace["customdata"][0][0]) == ([4], [2], "s0")


def test_an_algorithm_that_plans_on_its_own_ledger_is_refused_under_failures():
    from scheduling.errors import UnsupportedInstance

    with pytest.raises(UnsupportedInstance, match="spjf does not run under server failures"):
        api.run(inst(spec(S0_DOWN)), "spjf")


def test_bad_failure_traces_are_refused_naming_the_row_and_field():
    with pytest.raises(InputError, match=r"failures\[0\]\.server.*unknown server 'sx'"):
        cluster_from_dict(spec([{"server": "sx", "start": 1, "end": 2}]))
    with pytest.raises(InputError, match=r"failures\[0\]\.end"):
        cluster_from_dict(spec([{"server": "s0", "start": 3, "end": 3}]))
    with pytest.raises(InputError, match="while down over"):
        cluster_from_dict(spec([{"server": "s0", "start": 1, "end": 5}, {"server": "s0", "start": 4, "end": 6}]))
    with pytest.raises(InputError, match="checkpoint_seconds"):
        cluster_from_dict(spec(None, checkpoint_seconds=-1))


@pytest.mark.parametrize(
    ("algorithm", "params"),
    [("fifo", {}), ("fifo", {"backfill": "true"}), ("srtf", {}), ("tiresias", {"queue_thresholds": "600,3000"})],
)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_failures_give_valid_results_for_the_rigid_baselines(algorithm, params, seed):
    rng = random.Random(seed)
    fails, rows, t = [], ["job_id,arrival,gpus,duration"], 0
    for s in range(4):
        start = rng.randrange(0, 40)
        fails.append({"server": f"s{s}", "start": start, "end": start + rng.randint(1, 10)})
    for k in range(30):
        t += rng.randrange(0, 3)
        rows.append(f"j{k},{t},{rng.randint(1, 8)},{60 * rng.randint(1, 20)}")
    i = inst(spec(fails, checkpoint_seconds=120, servers=4), "\n".join(rows) + "\n")
    doc = api.run(i, algorithm, params)
    assert validate(i, doc) == []
    assert doc["metrics"]["completed"] == 30


def model_spec(model: dict, types: tuple[str | None, ...] = ("T4", "V100"), slot: float = 3600) -> dict:
    servers = [{"id": f"s{i}", "capacity": {"gpu": 4}, **({"gpu_model": t} if t else {})} for i, t in enumerate(types)]
    return {"slot_seconds": slot, "resources": ["gpu"], "servers": servers, "failure_model": model}


def test_a_failure_model_draws_the_same_failures_for_the_same_seed_and_others_for_another():
    model = {"seed": 7, "until": 2000, "servers": [{"mtbf_hours": 50, "repair_hours": 3}]}
    a = cluster_from_dict(model_spec(model)).failures
    assert a == cluster_from_dict(model_spec(model)).failures and len(a) > 20
    assert a != cluster_from_dict(model_spec(dict(model, seed=8))).failures


def test_drawn_up_times_have_the_mtbf_as_mean_and_every_repair_takes_the_repair_time():
    # One-hour slots: an up-time is ceil(X) slots for X exponential of mean 10, whose mean is
    # 1 / (1 - exp(-1/10)) = 10.508 slots; every repair is 2 slots.
    model = {"seed": 1, "until": 300_000, "servers": [{"mtbf_hours": 10, "repair_hours": 2}]}
    fails = cluster_from_dict(model_spec(model, (None,))).failures
    assert {f.end - f.start for f in fails} == {2}
    ups = [b.start - a.end for a, b in pairwise(fails)]
    assert abs(sum(ups) / len(ups) - 10.508) < 0.3
    assert min(ups) >= 1


def test_the_failure_model_goes_by_gpu_model_and_a_row_without_one_serves_the_other_servers():
    model = {"until": 5000, "servers": [{"gpu_model": "T4", "mtbf_hours": 20, "repair_hours": 1}]}
    fails = cluster_from_dict(model_spec(model)).failures
    assert {f.server for f in fails} == {"s0"}  # the V100 server has no row: it never fails
    model["servers"].append({"mtbf_hours": 2000, "repair_hours": 1})
    fails = cluster_from_dict(model_spec(model)).failures
    t4 = sum(f.server == "s0" for f in fails)
    assert t4 > 10 * max(1, sum(f.server == "s1" for f in fails))


def test_a_run_under_drawn_failures_is_valid_and_loses_work():
    model = {"seed": 3, "until": 400, "servers": [{"mtbf_hours": 1, "repair_hours": 0.1}]}
    c = dict(model_spec(model, (None, None, None), slot=60), checkpoint_seconds=600, restart_seconds=120)
    rows = ["job_id,arrival,gpus,duration"] + [f"j{k},{2 * k},{1 + k % 4},{60 * (5 + 7 * k % 30)}" for k in range(30)]
    i = inst(c, "\n".join(rows) + "\n")
    doc = api.run(i, "srtf")
    assert validate(i, doc) == []
    assert doc["metrics"]["failure_kills"] > 0 and doc["metrics"]["lost_work"] > 0


def test_a_bad_failure_model_is_refused_naming_the_field():
    with pytest.raises(InputError, match=r"failure_model\.until"):
        cluster_from_dict(model_spec({"servers": [{"mtbf_hours": 1, "repair_hours": 1}]}))
    with pytest.raises(InputError, match=r"failure_model\.servers\[0\]\.mtbf_hours"):
        cluster_from_dict(model_spec({"until": 10, "servers": [{"mtbf_hours": 0, "repair_hours": 1}]}))
