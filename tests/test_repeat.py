"""Repetition experiments: `compare --seeds/--windows/--preset`, and result provenance."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from scheduling import api, presets, provenance, repeat
from scheduling.cli import main
from scheduling.errors import InputError
from tests.scenarios import RIGID_TRACE, TINY_CLUSTER


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    cluster = tmp_path / "cluster.json"
    cluster.write_text(json.dumps(TINY_CLUSTER))
    trace = tmp_path / "trace.csv"
    trace.write_text(RIGID_TRACE)
    return cluster, trace


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize(
    ("text", "seeds"), [("0-3", [0, 1, 2, 3]), ("5", [5]), ("0-1,7,9-10", [0, 1, 7, 9, 10]), (" 2 , 4 ", [2, 4])]
)
def test_seed_lists_and_ranges_parse(text, seeds):
    assert repeat.parse_seeds(text) == seeds


@pytest.mark.parametrize(
    ("text", "problem"), [("a", "not a seed"), ("3-1", "larger"), ("1,1", "twice"), ("-2", "not a seed")]
)
def test_bad_seed_lists_are_input_errors_naming_the_flag(text, problem):
    with pytest.raises(InputError, match=problem) as err:
        repeat.parse_seeds(text)
    assert err.value.field == "--seeds"


def test_even_windows_split_the_trace_by_job_count_and_start_at_slot_0(files):
    inst = api.load_instance(*files)
    cases = repeat.window_cases(inst, 2, [0])
    sizes = [len(c.instance.jobs) for c in cases]
    assert sum(sizes) == len(inst.jobs) and abs(sizes[0] - sizes[1]) <= 1
    assert all(min(j.arrival for j in c.instance.jobs) == 0 for c in cases)
    assert [c.key for c in cases] == ["window=0", "window=1"]


def test_given_windows_keep_the_arrivals_in_their_range(files):
    inst = api.load_instance(*files)
    last = max(j.arrival for j in inst.jobs)
    cases = repeat.window_cases(inst, [(0, last), (last, last + 1)], [0, 1])
    assert [c.key for c in cases] == ["window=0 seed=0", "window=0 seed=1", "window=1 seed=0", "window=1 seed=1"]
    assert len(cases[0].instance.jobs) + len(cases[2].instance.jobs) == len(inst.jobs)
    assert cases[2].window == f"{last}:{last + 1}"


def test_an_empty_window_is_an_input_error(files):
    inst = api.load_instance(*files)
    with pytest.raises(InputError, match="window 100000:100001 holds no job"):
        repeat.window_cases(inst, [(100000, 100001)], [0])


def test_compare_over_preset_seeds_writes_the_table_the_summary_and_a_readable_report(tmp_path, capsys):
    out = tmp_path / "rep"
    args = ["compare", "--preset", "demo", "--jobs", "8", "--seeds", "0-2", "--algorithms", "fifo,srtf"]
    assert main([*args, "--reference", "fifo", "--out", str(out)]) == 0
    runs = read_csv(out / "runs.csv")
    assert [(r["case"], r["label"]) for r in runs] == [(f"seed={s}", a) for s in range(3) for a in ("fifo", "srtf")]
    for r in runs:  # each row is the stored, validated result of that seed
        doc = json.loads((out / "results" / f"{r['label']}_seed{r['seed']}.json").read_text())
        assert float(r["avg_jct"]) == pytest.approx(doc["metrics"]["avg_jct"]) and doc["seed"] == int(r["seed"])
    summary = {(r["metric"], r["algorithm"]): r for r in read_csv(out / "stats.csv")}
    srtf = summary["avg_jct", "srtf"]
    values = sorted(float(r["avg_jct"]) for r in runs if r["label"] == "srtf")
    assert float(srtf["median"]) == pytest.approx(values[1])
    assert int(srtf["wins"]) + int(srtf["ties"]) + int(srtf["losses"]) == 3 == int(srtf["pairs"])
    assert float(srtf["median_ci_low"]) <= float(srtf["median"]) <= float(srtf["median_ci_high"])
    assert summary["avg_jct", "fifo"]["verdict"] == ""  # the reference is not paired with itself
    text = capsys.readouterr().out
    assert "avg_jct (lower is better; 3 repetitions; paired differences and ratios vs fifo" in text
    assert {r["algorithm"] for r in read_csv(out / "jct_cdf.csv")} == {"fifo", "srtf"}


def test_a_repeated_compare_charges_the_restart_cost_it_is_given(tmp_path):
    out = tmp_path / "rep"
    args = ["compare", "--preset", "demo", "--jobs", "8", "--seeds", "0-1", "--algorithms", "fifo"]
    assert main([*args, "--restart-seconds", "120", "--out", str(out)]) == 0
    for seed in (0, 1):
        doc = json.loads((out / "results" / f"fifo_seed{seed}.json").read_text())
        assert doc["restart_seconds"] == 120


def test_a_preset_repetition_refuses_a_history_it_would_not_use(tmp_path, capsys):
    history = tmp_path / "history.csv"
    history.write_text("job_id,arrival\n")
    args = ["compare", "--preset", "demo", "--seeds", "0-1", "--algorithms", "fifo", "--history", str(history)]
    assert main([*args, "--out", str(tmp_path / "rep")]) == 2
    assert "--history" in capsys.readouterr().err


def test_a_preset_repetition_gives_the_predictors_the_presets_own_history(tmp_path, capsys):
    """compare --preset: asrpt's predictor learns from the preset drawn from seed + the history
    offset (generate --history), per seed; an instance for fifo alone carries no history."""
    out = tmp_path / "rep"
    args = ["compare", "--preset", "asrpt", "--jobs", "10", "--size", "0.04", "--seeds", "2-3"]
    assert main([*args, "--algorithms", "asrpt,fifo", "--out", str(out)]) == 0
    for seed in (2, 3):
        report = json.loads((out / "results" / f"asrpt_seed{seed}.json").read_text())["prediction"]
        assert report["history_jobs"] == 10
    assert "no history" not in capsys.readouterr().err
    assert repeat.preset_cases("asrpt", 10, [2], 0.04)[0].instance.history == ()
    with_history = repeat.preset_cases("asrpt", 10, [2], 0.04, history=True)[0].instance
    assert [j.job_id for j in with_history.history] == [
        j.job_id for j in repeat.preset_instance("asrpt", 10, 2 + presets.HISTORY_SEED_OFFSET, 0.04).jobs
    ]


def test_a_repeated_compare_notes_a_predictor_without_a_history(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["generate", "--preset", "asrpt", "--jobs", "8", "--size", "0.04", "--out", str(tmp_path / "in")]) == 0
    trace = next((tmp_path / "in").glob("trace.*"))
    args = ["compare", "--cluster", str(tmp_path / "in" / "cluster.json"), "--trace", str(trace), "--seeds", "0-1"]
    capsys.readouterr()
    assert main([*args, "--algorithms", "spjf,fifo", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "seed=0 spjf: note: the random-forest predictor had no history" in err and "fifo: note" not in err


def test_windows_of_a_trace_keep_its_history(files):
    inst = api.load_instance(*files, history=files[1])
    assert inst.history and all(c.instance.history == inst.history for c in repeat.window_cases(inst, 2, [0]))


def test_compare_over_windows_pairs_algorithms_on_each_window(files, tmp_path, capsys):
    cluster, trace = files
    out = tmp_path / "win"
    args = ["compare", "--cluster", str(cluster), "--trace", str(trace), "--algorithms", "fifo,drf"]
    assert main([*args, "--windows", "2", "--out", str(out)]) == 0
    runs = read_csv(out / "runs.csv")
    assert [r["case"] for r in runs] == ["window=0", "window=0", "window=1", "window=1"]
    assert all(r["window"] for r in runs)
    assert "2 repetitions" in capsys.readouterr().out


def test_compare_without_the_new_flags_keeps_its_outputs(files, tmp_path):
    cluster, trace = files
    out = tmp_path / "cmp"
    assert (
        main(["compare", "--cluster", str(cluster), "--trace", str(trace), "--algorithms", "fifo", "--out", str(out)])
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == ["fifo.json", "summary.csv"]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--preset", "demo", "--reference", "srtf"], "field '--reference': 'srtf' is not among --algorithms fifo"),
        (["--preset", "demo", "--cluster", "c.json"], "field '--cluster': --preset generates the instance"),
        (["--jobs", "4"], "field '--jobs': only with --preset"),
        (["--reference", "fifo", "--cluster", "c.json", "--trace", "t.csv"], "a reference needs a repetition"),
        ([], "give --cluster and --trace, or --preset"),
        (["--preset", "demo", "--seeds", "4-2"], "field '--seeds'"),
    ],
)
def test_inconsistent_repetition_flags_exit_2_before_running(tmp_path, monkeypatch, capsys, extra, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps(TINY_CLUSTER))
    (tmp_path / "t.csv").write_text(RIGID_TRACE)
    assert main(["compare", "--algorithms", "fifo", *extra, "--out", "o"]) == 2
    assert expected in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_result_records_the_code_version_and_the_digests_of_its_inputs(files):
    inst = api.load_instance(*files)
    doc = api.run(inst, "fifo")
    assert doc["code"]["package"] == "mlsched" and doc["code"]["version"]
    assert doc["code"] == provenance.code()
    assert set(doc["inputs"]) == {"cluster_sha256", "trace_sha256"}
    again = api.load_instance(*files)  # the same files loaded again: the same digests
    assert provenance.inputs(again) == doc["inputs"]


def test_the_digest_follows_the_trace_content_not_its_file(files, tmp_path):
    cluster, trace = files
    spaced = tmp_path / "spaced.csv"
    spaced.write_text(trace.read_text().replace(",", ", "))
    changed = tmp_path / "changed.csv"
    lines = trace.read_text().splitlines()
    changed.write_text("\n".join([*lines[:-1], lines[-1].replace(lines[-1].split(",")[1], "7", 1)]) + "\n")
    base = provenance.inputs(api.load_instance(cluster, trace))
    assert provenance.inputs(api.load_instance(cluster, spaced)) == base
    assert provenance.inputs(api.load_instance(cluster, changed))["trace_sha256"] != base["trace_sha256"]


def test_check_notes_a_result_made_by_another_version_without_failing(files, tmp_path, capsys):
    cluster, trace = files
    result = tmp_path / "r.json"
    assert (
        main(
            ["simulate", "--cluster", str(cluster), "--trace", str(trace), "--algorithm", "fifo", "--out", str(result)]
        )
        == 0
    )
    doc = json.loads(result.read_text())
    doc["code"]["commit"] = "0" * 40
    result.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["check", "--cluster", str(cluster), "--trace", str(trace), "--result", str(result)]) == 0
    out = capsys.readouterr().out
    assert f"note: the result was made by commit {'0' * 40}" in out and "OK: the schedule is valid" in out


def test_check_of_a_current_result_prints_no_note(files, tmp_path, capsys):
    cluster, trace = files
    result = tmp_path / "r.json"
    main(["simulate", "--cluster", str(cluster), "--trace", str(trace), "--algorithm", "fifo", "--out", str(result)])
    capsys.readouterr()
    assert main(["check", "--cluster", str(cluster), "--trace", str(trace), "--result", str(result)]) == 0
    assert "note:" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("value", "text"), [(None, "-"), (12.3456, "12.35"), (0.001234, "0.001234"), (123456.7, "123,457")]
)
def test_table_numbers_keep_4_digits_without_exponents(value, text):
    assert repeat.fmt(value) == text


def test_the_digest_cache_does_not_keep_an_instance_alive(files):
    import gc
    import weakref

    inst = api.load_instance(*files)
    provenance.inputs(inst)
    ref = weakref.ref(inst)
    del inst
    gc.collect()
    assert ref() is None
