"""A rigid job spread over servers runs slower when the cluster declares network.spread_slowdown.

The change-based path against the full walk under a slowdown: tests/twins/paths.py."""

from __future__ import annotations

import json

import pytest

from scheduling import api
from scheduling.errors import InputError
from scheduling.loaders import cluster_from_dict, parse_cluster, parse_trace
from scheduling.model import Instance
from scheduling.validator import validate


def cluster_spec(slowdown: float | None, sizes: tuple[int, ...] = (4, 4)) -> dict:
    spec: dict = {
        "slot_seconds": 60,
        "resources": ["gpu"],
        "servers": [{"id": f"s{i}", "capacity": {"gpu": g}} for i, g in enumerate(sizes)],
    }
    if slowdown is not None:
        spec["network"] = {"spread_slowdown": slowdown}
    return spec


def rigid(spec: dict, rows: str) -> Instance:
    """Rows are job_id,arrival,gpus,duration in slots."""
    cluster = cluster_from_dict(spec)
    lines = ["job_id,arrival,gpus,duration"]
    for row in rows.split():
        job_id, arrival, gpus, slots = row.split(",")
        lines.append(f"{job_id},{arrival},{gpus},{60 * int(slots)}")
    return Instance(cluster, parse_trace("\n".join(lines) + "\n", cluster, "trace.csv", "csv"))


def test_an_eight_gpu_job_on_two_servers_takes_a_quarter_longer_at_slowdown_one_quarter():
    # 8 GPUs over two 4-GPU servers: rate 1 / (1 + 0.25 x 1) = 0.8, so 4 slots of work take 5.
    doc = api.run(rigid(cluster_spec(0.25), "x,0,8,4"), "fifo")
    assert doc["jobs"][0]["completion"] == 5
    assert [g["rate"] for g in doc["progress"]] == [0.8]


def test_a_job_on_one_server_and_every_job_without_the_key_run_at_their_recorded_speed():
    assert api.run(rigid(cluster_spec(0.25), "x,0,4,4"), "fifo")["jobs"][0]["completion"] == 4
    assert api.run(rigid(cluster_spec(None), "x,0,8,4"), "fifo")["jobs"][0]["completion"] == 4


def test_consolidation_can_win_once_spreading_costs_speed():
    # a, d on s0 and e on s1 (2 GPUs each, two 4-GPU servers); d ends at slot 1, when b (4 GPUs, 12
    # slots) arrives: pool splits b 2 + 2 at once, at rate 1 / (1 + 1) = 0.5, done at 1 + 24;
    # consolidated waits for e to free s1 at slot 5, done at 5 + 12.
    trace = "a,0,2,30 d,0,2,1 e,0,2,5 b,1,4,12"
    pooled = api.run(rigid(cluster_spec(1.0), trace), "fifo")
    consolidated = api.run(rigid(cluster_spec(1.0), trace), "fifo", {"placement": "consolidated"})
    assert {j["job_id"]: j["completion"] for j in pooled["jobs"]}["b"] == 25
    assert {j["job_id"]: j["completion"] for j in consolidated["jobs"]}["b"] == 17


def test_the_validator_refuses_a_spread_job_reported_at_full_speed():
    inst = rigid(cluster_spec(0.25), "x,0,8,4")
    doc = api.run(inst, "fifo")
    doc["progress"][0]["rate"] = 1.0
    doc["progress"][0]["end"] = 4
    doc["jobs"][0]["completion"] = 4
    assert any("rate 1.0" in p for p in validate(inst, doc))


def test_a_negative_slowdown_is_refused_naming_the_field():
    with pytest.raises(InputError, match=r"network\.spread_slowdown"):
        parse_cluster(json.dumps(cluster_spec(-0.1)), "cluster.json")
