"""Importers: raw GPU traces and node lists become loadable traces and cluster specs."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from scheduling import api, importers, presets
from scheduling.errors import InputError
from scheduling.loaders import load_cluster, load_trace
from scheduling.validator import validate

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces"
PHILLY = SHARED / "philly" / "philly.csv"
OPENB_NODES = SHARED / "alibaba-openb" / "openb_node_list_gpu_node.csv"
needs_shared = pytest.mark.skipif(not PHILLY.exists() or not OPENB_NODES.exists(), reason="../shared/traces missing")


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def gpu_cluster(tmp_path: Path) -> Path:
    cluster_path, _ = presets.generate("asrpt", jobs=1, seed=0, size=1.0, out=tmp_path / "cluster")
    return cluster_path


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- generic-gpu ---------------------------------------------------------------------------------


@needs_shared
def test_the_whole_philly_trace_imports_as_published_with_ids_from_row_numbers(tmp_path: Path) -> None:
    out = tmp_path / "philly.csv"
    summary = importers.run("generic-gpu", PHILLY, out)
    jobs = read_csv(out)
    assert len(jobs) == 82247 and "82247 jobs" in summary
    assert len({j["job_id"] for j in jobs}) == len(jobs)
    first_row = next(j for j in jobs if j["job_id"] == "philly-000001")  # 2017-10-09 07:01:55,66.0,1,66.0,11cb48
    assert (first_row["duration"], first_row["gpus"], first_row["group"]) == ("66", "1", "11cb48")
    arrivals = [int(j["arrival"]) for j in jobs]
    assert arrivals[0] == 0 and arrivals == sorted(arrivals)


@needs_shared
def test_a_philly_window_runs_with_fifo_on_a_preset_cluster_and_passes_the_validator(tmp_path: Path) -> None:
    trace = tmp_path / "philly-500.json"
    importers.run("generic-gpu", PHILLY, trace, limit=500)
    instance = api.load_instance(gpu_cluster(tmp_path), trace)
    assert len(instance.jobs) == 500 and all(j.rigid for j in instance.jobs)
    doc = api.run(instance, "fifo")
    assert validate(instance, doc) == []
    assert doc["metrics"]["completed"] == 500


def test_an_imported_trace_records_its_slot_length_and_runs_only_on_clusters_with_the_same(tmp_path: Path) -> None:
    importers.run("generic-gpu", FIXTURES / "philly_head.csv", tmp_path / "t.csv", slot_seconds=1, limit=5)
    importers.run("generic-gpu", FIXTURES / "philly_head.csv", tmp_path / "t.json", slot_seconds=1, limit=5)
    assert {j["slot_seconds"] for j in read_csv(tmp_path / "t.csv")} == {"1"}
    assert {j["slot_seconds"] for j in json.loads((tmp_path / "t.json").read_text())} == {1.0}
    cluster = gpu_cluster(tmp_path)  # 60-s slots
    for trace in (tmp_path / "t.csv", tmp_path / "t.json"):
        with pytest.raises(InputError, match="arrivals are in slots of 1 s, the cluster's slots are 60 s") as exc:
            api.load_instance(cluster, trace)
        assert exc.value.field == "slot_seconds" and exc.value.file == str(trace)
        converted = api.load_instance(cluster, trace, convert_slots=True)
        assert len(converted.jobs) == 5


def test_philly_ids_are_stable_across_windows(tmp_path: Path) -> None:
    importers.run("generic-gpu", FIXTURES / "philly_head.csv", tmp_path / "all.csv")
    importers.run("generic-gpu", FIXTURES / "philly_head.csv", tmp_path / "five.csv", limit=5)
    everything = {j["job_id"]: j for j in read_csv(tmp_path / "all.csv")}
    for job in read_csv(tmp_path / "five.csv"):
        assert everything[job["job_id"]]["duration"] == job["duration"]


def test_ideal_elastic_duration_matches_the_trace_duration(tmp_path: Path) -> None:
    out = tmp_path / "head.json"
    importers.run("generic-gpu", FIXTURES / "philly_head.csv", out, seed=3)
    for job in json.loads(out.read_text(encoding="utf-8")):
        step = job["batch_time"] + job["ps_update"] * (job["gpus"] - 1) / job["gpus"]
        ideal = job["epochs"] * job["minibatches"] * step
        assert ideal == pytest.approx(job["duration"], rel=0.35, abs=2 * step)
        assert job["chunks"] == job["gpus"] and job["arch"] == "allreduce"


def test_model_profiles_are_assigned_per_group_and_seeded(tmp_path: Path) -> None:
    importers.run("generic-gpu", FIXTURES / "philly_head.csv", tmp_path / "a.csv", seed=1)
    importers.run("generic-gpu", FIXTURES / "philly_head.csv", tmp_path / "b.csv", seed=1)
    a = read_csv(tmp_path / "a.csv")
    assert a == read_csv(tmp_path / "b.csv")
    by_group: dict[str, set[str]] = {}
    for job in a:
        by_group.setdefault(job["group"], set()).add(job["model"])
    assert all(len(models) == 1 for models in by_group.values())


def test_column_mapping_reads_a_trace_with_other_column_names(tmp_path: Path) -> None:
    out = tmp_path / "mapped.csv"
    mapping = {"job_id": "jid", "submit_time": "submitted", "num_gpus": "gpu_req", "duration": "runtime_s"}
    mapping |= {"user": "owner", "group": "team", "status": "outcome", "model": "net"}
    summary = importers.run("generic-gpu", FIXTURES / "renamed_gpu_jobs.csv", out, mapping=mapping, slot_seconds=300)
    jobs = {j["job_id"]: j for j in read_csv(out)}
    assert sorted(jobs) == ["a1", "a2", "a6", "a7"]
    assert "1 non-positive duration, 1 non-positive num_gpus, 1 never ran" in summary
    assert jobs["a2"]["arrival"] == "0" and jobs["a6"]["arrival"] == "12"  # one hour later, 300-s slots
    assert (jobs["a2"]["user"], jobs["a2"]["group"], jobs["a2"]["status"]) == ("bob", "speech", "FAILED")
    assert jobs["a6"]["model"] == "my-custom-net"  # the trace's own model name is kept
    assert jobs["a2"]["batch_time"] == "0.4"  # ... and a known one selects its profile (DeepSpeech2)
    # 300-s slots on the preset's 60-s cluster: loaded only when converting is asked for
    assert {j.arrival for j in load_trace(out, load_cluster(gpu_cluster(tmp_path)), convert_slots=True)} >= {0, 60}


def test_a_mapping_to_a_missing_column_names_the_column(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        importers.run(
            "generic-gpu", FIXTURES / "renamed_gpu_jobs.csv", tmp_path / "x.csv", mapping={"duration": "nope"}
        )
    assert (err.value.line, err.value.field) == (1, "nope")


def test_a_mapping_of_an_unknown_field_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        importers.run("generic-gpu", FIXTURES / "philly_head.csv", tmp_path / "x.csv", mapping={"colour": "cluster"})
    assert err.value.field == "--map"


def test_numeric_and_datetime_submit_times_give_the_same_arrivals(tmp_path: Path) -> None:
    numeric = write(tmp_path / "n.csv", "job_id,submit_time,num_gpus,duration\nx,100,1,60\ny,220.5,2,60\nz,400,1,60\n")
    stamps = "job_id,submit_time,num_gpus,duration\n"
    stamps += "x,2020-01-01 00:01:40,1,60\ny,2020-01-01T00:03:40.5,2,60\nz,2020-01-01 00:06:40,1,60\n"
    dated = write(tmp_path / "d.csv", stamps)
    importers.run("generic-gpu", numeric, tmp_path / "n-out.csv")
    importers.run("generic-gpu", dated, tmp_path / "d-out.csv")
    arrivals = [j["arrival"] for j in read_csv(tmp_path / "n-out.csv")]
    assert arrivals == ["0", "2", "5"]
    assert arrivals == [j["arrival"] for j in read_csv(tmp_path / "d-out.csv")]


def test_start_end_and_limit_filter_by_submit_time(tmp_path: Path) -> None:
    raw = write(
        tmp_path / "raw.csv",
        "job_id,submit_time,num_gpus,duration\nlate,500,1,60\nearly,0,1,60\nmid,200,1,60\nmid2,300,1,60\n",
    )

    def ids(**kwargs: Any) -> list[str]:
        out = tmp_path / "out.csv"
        importers.run("generic-gpu", raw, out, **kwargs)
        return [j["job_id"] for j in read_csv(out)]

    assert ids() == ["early", "mid", "mid2", "late"]
    assert ids(start="100", end="500") == ["mid", "mid2"]
    assert ids(limit=2) == ["early", "mid"]
    assert ids(start="150", limit=1) == ["mid"]


def test_a_datetime_window_applies_to_datetime_submit_times(tmp_path: Path) -> None:
    out = tmp_path / "w.csv"
    mapping = {"job_id": "jid", "submit_time": "submitted", "num_gpus": "gpu_req", "duration": "runtime_s"}
    raw = FIXTURES / "renamed_gpu_jobs.csv"
    importers.run("generic-gpu", raw, out, mapping=mapping, start="2021-03-01 08:00:10", end="2021-03-01 09:30")
    jobs = read_csv(out)
    assert [j["job_id"] for j in jobs] == ["a2", "a5", "a6"]  # no status column mapped: a5 is kept
    assert jobs[0]["arrival"] == "0"


def test_a_datetime_window_on_numeric_submit_times_is_refused(tmp_path: Path) -> None:
    raw = write(tmp_path / "raw.csv", "job_id,submit_time,num_gpus,duration\nx,0,1,60\n")
    with pytest.raises(InputError) as err:
        importers.run("generic-gpu", raw, tmp_path / "out.csv", start="2021-01-01")
    assert err.value.field == "--start"


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ("job_id,submit_time,duration\nx,0,60\n", 1, "num_gpus"),
        ("job_id,submit_time,num_gpus,duration\nx,0,1,60\ny,10,two,60\n", 3, "num_gpus"),
        ("job_id,submit_time,num_gpus,duration\nx,0,1,60\ny,10,1,\n", 3, "duration"),
        ("job_id,submit_time,num_gpus,duration\nx,0,1,60\ny,yesterday,1,60\n", 3, "submit_time"),
        ("job_id,submit_time,num_gpus,duration\nx,2020-01-01,1,60\ny,soon,1,60\n", 3, "submit_time"),
        ("job_id,submit_time,num_gpus,duration\nx,0,1,60\nx,5,1,60\n", 3, "job_id"),
        ("job_id,submit_time,num_gpus,duration\nx,0,1,60\ny,5,1,60,extra,more\n", 3, None),
        # Extra values on the first row (pandas took the surplus first columns as the index and
        # shifted the rest: job "1" with 9 GPUs) and trailing commas: named, nothing written.
        ("job_id,submit_time,num_gpus,duration\na,0,1,60,9,9\n", 2, None),
        ("job_id,submit_time,num_gpus,duration\na,0,1,60,9\nb,0,1,60\n", 2, None),
        ("job_id,submit_time,num_gpus,duration\na,0,1,60,\nb,0,1,60,\n", 2, None),
    ],
)
def test_bad_input_names_the_line_and_column_and_writes_nothing(
    tmp_path: Path, text: str, line: int, field: str | None
) -> None:
    raw = write(tmp_path / "raw.csv", text)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    with pytest.raises(InputError) as err:
        importers.run("generic-gpu", raw, out_dir / "trace.csv")
    assert err.value.file == str(raw)
    assert err.value.line == line
    if field is not None:
        assert err.value.field == field
    else:
        assert "values for 4 columns" in err.value.problem or "Expected 4 fields" in err.value.problem
    assert leftovers(out_dir) == []


def test_a_failed_import_keeps_the_previous_output(tmp_path: Path) -> None:
    out = write(tmp_path / "trace.csv", "previous\n")
    bad = write(tmp_path / "raw.csv", "job_id,submit_time,num_gpus,duration\nx,0,1,sixty\n")
    with pytest.raises(InputError):
        importers.run("generic-gpu", bad, out)
    assert out.read_text(encoding="utf-8") == "previous\n"
    assert leftovers(tmp_path) == ["raw.csv", "trace.csv"]


def test_an_output_without_a_known_extension_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        importers.run("generic-gpu", FIXTURES / "philly_head.csv", tmp_path / "trace.txt")
    assert err.value.field == "--out"


# --- node-list -----------------------------------------------------------------------------------


@needs_shared
def test_the_whole_alibaba_node_list_imports_and_loads(tmp_path: Path) -> None:
    out = tmp_path / "openb.json"
    summary = importers.run("node-list", OPENB_NODES, out)
    cluster = load_cluster(out)
    assert len(cluster.servers) == 1213 and "1213 servers" in summary
    assert cluster.total_capacity("gpu") == 6212
    first = cluster.servers[0]
    assert (first.id, first.gpu_model) == ("openb-node-0000", "P100")
    assert dict(first.capacity) == {"gpu": 2, "cpu": 64, "mem": 256}
    assert cluster.slot_seconds == importers.DEFAULT_SLOT_SECONDS


def test_a_node_list_slice_imports_with_a_given_slot_length_and_limit(tmp_path: Path) -> None:
    out = tmp_path / "nodes.json"
    importers.run("node-list", FIXTURES / "openb_nodes_head.csv", out, slot_seconds=30, limit=5)
    cluster = load_cluster(out)
    assert [s.id for s in cluster.servers] == [f"openb-node-{k:04d}" for k in range(5)]
    assert cluster.slot_seconds == 30


def test_a_node_list_with_vcpus_and_gigabytes_maps_its_columns(tmp_path: Path) -> None:
    raw = write(tmp_path / "nodes.csv", "host,cores,ram,accel,kind\nn1,32,128,4,A100\nn2,16,64,0,\n")
    out = tmp_path / "nodes.json"
    mapping = {"id": "host", "cpu": "cores", "memory_gb": "ram", "gpu": "accel", "model": "kind"}
    importers.run("node-list", raw, out, mapping=mapping)
    servers = json.loads(out.read_text(encoding="utf-8"))["servers"]
    assert servers == [
        {"id": "n1", "capacity": {"gpu": 4, "cpu": 32, "mem": 128}, "gpu_model": "A100"},
        {"id": "n2", "capacity": {"gpu": 0, "cpu": 16, "mem": 64}},
    ]


def test_a_node_list_with_a_negative_amount_names_the_line(tmp_path: Path) -> None:
    raw = write(tmp_path / "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\na,1000,1024,1,T4\nb,-5,1024,1,T4\n")
    with pytest.raises(InputError) as err:
        importers.run("node-list", raw, tmp_path / "nodes.json")
    assert (err.value.line, err.value.field) == (3, "cpu_milli")
    assert not (tmp_path / "nodes.json").exists()


def test_a_node_list_cannot_be_windowed_by_time(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        importers.run("node-list", FIXTURES / "openb_nodes_head.csv", tmp_path / "n.json", start="0")
    assert err.value.field == "--start"
