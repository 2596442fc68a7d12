"""The validator reads a result job by job from row positions (scheduling/validator_rows.py): the
same problems in the same order for a plain and a compact document, tampered or not, and a
compact document is checked without a list of rows (or a record) per job."""

from __future__ import annotations

import copy
import tracemalloc

import pytest

from scheduling import api, results
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance
from scheduling.validator import validate, worker_counts
from scheduling.validator_rows import ByJob, records_of
from tests.scenarios import RIGID_TRACE, instance


def compact(doc: dict) -> dict:
    """``doc`` with its jobs, placements and progress as compact rows (results.Rows) of the same values."""
    out = dict(doc)
    for key in ("jobs", "placements", "progress"):
        rows = doc[key]
        out[key] = results.Rows({k: [r[k] for r in rows] for k in rows[0]})
    return out


@pytest.fixture(scope="module")
def good() -> tuple[Instance, dict]:
    inst = instance(RIGID_TRACE)
    return inst, api.run(inst, "srtf", seed=1)


def overbook(d: dict) -> None:
    d["placements"].append(dict(d["placements"][0], job_id="r4", count=8, start=3, end=4))


def too_many_workers(d: dict) -> None:  # r3 (6 GPUs) and then r1 (4 GPUs) over their limits
    for p in d["placements"]:
        if p["job_id"] in ("r1", "r3"):
            p["count"] += 3
    d["placements"].sort(key=lambda p: p["job_id"] != "r3")  # r3's placements first


def late_and_early(d: dict) -> None:
    d["progress"][0]["rate"] *= 2
    d["jobs"][1]["completion"] = (d["jobs"][1]["completion"] or 0) + 5
    d["metrics"]["avg_jct"] = 1.0


def duplicate_row(d: dict) -> None:  # the last row of a job id counts, where its id first appears
    d["jobs"].append(dict(d["jobs"][0], work_done=0.0))


def unknown_job(d: dict) -> None:
    d["placements"].insert(0, dict(d["placements"][0], job_id="nobody"))
    d["progress"].insert(0, dict(d["progress"][0], job_id="nobody"))


@pytest.mark.parametrize("change", [None, overbook, too_many_workers, late_and_early, duplicate_row, unknown_job])
def test_a_plain_and_a_compact_document_give_the_same_problems(good, change) -> None:
    inst, doc = good
    plain = copy.deepcopy(doc)
    if change is not None:
        change(plain)
    found = validate(inst, plain, limit=1000)
    assert validate(inst, compact(plain), limit=1000) == found
    assert (found == []) == (change is None)


def test_worker_counts_come_in_the_order_of_each_jobs_first_placement(good) -> None:
    inst, doc = good
    plain = copy.deepcopy(doc)
    too_many_workers(plain)
    counted = worker_counts(inst, plain)
    assert [c.split(" slot")[0] for c in counted] == ["job 'r3'", "job 'r1'"]
    found = validate(inst, plain, limit=1000)
    assert [p for p in found if "more than its limit" in p] == counted


def test_by_job_gives_each_jobs_rows_in_document_order() -> None:
    rows = ["a0", "b1", "a2", "c3", "a4", "b5"]
    by = ByJob(3, len(rows))
    for x, name in enumerate(rows):
        by.add("abc".index(name[0]), x)
    by.done()
    assert [by.rows(j, rows.__getitem__) for j in range(3)] == [["a0", "a2", "a4"], ["b1", "b5"], ["c3"]]
    assert [by.first(j) for j in range(3)] == [0, 1, 3]
    assert ByJob(2, 0).rows(1, rows.__getitem__) == []


def test_compact_job_rows_read_as_the_records_they_were_written_from(good) -> None:
    _inst, doc = good
    views = records_of(compact(doc)["jobs"])
    assert views is not None and len(views) == len(doc["jobs"]) and records_of(doc["jobs"]) is None
    for view, row in zip(views, results.job_records(doc), strict=True):
        assert all(getattr(view, n) == getattr(row, n) for n in results.records_names())
    assert views[-1].job_id == doc["jobs"][-1]["job_id"]


def test_a_compact_document_is_checked_without_memory_per_job_beyond_its_positions() -> None:
    n = 20_000
    lines = ["job_id,arrival,gpus,duration"] + [f"j{i},{i // 4},{1 + i % 2},{60 * (1 + i % 7)}" for i in range(n)]
    cluster = cluster_from_dict(
        {"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "n", "count": 8, "capacity": {"gpu": 8}}]}
    )
    inst = Instance(cluster, parse_trace("\n".join(lines) + "\n", cluster, "trace.csv", "csv"))
    doc = api.run(inst, "fifo", compact=True)
    assert isinstance(doc["placements"], results.Rows)
    tracemalloc.start()
    try:
        assert validate(inst, doc) == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # A list of row objects per job for placements and progress, and a JobRecord per job for the
    # metrics, took about 1,100 bytes a job at its peak; with positions in arrays about 270 (most of it
    # the metrics' own lists at the end).
    assert peak / n < 400, f"{peak / n:.0f} bytes per job"
