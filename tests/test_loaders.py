"""Loaders: units converted once, and every bad input named precisely without half-loading."""

from __future__ import annotations

import json

import pytest

from scheduling.errors import InputError
from scheduling.loaders import load_cluster, load_trace, parse_cluster, parse_trace
from tests.scenarios import TINY_CLUSTER, instance


def cluster_text(**changes) -> str:
    doc = json.loads(json.dumps(TINY_CLUSTER))
    doc.update(changes)
    return json.dumps(doc)


def trace_error(text: str, fmt: str = "csv") -> str:
    cluster = parse_cluster(cluster_text())
    with pytest.raises(InputError) as exc:
        parse_trace(text, cluster, "t." + fmt, fmt)
    return str(exc.value)


def test_servers_with_a_count_expand_into_numbered_ids():
    cluster = parse_cluster(cluster_text())
    assert [s.id for s in cluster.servers] == ["s-0", "s-1"]


def test_seconds_become_slots_and_gbps_become_mb_per_slot():
    inst = instance()
    job = inst.job("a")
    assert job.batch_time_for("w1") == pytest.approx(0.1)  # 6 s of a 60 s slot
    assert inst.cluster.worker_type("w1").bandwidth == pytest.approx(1 * 125 * 60)


def test_a_rigid_duration_rounds_up_to_whole_slots():
    inst = instance("job_id,arrival,gpus,duration\nx,0,1,61\n")
    assert inst.job("x").duration == 2


def test_per_type_columns_and_json_objects_load_the_same():
    csv_inst = instance("job_id,arrival,batch_time.w1,batch_time.w2\nx,0,6,3\n")
    json_inst = instance('[{"job_id": "x", "arrival": 0, "batch_time": {"w1": 6, "w2": 3}}]', fmt="json")
    assert csv_inst.jobs == json_inst.jobs


def test_a_missing_column_is_named():
    msg = trace_error("job_id,weight\nx,1\n")
    assert "t.csv" in msg and "line 1" in msg and "'arrival'" in msg


def test_a_wrong_type_names_the_line_job_and_field():
    msg = trace_error("job_id,arrival\nx,0\ny,abc\n")
    assert "line 3" in msg and "'y'" in msg and "'arrival'" in msg and "not a number" in msg


def test_a_duplicate_job_id_names_both_lines():
    msg = trace_error("job_id,arrival\nj1,0\nj1,1\n")
    assert "'j1'" in msg and "line 3" in msg and "first on line 2" in msg


def test_an_unknown_worker_type_is_named():
    msg = trace_error("job_id,arrival,batch_time.zz\nx,0,5\n")
    assert "'zz'" in msg and "batch_time.zz" in msg


def test_a_job_that_fits_on_no_server_is_refused():
    msg = trace_error("job_id,arrival,gpus,duration\nbig,0,9,60\n")
    assert "'big'" in msg and "needs 9 GPUs" in msg


def test_an_empty_trace_is_refused():
    assert "no jobs" in trace_error("job_id,arrival\n")


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ([{"id": "a", "capacity": {"gpu": -1}}], "servers[0].capacity.gpu"),
        ([{"id": "a"}], "missing capacity"),
        ([{"id": "a", "capacity": {"tpu": 1}}], "unknown resource 'tpu'"),
        ([{"id": "a", "capacity": {"gpu": 1}}, {"id": "a", "capacity": {"gpu": 1}}], "duplicate server id 'a'"),
    ],
)
def test_bad_server_entries_are_named(servers, expected):
    with pytest.raises(InputError, match=r"cluster\.json") as exc:
        parse_cluster(cluster_text(servers=servers), "cluster.json")
    assert expected in str(exc.value)


def test_invalid_json_names_the_line():
    with pytest.raises(InputError, match=r"c\.json, line 2: invalid JSON"):
        parse_cluster('{"slot_seconds": 60,\n oops}', "c.json")


def test_empty_and_non_utf8_files_are_refused(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"job_id,arrival\nx\xff,0\n")
    cluster = parse_cluster(cluster_text())
    with pytest.raises(InputError, match=r"empty\.csv: file is empty"):
        load_trace(empty, cluster)
    with pytest.raises(InputError, match=r"bin.csv, line 2: not UTF-8"):
        load_trace(binary, cluster)


def test_a_50_mb_file_is_refused_before_reading(tmp_path):
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(50 * 1024 * 1024)
    with pytest.raises(InputError, match="larger than the 32 MiB limit"):
        load_cluster(big)


def test_a_job_stating_more_gpus_than_the_cluster_holds_is_refused():
    msg = trace_error("job_id,arrival,arch,gpus,batch_time\np,0,pipeline,9,5\n")
    assert "'p'" in msg and "needs 9 workers at once" in msg
