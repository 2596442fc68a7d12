"""Replaying the trace's recorded outcomes (scheduling/status_replay.py; docs/formats.md, "Status replay").

One 2-GPU server, 60-s slots, fifo. Job a (2 GPUs, 3 slots, Pass) runs [0, 3); b (2 GPUs, 2 slots,
Failed) waits for both GPUs and runs [3, 5); c (1 GPU, 1 slot, Killed, arrives at 1) waits behind
b (fifo keeps its order) and runs [5, 6). With replay: a completes at 3, b ends failed at 5, c ends
killed at 6; completed 1, avg_jct 3, makespan 3; censored JCTs 3 + 5 + 5 = 13.
"""

from __future__ import annotations

import copy

import pytest

from scheduling import api, provenance
from scheduling.errors import InputError
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance
from scheduling.validator import validate

TRACE = "job_id,arrival,gpus,duration,status\na,0,2,180,Pass\nb,0,2,120,Failed\nc,1,1,60,KILLED\n"


def inst(replay: bool | None, trace: str = TRACE, name: str = "trace.csv") -> Instance:
    spec: dict = {"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "s0", "capacity": {"gpu": 2}}]}
    if replay is not None:
        spec["replay_status"] = replay
    c = cluster_from_dict(spec)
    return Instance(c, parse_trace(trace, c, name, "json" if name.endswith(".json") else "csv"))


def rows(doc: dict) -> dict[str, tuple]:
    return {j["job_id"]: (j["completion"], j.get("outcome"), j.get("ended")) for j in doc["jobs"]}


def test_recorded_failures_end_failed_or_killed_and_count_apart():
    i = inst(True)
    doc = api.run(i, "fifo")
    assert rows(doc) == {"a": (3, None, None), "b": (None, "failed", 5), "c": (None, "killed", 6)}
    assert doc["status_replay"] is True
    m = doc["metrics"]
    assert (m["completed"], m["failed"], m["killed"]) == (1, 1, 1)
    assert (m["avg_jct"], m["total_jct"], m["makespan"]) == (3.0, 3.0, 3)
    assert (m["total_jct_censored"], m["makespan_censored"]) == (13.0, 6)
    assert [(p["job_id"], p["start"], p["end"]) for p in doc["placements"]] == [("a", 0, 3), ("b", 3, 5), ("c", 5, 6)]
    assert all(j["utility"] == 0 for j in doc["jobs"] if j.get("outcome"))
    assert validate(i, doc) == []


@pytest.mark.parametrize("replay", [None, False])
def test_off_by_default_the_same_schedule_completes_every_job(replay):
    i = inst(replay)
    doc = api.run(i, "fifo")
    assert rows(doc) == {"a": (3, None, None), "b": (5, None, None), "c": (6, None, None)}
    assert "status_replay" not in doc and "failed" not in doc["metrics"]
    assert doc["metrics"]["completed"] == 3
    # the statuses are read only by a replay: without one the inputs' digests are those of a trace
    # without the status column
    plain = inst(replay, "\n".join(line.rsplit(",", 1)[0] for line in TRACE.splitlines()) + "\n")
    assert provenance.inputs(i) == provenance.inputs(plain)
    assert validate(i, doc) == []


def test_the_schedule_is_the_same_with_and_without_replay():
    on, off = api.run(inst(True), "srtf"), api.run(inst(False), "srtf")
    assert on["placements"] == off["placements"] and on["progress"] == off["progress"]
    assert provenance.inputs(inst(True)) != provenance.inputs(inst(False))


def test_json_trace_and_statuses_that_are_not_failures():
    trace = (
        '[{"job_id": "a", "arrival": 0, "gpus": 1, "duration": 60, "status": "Succeeded"},'
        ' {"job_id": "b", "arrival": 0, "gpus": 1, "duration": 60, "status": "failed"},'
        ' {"job_id": "c", "arrival": 0, "gpus": 1, "duration": 60, "status": "Running"}]'
    )
    i = inst(True, trace, "trace.json")
    doc = api.run(i, "fifo")
    assert rows(doc) == {"a": (1, None, None), "b": (None, "failed", 1), "c": (2, None, None)}
    assert validate(i, doc) == []


def test_a_recorded_failure_unfinished_at_the_horizon_is_unfinished():
    i = inst(True)
    doc = api.run(i, "fifo", horizon=4)
    assert rows(doc)["b"] == (None, None, None)  # ran [3, 4) of its 2 slots
    assert doc["metrics"]["failed"] == 0
    assert validate(i, doc) == []


def tampered(doc: dict, job: str, **changes) -> dict:
    out = copy.deepcopy(doc)
    row = next(j for j in out["jobs"] if j["job_id"] == job)
    for k, v in changes.items():
        if v is None:
            row.pop(k, None)
        else:
            row[k] = v
    return out


def test_the_validator_refuses_a_tampered_replay():
    i = inst(True)
    doc = api.run(i, "fifo")
    cases = [
        (tampered(doc, "b", completion=5, outcome=None, ended=None), "the trace records it as failed"),
        (tampered(doc, "b", outcome="killed"), "the trace's status gives 'failed'"),
        (tampered(doc, "a", outcome="failed", ended=3, completion=None), "the trace's status gives None"),
        (tampered(doc, "b", ended=4), "completion 4 but its last progress ends at 5"),
        (tampered(doc, "b", ended=None), "without the slot it ended at"),
        (tampered(doc, "c", utility=1.0), "earns none"),
        ({**doc, "status_replay": False}, "status_replay is False"),
    ]
    for bad, expected in cases:
        problems = validate(i, bad)
        assert any(expected in p for p in problems), (expected, problems)
    # metrics recomputed: a failed job's count moved into completed is refused
    bad = copy.deepcopy(doc)
    bad["metrics"]["failed"] = 0
    assert any("metric failed" in p for p in validate(i, bad))
    # a replayed result checked against the same inputs without replay_status
    assert any("does not set replay_status" in p for p in validate(inst(False), doc))


def test_replay_status_must_be_a_boolean():
    with pytest.raises(InputError, match="replay_status"):
        inst("yes")  # type: ignore[arg-type]


def test_an_imported_alibaba_pod_list_replays_its_failed_pods(tmp_path):
    """The import carries pod_phase as the status; with replay_status its Failed pods end failed
    (tests/fixtures/openb_pods_head.csv: 2 Failed, 1 Succeeded, 37 Running, none Pending)."""
    from pathlib import Path

    from scheduling import importers
    from scheduling.loaders import load_trace

    raw = Path(__file__).parent / "fixtures" / "openb_pods_head.csv"
    out = tmp_path / "pods.csv"
    importers.run("generic-gpu", raw, out, mapping={"duration": "deletion_time-creation_time"}, slot_seconds=3600)
    spec = {
        "slot_seconds": 3600,
        "resources": ["gpu"],
        "servers": [{"id": "n", "capacity": {"gpu": 8}, "count": 8}],
        "replay_status": True,
    }
    c = cluster_from_dict(spec)
    i = Instance(c, load_trace(out, c))
    failed = {j.job_id for j in i.jobs if j.outcome == "failed"}
    assert len(failed) == 2 and all(j.outcome is None for j in i.jobs if j.job_id not in failed)
    doc = api.run(i, "fifo")
    assert {j["job_id"] for j in doc["jobs"] if j.get("outcome") == "failed"} == failed
    assert (doc["metrics"]["failed"], doc["metrics"]["completed"]) == (2, len(i.jobs) - 2)
    assert validate(i, doc) == []
