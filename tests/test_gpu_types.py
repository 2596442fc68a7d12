"""Heterogeneous GPU speed for rigid jobs: a server's gpu_model is its GPU type, the cluster's
gpu_speeds or a job's gpu_speed.<type> its speed factor there, a job spanning types runs at its
slowest. (The change-based path against the full walk on such clusters: tests/twins/paths.py.)"""

from __future__ import annotations

import json

import pytest

from scheduling import api
from scheduling.errors import InputError
from scheduling.gpu_types import factor_on
from scheduling.loaders import cluster_from_dict, parse_cluster, parse_trace
from scheduling.model import Instance
from scheduling.validator import validate


def cluster_spec(speeds: dict | None, types: tuple[str | None, ...] = ("V100", "T4"), **extra) -> dict:
    servers = []
    for i, t in enumerate(types):
        s: dict = {"id": f"s{i}", "capacity": {"gpu": 4}}
        if t is not None:
            s["gpu_model"] = t
        servers.append(s)
    spec: dict = {"slot_seconds": 60, "resources": ["gpu"], "servers": servers, **extra}
    if speeds is not None:
        spec["gpu_speeds"] = speeds
    return spec


def rigid(spec: dict, trace: str) -> Instance:
    cluster = cluster_from_dict(spec)
    return Instance(cluster, parse_trace(trace, cluster, "trace.csv"))


SPEEDS = {"*": {"V100": 1.0, "T4": 0.5}}


def completions(doc: dict) -> dict[str, int]:
    return {j["job_id"]: j["completion"] for j in doc["jobs"]}


def test_a_job_on_gpus_at_half_speed_takes_twice_its_recorded_duration():
    # a (4 GPUs) fills s0 (V100) first, b (4 GPUs) goes to s1 (T4): 4 slots of work at 0.5 take 8.
    inst = rigid(cluster_spec(SPEEDS), "job_id,arrival,gpus,duration\na,0,4,240\nb,0,4,240\n")
    doc = api.run(inst, "fifo")
    assert completions(doc) == {"a": 4, "b": 8}
    assert [(g["job_id"], g["rate"]) for g in doc["progress"]] == [("a", 1.0), ("b", 0.5)]
    assert validate(inst, doc) == []


def test_a_job_spanning_two_types_runs_at_the_slowest():
    inst = rigid(cluster_spec(SPEEDS), "job_id,arrival,gpus,duration\nx,0,8,240\n")
    doc = api.run(inst, "fifo")
    assert (doc["jobs"][0]["completion"], doc["progress"][0]["rate"]) == (8, 0.5)


def test_the_product_with_the_spread_slowdown():
    # 8 GPUs on a V100 and a T4 server, spread_slowdown 0.25: 1 / 1.25 x 0.5 = 0.4; 4 slots take 10.
    inst = rigid(cluster_spec(SPEEDS, network={"spread_slowdown": 0.25}), "job_id,arrival,gpus,duration\nx,0,8,240\n")
    doc = api.run(inst, "fifo")
    assert (doc["jobs"][0]["completion"], doc["progress"][0]["rate"]) == (10, 0.4)


def test_the_job_column_beats_the_model_row_which_beats_the_star_row():
    c = cluster_from_dict(cluster_spec({"*": {"T4": 0.5}, "bert": {"T4": 0.25}}))
    trace = "job_id,arrival,gpus,duration,model,gpu_speed.T4\na,0,1,60,,\nb,0,1,60,bert,\nc,0,1,60,bert,0.8\n"
    jobs = {j.job_id: j for j in parse_trace(trace, c)}
    assert {k: factor_on(c, j, "T4") for k, j in jobs.items()} == {"a": 0.5, "b": 0.25, "c": 0.8}
    assert factor_on(c, jobs["a"], "A10") == 1.0  # a type without a factor
    assert factor_on(c, jobs["a"], None) == 1.0  # a server without gpu_model


def test_a_job_on_servers_without_a_gpu_model_and_every_job_without_speeds_run_at_their_recorded_speed():
    trace = "job_id,arrival,gpus,duration\na,0,4,240\nb,0,4,240\n"
    assert completions(api.run(rigid(cluster_spec(SPEEDS, (None, None)), trace), "fifo")) == {"a": 4, "b": 4}
    assert completions(api.run(rigid(cluster_spec(None), trace), "fifo")) == {"a": 4, "b": 4}


def test_a_faster_type_finishes_sooner():
    inst = rigid(cluster_spec({"*": {"A10": 2.0}}, ("A10",)), "job_id,arrival,gpus,duration\nx,0,4,240\n")
    assert api.run(inst, "fifo")["jobs"][0]["completion"] == 2


def test_the_validator_refuses_a_job_reported_at_its_recorded_speed_on_slower_gpus():
    inst = rigid(cluster_spec(SPEEDS), "job_id,arrival,gpus,duration\na,0,4,240\nb,0,4,240\n")
    doc = api.run(inst, "fifo")
    b = next(g for g in doc["progress"] if g["job_id"] == "b")
    b.update(rate=1.0, end=4)
    next(j for j in doc["jobs"] if j["job_id"] == "b")["completion"] = 4
    for p in doc["placements"]:
        if p["job_id"] == "b":
            p["end"] = 4
    assert any("job 'b': rate 1.0 at slot 0, its placements give 0.5" in p for p in validate(inst, doc))


def test_bad_speed_factors_are_refused_naming_the_field_or_job():
    with pytest.raises(InputError, match=r"gpu_speeds\.\*\.T4"):
        parse_cluster(json.dumps(cluster_spec({"*": {"T4": 0}})), "cluster.json")
    with pytest.raises(InputError, match=r"gpu_speeds\.\*"):
        parse_cluster(json.dumps(cluster_spec({"*": 0.5})), "cluster.json")
    with pytest.raises(InputError, match=r"job 'x'.*gpu_speed\.T4"):
        rigid(cluster_spec(None), "job_id,arrival,gpus,duration,gpu_speed.T4\nx,0,1,60,-1\n")
