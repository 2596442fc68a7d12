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


def test_a_300_mb_file_is_refused_before_reading(tmp_path):
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(300 * 1024 * 1024)  # sparse: a read would find NUL bytes, not the size
    with pytest.raises(InputError, match="larger than the 256 MiB limit"):
        load_cluster(big)


def test_a_job_stating_more_gpus_than_the_cluster_holds_is_refused():
    msg = trace_error("job_id,arrival,arch,gpus,batch_time\np,0,pipeline,9,5\n")
    assert "'p'" in msg and "needs 9 workers at once" in msg


# ---------------------------------------------------------------------------------------------
# Magnitude bounds (docs/formats.md, "Bounds"): absurd values are refused on load, named, instead
# of crashing or exhausting an algorithm later.


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("x,1e18,1,1,1,6,1", "line 2, job 'x', field 'arrival': '1e18' must be <= 1e+09"),
        ("x,1e300,1,1,1,6,1", "field 'arrival': '1e300' must be <= 1e+09"),
        ("x,0,1e18,1,1,6,1", "field 'epochs': '1e18' must be <= 1e+12"),
        ("x,0,1,2000000,1,6,1", "field 'chunks': '2000000' must be <= 1e+06"),
        ("x,0,1,1,1e13,6,1", "field 'minibatches': '1e13' must be <= 1e+12"),
        ("x,0,1000000,1000,10000,6,1", "field 'epochs': epochs x chunks x minibatches = 1e+13 mini-batches"),
        ("x,0,1,1,1,1e-300,1", "field 'batch_time': '1e-300' must be >= 1e-06"),
        ("x,0,1,1,1,1e8,1", "field 'batch_time': '1e8' must be <= 1e+07"),
        ("x,0,1,1,1,6,1e308", "field 'weight': '1e308' must be <= 1e+12"),
    ],
)
def test_values_beyond_the_bounds_are_named(row, expected):
    assert expected in trace_error(f"job_id,arrival,epochs,chunks,minibatches,batch_time,weight\n{row}\n")


@pytest.mark.parametrize(
    ("job", "expected"),
    [
        ({"work": 1e300}, "job 'x', field 'work': 1e+300 must be <= 1e+12"),
        ({"gpus": 1, "duration": 1e12}, "field 'duration': 1000000000000.0 s is more than 1e+09 slots of 60 s"),
        ({"iterations": 10**13}, "field 'iterations': 10000000000000 must be <= 1e+12"),
        ({"upload_delay": {"*": 10**10}}, "field 'upload_delay.*': 10000000000 must be <= 1e+09"),
        ({"stages": [{"replicas": 10**7}]}, "field 'stages[0].replicas': 10000000 must be <= 1e+06"),
    ],
)
def test_json_values_beyond_the_bounds_are_named(job, expected):
    assert expected in trace_error(json.dumps([{"job_id": "x", "arrival": 0, **job}]), "json")


def test_values_at_the_bounds_load():
    trace = "job_id,arrival,epochs,chunks,minibatches,batch_time,weight\nx,1000000000,1000000,1000,1000,0.000001,1e12\n"
    (job,) = instance(trace).jobs
    assert job.arrival == 10**9 and job.work_required == 10**12 and job.weight == 1e12


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"slot_seconds": 1e-300}, "field 'slot_seconds': 1e-300 must be >= 0.001"),
        ({"slot_seconds": 1e300}, "field 'slot_seconds': 1e+300 must be <= 1e+07"),
        ({"horizon": 10**18}, "field 'horizon': 1000000000000000000 must be <= 1e+09"),
        ({"servers": [{"id": "a", "capacity": {"gpu": 1e300}}]}, "field 'servers[0].capacity.gpu': 1e+300 must be"),
        ({"servers": [{"id": "a", "count": 10**7, "capacity": {"gpu": 1}}]}, "'servers[0].count': 10000000 must be"),
        (
            {"servers": [{"id": f"a{i}", "count": 60_000, "capacity": {"gpu": 1}} for i in range(2)]},
            "field 'servers[1].count': 120,000 servers so far, more than the 100,000 accepted",
        ),
    ],
)
def test_cluster_values_beyond_the_bounds_are_named(changes, expected):
    with pytest.raises(InputError) as exc:
        parse_cluster(cluster_text(**changes), "c.json")
    assert str(exc.value).startswith("c.json, ") and expected in str(exc.value)


# ---------------------------------------------------------------------------------------------
# JSON that json.loads or float() cannot take, and NUL characters


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[" * 100_000 + "]" * 100_000, "c.json: invalid JSON: nested too deeply"),
        ('{"slot_seconds": ' + "1" * 5000 + "}", "c.json: invalid JSON: a number has more than 4300 digits"),
        (
            cluster_text(slot_seconds=10**400),
            "field 'slot_seconds': 100000000000000000000000000000... (401 characters) is not a finite number",
        ),
    ],
)
def test_json_python_cannot_read_is_refused_as_bad_input(text, expected):
    with pytest.raises(InputError) as exc:
        parse_cluster(text, "c.json")
    assert expected in str(exc.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"jobs": ' + "[" * 100_000 + "]" * 100_000 + "}", "t.json: invalid JSON: nested too deeply"),
        ('[{"job_id": "x", "arrival": ' + "1" * 5000 + "}]", "t.json: invalid JSON: a number has more than 4300"),
        ('[{"job_id": "x", "arrival": 0, "epochs": 1' + "0" * 400 + "}]", "job 'x', field 'epochs': 100"),
        ('[{"job_id": "x\\u0000y", "arrival": 0}]', "field 'job_id': 'x\\x00y' contains a NUL character"),
        ('[{"job_id": "x", "arrival": 0, "user": "\\u0000"}]', "job 'x', field 'user': '\\x00' contains a NUL"),
    ],
)
def test_json_traces_python_or_a_database_cannot_take_are_refused(text, expected):
    assert expected in trace_error(text, "json")


def test_a_nul_byte_in_a_file_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "nul.csv"
    path.write_bytes(b"job_id,arrival\nx,0\ny\x00,1\n")
    with pytest.raises(InputError, match=r"nul\.csv, line 3: contains a NUL byte"):
        load_trace(path, parse_cluster(cluster_text()))


@pytest.mark.parametrize("value", ["false", "true", 0, 1, None])
def test_unlimited_must_be_a_json_boolean(value):
    servers = [{"id": "a", "unlimited": value, "capacity": {"gpu": 1}}]
    with pytest.raises(InputError, match=r"c\.json, field 'servers\[0\]\.unlimited': .* is not true or false"):
        parse_cluster(cluster_text(servers=servers), "c.json")
    servers[0]["unlimited"] = False
    assert not parse_cluster(cluster_text(servers=servers)).servers[0].unlimited


def test_a_duplicate_column_is_refused_naming_it():
    msg = trace_error("job_id,arrival,arrival\nx,0,5\n")
    assert msg == "t.csv, line 1, field 'arrival': duplicate column 'arrival'"
    assert instance("job_id,arrival,,\nx,3,,\n").job("x").arrival == 3  # trailing commas, as before


def test_a_json_trace_may_state_its_slot_length_once_for_every_job():
    from scheduling.errors import InputError
    from scheduling.loaders import cluster_from_dict, parse_trace
    from tests.scenarios import TINY_CLUSTER

    cluster = cluster_from_dict(TINY_CLUSTER)  # 60-s slots
    same = '{"slot_seconds": 60, "jobs": [{"job_id": "a", "arrival": 3, "gpus": 1, "duration": 60}]}'
    assert parse_trace(same, cluster, "t.json", "json")[0].arrival == 3
    other = same.replace('"slot_seconds": 60', '"slot_seconds": 30')
    with pytest.raises(InputError, match="slots of 30 s, the cluster's slots are 60 s"):
        parse_trace(other, cluster, "t.json", "json")
    assert parse_trace(other, cluster, "t.json", "json", convert_slots=True)[0].arrival == 1  # floor(3 x 30 / 60)
