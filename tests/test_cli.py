"""The CLI contract (DESIGN section 4): commands, outputs and exit code 2 on bad input."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from scheduling import api, presets
from scheduling.cli import main
from scheduling.validator import validate
from tests.scenarios import RIGID_TRACE, TINY_CLUSTER


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    cluster = tmp_path / "cluster.json"
    cluster.write_text(json.dumps(TINY_CLUSTER))
    trace = tmp_path / "trace.csv"
    trace.write_text(RIGID_TRACE)
    return cluster, trace


def test_algorithms_json_lists_every_parameter_with_type_default_and_help(capsys):
    assert main(["algorithms", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert {"fifo", "drf", "srtf", "tiresias"} <= set(listing)
    for entry in listing.values():
        for p in entry["params"]:
            assert {"name", "type", "default", "help", "min", "max"} <= set(p)


def test_simulate_then_check_accepts_the_result(files, tmp_path, capsys):
    cluster, trace = files
    out = tmp_path / "r.json"
    assert (
        main(["simulate", "--cluster", str(cluster), "--trace", str(trace), "--algorithm", "srtf", "--out", str(out)])
        == 0
    )
    doc = json.loads(out.read_text())
    assert doc["schema"] == "mlsched.result/1"
    assert doc["servers"][0] == {"id": "s-0", "capacity": {"gpu": 4.0, "cpu": 16.0, "bw": 20.0}, "unlimited": False}
    assert "total_weighted_jct" in doc["metrics"]
    assert main(["check", "--cluster", str(cluster), "--trace", str(trace), "--result", str(out)]) == 0
    assert "OK" in capsys.readouterr().out


def test_check_rejects_a_tampered_result_with_exit_1(files, tmp_path, capsys):
    cluster, trace = files
    out = tmp_path / "r.json"
    main(["simulate", "--cluster", str(cluster), "--trace", str(trace), "--algorithm", "fifo", "--out", str(out)])
    doc = json.loads(out.read_text())
    doc["metrics"]["completed"] = 0
    out.write_text(json.dumps(doc))
    assert main(["check", "--cluster", str(cluster), "--trace", str(trace), "--result", str(out)]) == 1
    assert "metric completed" in capsys.readouterr().out


def test_compare_writes_one_result_per_algorithm_and_a_summary(files, tmp_path):
    cluster, trace = files
    out = tmp_path / "cmp"
    args = ["compare", "--cluster", str(cluster), "--trace", str(trace), "--algorithms", "fifo,drf", "--out", str(out)]
    assert main([*args, "--param", "fifo.backfill=true"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["drf.json", "fifo.json", "summary.csv"]
    assert json.loads((out / "fifo.json").read_text())["params"]["backfill"] is True
    with (out / "summary.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["algorithm"] for r in rows] == ["fifo", "drf"]
    for row in rows:  # as the results report them; completed_weight: Zhou et al.'s Fig. 8 figure
        metrics = json.loads((out / f"{row['algorithm']}.json").read_text())["metrics"]
        assert float(row["completed_weight"]) == metrics["completed_weight"] > 0
        assert int(row["completed"]) == metrics["completed"]


@pytest.mark.parametrize(
    ("trace", "named"),
    [
        ("job_id,arrival\nj1,0\nj1,1\n", "'j1'"),
        ("job_id,weight\nx,1\n", "'arrival'"),
        ("job_id,arrival\nx,soon\n", "line 2"),
    ],
)
def test_bad_input_exits_2_and_names_the_problem(files, tmp_path, capsys, trace, named):
    cluster, _ = files
    bad = tmp_path / "bad.csv"
    bad.write_text(trace)
    assert main(["validate", "--cluster", str(cluster), "--trace", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv" in err and named in err


def test_unknown_algorithm_and_bad_parameter_exit_2(files, tmp_path, capsys):
    cluster, trace = files
    base = ["simulate", "--cluster", str(cluster), "--trace", str(trace), "--out", str(tmp_path / "r.json")]
    assert main([*base, "--algorithm", "nope"]) == 2
    assert main([*base, "--algorithm", "fifo", "--param", "workers_max=lots"]) == 2
    err = capsys.readouterr().err
    assert "unknown algorithm 'nope'" in err and "workers_max" in err


@pytest.mark.parametrize(
    ("algorithm", "param"), [("fifo", "workers_max=inf"), ("fifo", "workers_max=1e400"), ("antman", "quota=nan")]
)
def test_a_non_finite_parameter_exits_2(files, tmp_path, capsys, algorithm, param):
    cluster, trace = files
    out = tmp_path / "r.json"
    args = ["simulate", "--cluster", str(cluster), "--trace", str(trace), "--out", str(out)]
    assert main([*args, "--algorithm", algorithm, "--param", param]) == 2
    key, value = param.split("=")
    assert f"field 'param {key}': {value!r} is not a finite number" in capsys.readouterr().err
    assert not out.exists()


def test_the_module_runs_as_a_program(files):
    cluster, trace = files
    proc = subprocess.run(
        [sys.executable, "-m", "scheduling", "validate", "--cluster", str(cluster), "--trace", str(trace)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 jobs" in proc.stdout


BAD_CLUSTERS = {
    "negative capacity": (
        '{"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "a", "capacity": {"gpu": -2}}]}',
        "servers[0].capacity.gpu",
    ),
    "missing capacity": ('{"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "a"}]}', "missing capacity"),
}
BAD_TRACES = {
    "missing column": (b"job_id,weight\nx,1\n", "missing column 'arrival'"),
    "wrong type": (b"job_id,arrival\nx,0\ny,abc\n", "line 3, job 'y', field 'arrival'"),
    "duplicate job id": (b"job_id,arrival\nj1,0\nj1,1\n", "job 'j1', field 'job_id': duplicate"),
    "unknown worker type": (b"job_id,arrival,batch_time.zz\nx,0,5\n", "unknown type 'zz'"),
    "empty file": (b"", "file is empty"),
    "non-UTF-8 bytes": (b"job_id,arrival\nx\xe9,0\n", "line 2: not UTF-8"),
    "fits on no server": (b"job_id,arrival,gpus,duration\nhuge,0,64,60\n", "job 'huge', field 'gpus': needs 64 GPUs"),
}


@pytest.mark.parametrize("case", sorted(BAD_CLUSTERS))
def test_a_bad_cluster_exits_2_naming_file_field_and_problem(case, files, tmp_path, capsys):
    text, expected = BAD_CLUSTERS[case]
    bad = tmp_path / "bad-cluster.json"
    bad.write_text(text)
    assert main(["validate", "--cluster", str(bad), "--trace", str(files[1])]) == 2
    err = capsys.readouterr().err
    assert "bad-cluster.json" in err and expected in err


@pytest.mark.parametrize("case", sorted(BAD_TRACES))
def test_a_bad_trace_exits_2_naming_file_line_field_and_problem(case, files, tmp_path, capsys):
    data, expected = BAD_TRACES[case]
    bad = tmp_path / "bad-trace.csv"
    bad.write_bytes(data)
    assert main(["validate", "--cluster", str(files[0]), "--trace", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad-trace.csv" in err and expected in err


def test_a_300_mb_trace_exits_2_without_being_read(files, tmp_path, capsys):
    big = tmp_path / "big.csv"
    with big.open("wb") as f:
        f.truncate(300 * 1024 * 1024)  # sparse: nothing is written
    assert main(["validate", "--cluster", str(files[0]), "--trace", str(big)]) == 2
    assert "big.csv: file is 300.0 MiB, larger than the 256 MiB limit" in capsys.readouterr().err


def test_the_cli_reads_files_above_the_dashboards_upload_limit(tmp_path):
    # A 150,000-job A-SRPT trace is 65 MiB: the CLI must read it; only uploads stop at 32 MiB.
    from scheduling import loaders

    assert loaders.MAX_UPLOAD_BYTES == 32 * 2**20 < loaders.MAX_INPUT_BYTES
    big = tmp_path / "big.csv"
    big.write_bytes(b"a" * (40 * 2**20))
    assert len(loaders.read_text(big)) == 40 * 2**20


def _null_demand(doc):
    doc["placements"][0]["demand"] = None
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (lambda doc: b"\xff\xfe{}", "not a result document (invalid JSON or text: 'utf-8' codec can't decode"),
        (lambda doc: b"[]", "not a result document (expected a JSON object, found list)"),
        (lambda doc: b'"x"', "not a result document (expected a JSON object, found str)"),
        (_null_demand, "not a result document (AttributeError: 'NoneType' object has no attribute 'items')"),
    ],
)
def test_check_of_a_malformed_result_exits_2_naming_the_file(files, tmp_path, capsys, content, expected):
    cluster, trace = files
    out = tmp_path / "r.json"
    main(["simulate", "--cluster", str(cluster), "--trace", str(trace), "--algorithm", "fifo", "--out", str(out)])
    out.write_bytes(content(json.loads(out.read_text())))
    assert main(["check", "--cluster", str(cluster), "--trace", str(trace), "--result", str(out)]) == 2
    assert f"error: {out}: {expected}" in capsys.readouterr().err


def test_the_validator_reports_a_malformed_document_as_a_problem(files, tmp_path):
    cluster, trace = files
    out = tmp_path / "r.json"
    main(["simulate", "--cluster", str(cluster), "--trace", str(trace), "--algorithm", "fifo", "--out", str(out)])
    instance = api.load_instance(cluster, trace)
    doc = json.loads(out.read_text())
    doc["placements"][0]["demand"] = None
    assert validate(instance, doc)[-1].startswith("malformed result: AttributeError")
    assert validate(instance, []) == ["malformed result: expected a JSON object, found list"]


def exit_code(argv: list[str]) -> int | str | None:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse refuses an argument itself
        return exc.code


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["simulate", "--algorithm", "fifo", "--seed", "-1", "--out", "r.json"], "argument --seed: -1 must be >= 0"),
        (
            ["simulate", "--algorithm", "fifo", "--horizon", "-3", "--out", "r.json"],
            "argument --horizon: -3 must be >= 1",
        ),
        (["simulate", "--algorithm", "fifo", "--horizon", "1e18", "--out", "r.json"], "'1e18' is not a whole number"),
        (["simulate", "--algorithm", "fifo", "--out", "folder"], "folder, field '--out': is a folder"),
        (
            ["simulate", "--algorithm", "fifo", "--out", "file/r.json"],
            "file, field '--out': cannot write (File exists)",
        ),
        (["compare", "--algorithms", "fifo", "--out", "file"], "file, field '--out': exists and is not a folder"),
        (["compare", "--algorithms", "fifo", "--horizon", "0", "--out", "cmp"], "argument --horizon: 0 must be >= 1"),
        (["generate", "--preset", "demo", "--out", "file"], "file, field '--out': exists and is not a folder"),
        (["generate", "--preset", "demo", "--seed", "-1", "--out", "g"], "argument --seed: -1 must be >= 0"),
        (["import", "--format", "generic-gpu", "--input", "t.csv", "--seed", "-1", "--out", "o.csv"], "--seed: -1"),
        (["import", "--format", "generic-gpu", "--input", "folder", "--out", "o.csv"], "cannot read the file"),
        (["validate", "--cluster", "folder"], "folder: cannot read the file (Is a directory)"),
        (["validate", "--trace", "folder"], "folder: cannot read the file (Is a directory)"),
    ],
)
def test_bad_arguments_and_paths_exit_2_with_a_message(files, tmp_path, monkeypatch, capsys, command, expected):
    cluster, trace = files
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("in the way\n")
    (tmp_path / "t.csv").write_text("job_id,submit_time,num_gpus,duration\na,0,1,60\n")
    inputs = {"--cluster": str(cluster), "--trace": str(trace)}
    if command[0] in ("simulate", "compare", "validate"):
        command = [*command, *(x for k, v in inputs.items() if k not in command for x in (k, v))]
    assert exit_code(command) == 2
    assert expected in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cluster.json", "file", "folder", "t.csv", "trace.csv"]


def test_compare_checks_every_parameter_before_running_or_writing_anything(files, tmp_path, capsys):
    cluster, trace = files
    out = tmp_path / "cmp"
    args = ["compare", "--cluster", str(cluster), "--trace", str(trace), "--out", str(out)]
    assert main([*args, "--algorithms", "fifo,drf", "--param", "drf.bogus=1"]) == 2
    assert "field 'param bogus': unknown parameter for drf" in capsys.readouterr().err
    assert main([*args, "--algorithms", "fifo,drf", "--param", "drf.workers_max=inf"]) == 2
    assert "field 'param workers_max': 'inf' is not a finite number" in capsys.readouterr().err
    assert not out.exists()
    assert main([*args, "--algorithms", " , "]) == 2
    assert "field '--algorithms': ' , ' names no algorithm" in capsys.readouterr().err
    assert not out.exists()


def test_history_is_a_separate_trace_the_predictors_fit_on(tmp_path, capsys):
    now, past = tmp_path / "now", tmp_path / "past"
    assert (
        main(["generate", "--preset", "asrpt", "--jobs", "12", "--seed", "1", "--size", "0.04", "--out", str(now)]) == 0
    )
    assert (
        main(["generate", "--preset", "asrpt", "--jobs", "30", "--seed", "2", "--size", "0.04", "--out", str(past)])
        == 0
    )
    trace = next(now.glob("trace.*"))
    base = ["simulate", "--cluster", str(now / "cluster.json"), "--trace", str(trace), "--algorithm", "asrpt"]
    base += ["--param", "predictor=mean"]
    capsys.readouterr()
    assert main([*base, "--out", str(tmp_path / "alone.json")]) == 2  # refused: nothing to fit on
    assert "asrpt needs a history of past jobs to fit its mean predictor" in capsys.readouterr().err
    assert not (tmp_path / "alone.json").exists()
    assert main([*base, "--param", "no_history=zero", "--out", str(tmp_path / "alone.json")]) == 0
    note = "asrpt: note: the mean predictor had no history to fit and predicted 0 iterations for every job"
    assert note in capsys.readouterr().err  # said on stderr: the run alone orders no job by its prediction
    assert main([*base, "--history", str(next(past.glob("trace.*"))), "--out", str(tmp_path / "past.json")]) == 0
    assert "note:" not in capsys.readouterr().err
    alone = json.loads((tmp_path / "alone.json").read_text())["prediction"]
    fitted = json.loads((tmp_path / "past.json").read_text())["prediction"]
    assert alone["history_jobs"] == 0 and fitted["history_jobs"] == 30
    assert fitted["mean_abs_error"] != alone["mean_abs_error"]


def test_oasis_history_bounds_without_a_history_trace_exit_2(tmp_path, capsys):
    main(["generate", "--preset", "oasis", "--jobs", "5", "--seed", "1", "--size", "0.1", "--out", str(tmp_path)])
    args = ["simulate", "--cluster", str(tmp_path / "cluster.json"), "--trace", str(next(tmp_path.glob("trace.*")))]
    code = main([*args, "--algorithm", "oasis", "--param", "bounds=history", "--out", str(tmp_path / "r.json")])
    assert code == 2
    assert "param bounds" in capsys.readouterr().err


SECOND_SLOTS = "job_id,arrival,slot_seconds,gpus,duration\nr1,0,1,4,600\nr2,90,1,8,300\nr3,150,1,6,120\n"


def test_a_trace_in_other_slots_than_the_cluster_is_refused_or_converted_when_asked(files, tmp_path, capsys):
    cluster, _ = files  # 60-s slots
    trace = tmp_path / "seconds.csv"
    trace.write_text(SECOND_SLOTS)
    args = ["simulate", "--cluster", str(cluster), "--trace", str(trace), "--algorithm", "fifo"]
    assert main([*args, "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "line 2, field 'slot_seconds': the trace's arrivals are in slots of 1 s, the cluster's slots are 60 s" in err
    assert not (tmp_path / "r.json").exists()
    assert main(["validate", "--cluster", str(cluster), "--trace", str(trace)]) == 2
    assert main([*args, "--convert-slots", "--out", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert {j["job_id"]: j["arrival"] for j in doc["jobs"]} == {"r1": 0, "r2": 1, "r3": 2}  # floor(s / 60)


def test_a_trace_stating_two_slot_lengths_is_refused(files, tmp_path, capsys):
    cluster, _ = files
    trace = tmp_path / "mixed.csv"
    trace.write_text("job_id,arrival,slot_seconds,gpus,duration\nr1,0,60,4,600\nr2,1,1,8,300\n")
    assert main(["validate", "--cluster", str(cluster), "--trace", str(trace)]) == 2
    assert (
        "line 3, job 'r2', field 'slot_seconds': 1 s differs from the 60 s stated on line 2" in capsys.readouterr().err
    )


def test_generate_history_writes_the_presets_own_history_for_simulate_history(tmp_path, capsys):
    args = ["generate", "--preset", "asrpt", "--jobs", "12", "--seed", "4", "--size", "0.04", "--out", str(tmp_path)]
    assert main([*args, "--history"]) == 0
    trace, history = tmp_path / "trace.json", tmp_path / "history.json"
    assert history.read_text() != trace.read_text()
    # asrpt's own history: other jobs of the trace's own groups, drawn from seed + HISTORY_SEED_OFFSET
    assert history.read_text() == presets.own_history("asrpt", jobs=12, seed=4, size=0.04).trace
    groups = {j["group"] for j in json.loads(trace.read_text())}
    assert {j["group"] for j in json.loads(history.read_text())} <= groups
    run = ["simulate", "--cluster", str(tmp_path / "cluster.json"), "--trace", str(trace), "--algorithm", "spjf"]
    assert main([*run, "--history", str(history), "--param", "predictor=mean", "--out", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["prediction"]["history_jobs"] == 12
