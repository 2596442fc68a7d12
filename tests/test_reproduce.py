"""`reproduce`: paper figures over seeds with CIs beside the paper's numbers."""

from __future__ import annotations

import csv
import dataclasses
import json

import pytest

from scheduling import api, provenance, repeat, reproduce
from scheduling.cli import main
from scheduling.errors import InputError


def small_figure(**changes):
    fig = reproduce.Figure(
        name="demo-test",
        paper="Demo paper",
        figure="Fig. 1",
        title="Average JCT",
        setting="preset demo, 8 jobs",
        metric="avg_jct",
        scale=1.0,
        unit="slots",
        algorithms=(("fifo", "fifo", {}), ("srtf", "srtf", {})),
        reference="fifo",
        claimed_best="srtf",
        points=(("8 jobs", reproduce.preset_builder("demo", 8)),),
        x_label="jobs",
        paper_claim="SRTF beats FIFO.",
        paper_values={"srtf": "0.7 x fifo"},
        default_seeds=6,
    )
    return dataclasses.replace(fig, **changes)


def test_every_paper_has_at_least_one_reproducible_figure(capsys):
    papers = {f["paper"] for f in reproduce.listing()}
    assert len(papers) == 4
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in reproduce.FIGURES)


@pytest.fixture(scope="module")
def run():
    return reproduce.run_figure(small_figure(), list(range(6)))


def test_a_figure_run_writes_its_data_with_cis_beside_the_paper(run, tmp_path):
    written = reproduce.write(run, tmp_path)
    assert {p.name for p in written} == {"runs.csv", "summary.csv", "table.md", "provenance.json", "figure.html"}
    with (tmp_path / "runs.csv").open(newline="") as f:
        runs = list(csv.DictReader(f))
    assert len(runs) == 12 and {r["label"] for r in runs} == {"fifo", "srtf"}
    with (tmp_path / "summary.csv").open(newline="") as f:
        summary = {r["algorithm"]: r for r in csv.DictReader(f) if r["metric"] == "avg_jct"}
    srtf_values = sorted(float(r["avg_jct"]) for r in runs if r["label"] == "srtf")
    assert float(summary["srtf"]["median"]) == pytest.approx((srtf_values[2] + srtf_values[3]) / 2)
    report = run.points[0].report
    expected = "yes" if report.best == "srtf" else "no"
    assert summary["srtf"]["claim_holds"] == expected
    table = (tmp_path / "table.md").read_text()
    assert "Paper: SRTF beats FIFO." in table and "0.7 x fifo" in table
    assert f"Claim holds across seeds: {expected}" in table
    record = json.loads((tmp_path / "provenance.json").read_text())
    assert record["seeds"] == list(range(6)) and record["code"] == provenance.code()
    assert record["inputs"]["8 jobs"]["3"] == provenance.inputs(repeat.preset_instance("demo", 8, 3))
    assert (tmp_path / "plotly.min.js").exists()


def test_the_claim_is_not_reproduced_when_the_claimed_winner_is_not_separated(run):
    assert run.points[0].report.best != "fifo"
    assert reproduce.claim_holds(run.points[0], small_figure(claimed_best="fifo")).startswith("no:")


@pytest.mark.parametrize(("text", "seeds"), [(None, list(range(6))), ("3", [0, 1, 2]), ("4-5", [4, 5])])
def test_seeds_are_a_count_or_a_list(text, seeds):
    assert reproduce.seeds_of(text, small_figure()) == seeds


def test_zero_seeds_are_an_input_error():
    with pytest.raises(InputError, match="0 seeds"):
        reproduce.seeds_of("0", small_figure())


def test_reproduce_without_a_figure_exits_2(capsys):
    assert main(["reproduce"]) == 2
    assert "reproduce --list" in capsys.readouterr().err


def test_results_computed_elsewhere_assemble_into_the_same_statistics(run):
    fig = small_figure()
    rows = []
    for seed in range(6):
        case = reproduce.case(fig, "8 jobs", seed)
        for label, name, params in fig.algorithms:
            rows.append(repeat.row_of(case, label, api.run(case.instance, name, params, seed)))
    assembled = reproduce.assemble(fig, list(range(6)), {"8 jobs": rows})
    assert assembled.points[0].report == run.points[0].report


def test_an_unknown_point_is_named():
    with pytest.raises(ValueError, match="no point '9 jobs'"):
        reproduce.case(small_figure(), "9 jobs", 0)


def test_edge_fig7_compares_each_of_the_papers_categories_with_its_own_algorithms(tmp_path):
    fig = reproduce.FIGURES["edge-fig7"]
    assert [label for label, _, _ in fig.algorithms_at("with cloud")] == [
        "edge-cloud",
        "srtf",
        "tiresias-l",
        "batchsche",
    ]
    assert [label for label, _, _ in fig.algorithms_at("edge only")] == ["edge-only", "srtf", "tiresias-l"]
    assert (fig.claimed_at("with cloud"), fig.claimed_at("edge only")) == ("edge-cloud", "edge-only")
    small = dataclasses.replace(
        fig,
        points=(
            ("with cloud", reproduce.preset_builder("edge-cloud", 12, 0.1)),
            ("edge only", reproduce.edge_only_builder(12, 0.1)),
        ),
    )
    run = reproduce.run_figure(small, [0, 1])
    labels = {p.label: {r.label for r in p.rows} for p in run.points}
    assert labels == {
        "with cloud": {"edge-cloud", "srtf", "tiresias-l", "batchsche"},
        "edge only": {"edge-only", "srtf", "tiresias-l"},
    }
    (edge,) = [p for p in run.points if p.label == "edge only"]
    assert all(r.metrics["completed"] == 12 for r in edge.rows)
    table = reproduce.markdown(run)
    assert "Frame: every fixed-size baseline" in table and "makespan median [95% CI]" in table
    assert "0.76" in table and "Fig. 9" in table


def test_the_edge_only_category_trains_no_worker_in_the_cloud():
    inst = reproduce.edge_only_builder(12, 0.1)(3)
    for algorithm, params in (("srtf", {}), ("tiresias-l", {}), ("edge-cloud", {"edge_only": True})):
        doc = api.run(inst, algorithm, params, seed=3)
        assert all(p["server"] != "cloud" for p in doc["placements"] if p["role"] == "worker"), algorithm
