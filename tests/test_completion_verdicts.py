"""Metrics over completed jobs are compared only at equal completed counts (DESIGN section 9), and
their censored variants count an unfinished job as completing at the end of its run.

The constructed case: one GPU, a 10-slot job ``a`` at slot 0 and 2-slot jobs ``b`` (slot 1) and
``c`` (slot 2), every run ended at slot 4. FIFO runs ``a`` and completes nothing; SRTF preempts
``a`` for ``b`` (done at 3) and starts ``c``. FIFO's total JCT (0) "beats" SRTF's (2) only because
its jobs are dropped from the sum.
"""

from __future__ import annotations

import csv
import dataclasses

import pytest

from scheduling import api, repeat, reproduce, stats
from scheduling.cli import main
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance
from scheduling.validator import validate

CLUSTER = {
    "slot_seconds": 60,
    "resources": ["gpu"],
    "servers": [{"id": "s", "capacity": {"gpu": 1}}],
    "worker_types": [{"id": "w", "demand": {"gpu": 1}}],
}
TRACE = "job_id,arrival,gpus,duration\na,0,1,600\nb,1,1,120\nc,2,1,120\n"
HORIZON = 4
SEEDS = range(6)


def tiny() -> Instance:
    cluster = cluster_from_dict(CLUSTER)
    return Instance(cluster, parse_trace(TRACE, cluster, "trace.csv", "csv"))


def reports_at_horizon() -> dict[str, stats.MetricReport]:
    rows = repeat.run(repeat.instance_cases(tiny(), SEEDS), [("fifo", "fifo", {}), ("srtf", "srtf", {})], HORIZON)
    return {r.metric: r for r in repeat.reports(rows, "fifo")}


# ---- censored metrics -----------------------------------------------------------------------


def test_censored_metrics_count_each_unfinished_job_as_completing_at_the_horizon():
    fifo = api.run(tiny(), "fifo", {}, 0, HORIZON)["metrics"]
    # a ran from 0, b and c never started: completions 4, 4, 4 for arrivals 0, 1, 2
    assert fifo["completed"] == 0 and fifo["total_jct"] == 0.0 and fifo["avg_jct"] is None
    assert fifo["total_jct_censored"] == 4 + 3 + 2 and fifo["avg_jct_censored"] == 3.0
    assert fifo["total_weighted_completion_censored"] == 12.0 and fifo["total_weighted_jct_censored"] == 9.0
    assert fifo["avg_wait_censored"] == pytest.approx((0 + 3 + 2) / 3) and fifo["makespan_censored"] == 4
    srtf = api.run(tiny(), "srtf", {}, 0, HORIZON)["metrics"]
    # b done at 3 (JCT 2); a and c unfinished at 4; c started at 3 (waited 1)
    assert srtf["completed"] == 1 and srtf["total_jct"] == 2.0
    assert srtf["total_jct_censored"] == 4 + 2 + 2 and srtf["total_weighted_completion_censored"] == 4 + 3 + 4
    assert srtf["avg_wait_censored"] == pytest.approx(1 / 3) and srtf["makespan_censored"] == 4


def test_censored_metrics_equal_the_plain_ones_when_every_job_completes():
    m = api.run(tiny(), "srtf", {}, 0)["metrics"]
    assert m["completed"] == 3
    for name in ("avg_jct", "total_jct", "total_weighted_completion", "total_weighted_jct", "avg_wait", "makespan"):
        assert m[f"{name}_censored"] == m[name]


def test_the_validator_refuses_a_tampered_censored_metric_and_a_horizon_before_the_last_event():
    doc = api.run(tiny(), "srtf", {}, 0, HORIZON)
    assert validate(tiny(), doc) == []
    tampered = {**doc, "metrics": {**doc["metrics"], "total_weighted_completion_censored": 10.0}}
    assert validate(tiny(), tampered) == ["metric total_weighted_completion_censored: reported 10.0, recomputed 11.0"]
    older = {**doc, "metrics": {k: v for k, v in doc["metrics"].items() if not k.endswith("_censored")}}
    assert validate(tiny(), older) == []  # a result written before the censored metrics existed
    early = {**doc, "horizon": 3}  # c ran in [3, 4)
    assert "horizon 3: the run has a placement, work or completion until slot 4" in validate(tiny(), early)


# ---- verdicts -------------------------------------------------------------------------------


def test_a_sum_over_completed_jobs_is_not_compared_when_one_algorithm_drops_the_jobs():
    r = reports_at_horizon()
    p = r["total_jct"].paired["srtf"]
    assert p.verdict == "not comparable: srtf completed 6 of 18, fifo 0 of 18 over 6 pairs"
    assert (p.n, p.not_comparable, p.wins + p.ties + p.losses) == (0, 6, 0)
    assert r["total_jct"].best is None and "not comparable" in r["total_jct"].best_note
    # the censored variant counts every job and is compared: srtf 8 against fifo 9 on every seed
    c = r["total_jct_censored"].paired["srtf"]
    assert (c.verdict, c.wins, c.not_comparable, c.median_diff) == ("better", 6, 0, -1.0)
    assert r["completed"].paired["srtf"].verdict == "better"  # counts themselves are compared


def literal(counts_b: dict[str, int]) -> stats.MetricReport:
    """A against B on 10 keys, A always 1 below B; both complete 30 of 30 except B where given."""
    keys = [f"s{i}" for i in range(10)]
    table = {"A": {k: 100.0 + i for i, k in enumerate(keys)}, "B": {k: 101.0 + i for i, k in enumerate(keys)}}
    done = {"A": dict.fromkeys(keys, (30, 30)), "B": {k: (counts_b.get(k, 30), 30) for k in keys}}
    return stats.compare(table, reference="B", metric="total_weighted_completion", completions=done)


def test_pairs_with_unequal_completed_counts_are_left_out_counted_and_named():
    p = literal({"s7": 29, "s8": 28, "s9": 29}).paired["A"]
    assert (p.n, p.not_comparable, p.wins) == (7, 3, 7) and p.verdict == "better"
    assert p.note == (
        "3 of 10 pairs not comparable (s7, s8, s9: A completed 90 of 90, B 86 of 90 over 3 pairs): "
        "left out of the differences, ratios and W/T/L"
    )
    assert literal({}).paired["A"].not_comparable == 0 and literal({}).paired["A"].n == 10


def test_one_pair_with_unequal_counts_reads_as_the_two_counts():
    table = {"A": {"w": 5.0}, "B": {"w": 9.0}}
    r = stats.compare(table, reference="B", metric="avg_jct", completions={"A": {"w": (36, 40)}, "B": {"w": (38, 40)}})
    assert r.paired["A"].verdict == "not comparable: A completed 36 of 40, B 38 of 40"


def test_without_counts_or_on_other_metrics_every_pair_is_compared():
    table = {"A": {"w": 5.0}, "B": {"w": 9.0}}
    counts = {"A": {"w": (36, 40)}, "B": {"w": (38, 40)}}
    assert stats.compare(table, reference="B", metric="avg_jct").paired["A"].n == 1
    assert stats.compare(table, reference="B", metric="total_utility", completions=counts).paired["A"].n == 1
    assert stats.compare(table, reference="B", metric="avg_jct_censored", completions=counts).paired["A"].n == 1


def test_the_best_needs_comparable_pairs_against_every_other_algorithm():
    keys = [f"s{i}" for i in range(8)]
    table = {
        "A": dict.fromkeys(keys, 10.0),
        "B": dict.fromkeys(keys, 20.0),
        "C": dict.fromkeys(keys, 30.0),
    }
    done = {"A": dict.fromkeys(keys, (9, 10)), "B": dict.fromkeys(keys, (9, 10)), "C": dict.fromkeys(keys, (10, 10))}
    r = stats.compare(table, reference="B", metric="avg_jct", completions=done)
    assert r.paired["A"].verdict == "better"  # A and B completed as many
    assert r.best is None
    assert r.best_note == (
        "A has the best median but is not separated from C "
        "(not comparable: A completed 72 of 80, C 80 of 80 over 8 pairs)"
    )


# ---- the command line -------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path):
    import json

    (tmp_path / "c.json").write_text(json.dumps(CLUSTER))
    (tmp_path / "t.csv").write_text(TRACE)
    return ["--cluster", str(tmp_path / "c.json"), "--trace", str(tmp_path / "t.csv")]


def test_compare_says_not_comparable_and_writes_the_censored_metrics(files, tmp_path, capsys):
    out = tmp_path / "cmp"
    args = ["compare", *files, "--algorithms", "fifo,srtf", "--horizon", str(HORIZON), "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "not comparable: fifo completed 0 of 3, srtf completed 1 of 3; avg_jct, avg_wait, makespan," in printed
    with (out / "summary.csv").open(newline="") as f:
        rows = {r["algorithm"]: r for r in csv.DictReader(f)}
    assert (rows["fifo"]["total_jct_censored"], rows["srtf"]["total_jct_censored"]) == ("9.0", "8.0")
    assert rows["fifo"]["jobs"] == "3"


def test_compare_over_seeds_shows_the_verdict_and_counts_the_pairs_left_out(files, tmp_path, capsys):
    out = tmp_path / "rep"
    args = ["compare", *files, "--algorithms", "fifo,srtf", "--seeds", "0-5", "--horizon", str(HORIZON)]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    block = printed.split("\n\ntotal_jct ", 1)[1].split("\n\n", 1)[0]
    assert "pairs compared at equal completed counts" in block
    assert "not comparable: srtf completed 6 of 18, fifo 0 of 18 over 6 pairs" in block
    with (out / "stats.csv").open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["algorithm"] == "srtf"]
    by_metric = {r["metric"]: r for r in rows}
    assert by_metric["total_jct"]["not_comparable"] == "6" and by_metric["total_jct"]["pairs"] == "0"
    assert by_metric["total_jct_censored"]["verdict"] == "better"


def horizon_figure() -> reproduce.Figure:
    return reproduce.Figure(
        name="tiny-horizon",
        paper="A constructed case",
        figure="Fig. 0",
        title="Total JCT when FIFO drops every job",
        setting="one GPU, three jobs, runs ended at slot 4",
        metric="total_jct",
        scale=1.0,
        unit="slots",
        algorithms=(("fifo", "fifo", {}), ("srtf", "srtf", {})),
        reference="fifo",
        claimed_best="fifo",
        points=(("3 jobs", lambda seed: tiny()),),
        x_label="jobs",
        paper_claim="FIFO has the lowest total JCT.",
        default_seeds=6,
        horizon=HORIZON,
    )


def test_reproduce_tables_say_not_comparable_and_add_the_censored_comparison(tmp_path, capsys, monkeypatch):
    fig = horizon_figure()
    monkeypatch.setitem(reproduce.FIGURES, fig.name, fig)
    assert main(["reproduce", fig.name, "--out", str(tmp_path / "fig")]) == 0
    table = capsys.readouterr().out
    assert (
        "| srtf | 2 [2, 2] | 2 [2, 2] | - no CI | - no CI | 0/0/0 | not comparable: srtf completed 6 of 18, " in table
    )
    assert (
        "Claim holds across seeds: no: fifo has the best median but is not separated from srtf (not comparable" in table
    )
    assert "total_jct_censored counts every job" in table
    assert "| **srtf** | 8 [8, 8] | 8 [8, 8] | -1 [-1, -1] | 0.8889 [0.8889, 0.8889] | 6/0/0 | better |  |" in table
    with (tmp_path / "fig" / "summary.csv").open(newline="") as f:
        rows = [(r["metric"], r["algorithm"], r["not_comparable"], r["claim_holds"]) for r in csv.DictReader(f)]
    assert ("total_jct", "srtf", "6", "no") in rows and ("total_jct_censored", "srtf", "0", "") in rows


def test_a_figure_of_a_metric_over_every_job_has_no_censored_table():
    fig = dataclasses.replace(horizon_figure(), metric="completed", horizon=None)
    rows = {"3 jobs": repeat.run([reproduce.case(fig, "3 jobs", 0)], fig.algorithms)}
    run = reproduce.assemble(fig, [0], rows)
    assert run.points[0].censored is None and "_censored" not in reproduce.markdown(run)
