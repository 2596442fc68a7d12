"""The result pages and their charts: the summary table's best marks, the Gantt chart (filters, window,
aggregate heat map, suspensions, the tab's URL state, the stored Gantt index) and the prices tab."""

import json

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse

from scheduling import api, presets, registry
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance
from scheduling.prices import matrix_at
from tests.webhelpers import PRICED, single_entries, upload_data
from webapp import charts, results_io, services
from webapp.models import Experiment
from webapp.runstore import encode_result

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")


@pytest.fixture
def client(auth_client):
    """Pages need a signed-in user (conftest ``auth_client``)."""
    return auth_client


def test_the_summary_marks_the_best_value_of_each_column(client, done_experiment):
    page = client.get(done_experiment.get_absolute_url())
    rows = page.context["metric_rows"]
    col = [k for k, _ in charts.METRIC_COLUMNS].index("avg_jct")
    values = [r.metrics["avg_jct"] for r in done_experiment.runs.all()]
    best = [row["cells"][col]["best"] for row in rows]
    assert best == [v == min(values) for v in values] and any(best)
    assert 'class="table metrics sortable"' in page.content.decode()
    assert f'data-sort="{min(values)}" class="best"' in page.content.decode()


def test_best_marks_follow_the_direction_of_the_metric():
    # as many completed jobs each: avg_jct compares (tests/test_web_completion_verdicts.py: else not)
    rows = [
        (1, "a", {}, {"avg_jct": 5.0, "completed": 3, "admitted": 3}),
        (2, "b", {}, {"avg_jct": 7.0, "completed": 3, "admitted": 4}),
    ]
    table = charts.summary_table(rows)
    jct = [k for k, _ in charts.METRIC_COLUMNS].index("avg_jct")
    admitted = [k for k, _ in charts.METRIC_COLUMNS].index("admitted")
    assert [r["cells"][jct]["best"] for r in table] == [True, False]
    assert [r["cells"][admitted]["best"] for r in table] == [False, True]


def test_a_column_whose_values_are_all_equal_has_no_best_mark():
    rows = [(1, "a", {}, {"total_utility": 1.5, "completed": 3}), (2, "b", {}, {"total_utility": 1.5, "completed": 4})]
    table = charts.summary_table(rows)
    utility = [k for k, _ in charts.METRIC_COLUMNS].index("total_utility")
    done = [k for k, _ in charts.METRIC_COLUMNS].index("completed")
    assert [r["cells"][utility]["best"] for r in table] == [False, False]
    assert [r["cells"][done]["best"] for r in table] == [False, True]


def test_utility_charts_only_where_utility_varies(client, done_experiment):
    # the tiny trace has no utility columns: every completed job earns the default 0.5
    page = client.get(done_experiment.get_absolute_url(), {"tab": "jct"})
    titles = [f["figure"]["layout"]["title"]["text"] for f in page.context["figures"]]
    assert "average JCT (slots)" in titles and not [t for t in titles if "utility" in t], titles
    runs = [
        (label, {"metrics": {"total_utility": sum(us)}, "jobs": [{"utility": u, "completion": 5} for u in us]})
        for label, us in (("a", [0.9, 0.2]), ("b", [0.5, 0.4]))
    ]
    assert [f["layout"]["title"]["text"] for f in charts.metric_bars(runs)] == ["total utility"]
    assert [t["name"] for t in charts.timeliness(runs)["data"]] == ["a", "b"]


def test_the_gantt_filters_window_and_aggregate_view(done_experiment):
    run = done_experiment.runs.get(algorithm="fifo")
    doc = services.load_result(run)
    full = charts.gantt(doc, "x")
    assert full["layout"]["meta"] == {"view": "bars", "segments": len(doc["placements"])}
    only = charts.gantt(doc, "x", job="j2")
    assert {t for tr in only["data"] if tr["name"] != "suspended" for t in tr.get("text", [])} == {"j2"}
    window = charts.gantt(doc, "x", t0=5, t1=50)
    assert window["layout"]["xaxis"]["range"] == [5, 50]
    kept = charts.filter_placements(doc["placements"], t0=5, t1=50)
    assert all(p["end"] > 5 and p["start"] < 50 for p in kept)
    agg = charts.gantt(doc, "x", max_bars=1)
    assert agg["layout"]["meta"]["view"] == "aggregate" and agg["data"][0]["type"] == "heatmap"
    # the heat map holds the busy GPU-slots of the bars it replaces
    width = agg["data"][0]["x"][1] - agg["data"][0]["x"][0]
    gpu_slots = sum(p["count"] * p["demand"].get("gpu", 0) * (p["end"] - p["start"]) for p in doc["placements"])
    assert sum(map(sum, agg["data"][0]["z"])) * width == pytest.approx(gpu_slots, rel=1e-3)


def test_suspended_intervals_are_the_gaps_between_a_jobs_placements():
    doc = {
        "placements": [
            {"job_id": "a", "server": "s1", "start": 0, "end": 4},
            {"job_id": "a", "server": "s2", "start": 6, "end": 9},
            {"job_id": "a", "server": "s2", "start": 9, "end": 12},
            {"job_id": "b", "server": "s1", "start": 0, "end": 3},
            {"job_id": "b", "server": "s2", "start": 1, "end": 8},
            {"job_id": "b", "server": "s1", "start": 10, "end": 11},
        ]
    }
    assert charts.suspensions(doc) == [("a", "s1", 4, 6), ("b", "s2", 8, 10)]


def test_the_gantt_tab_keeps_its_state_in_the_url(client, done_experiment):
    run = done_experiment.runs.get(algorithm="drf")
    page = client.get(done_experiment.get_absolute_url(), {"tab": "gantt", "run": run.pk, "job": "j1", "t0": "2"})
    html = page.content.decode()
    assert 'name="job" value="j1"' in html and 'name="t0" value="2"' in html
    figure = page.context["figures"][0]["figure"]
    assert figure["layout"]["xaxis"]["range"][0] == 2
    assert {t for tr in figure["data"] for t in tr.get("text", [])} <= {"j1"}


@pytest.mark.parametrize(
    ("t0", "t1", "message"),
    [
        ("abc", "", "From slot 'abc' is not a number"),
        ("", "-5", "to -5 is not a slot"),
        ("abc", "-5", "From slot 'abc' is not a number; to -5 is not a slot (a number >= 0): showing"),
        ("8", "3", "The window ends (slot 3) before it starts (slot 8)"),
    ],
)
def test_a_bad_gantt_window_is_named_and_the_whole_time_shown(client, done_experiment, t0, t1, message):
    page = client.get(done_experiment.get_absolute_url(), {"tab": "gantt", "t0": t0, "t1": t1})
    assert message in page.context["window_error"] and "showing the whole time" in page.context["window_error"]
    assert 'id="window-error"' in page.content.decode()
    figure = page.context["figures"][0]["figure"]
    assert "range" not in figure["layout"]["xaxis"] and any(tr.get("text") for tr in figure["data"])


def test_the_prices_tab_draws_a_recorded_price_log(
    client, tiny_cluster, tiny_trace, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setitem(registry.REGISTRY, "priced", PRICED)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "priced"]))
    exp = Experiment.objects.get()
    priced = exp.runs.get(algorithm="priced")
    assert priced.status == "done", priced.error
    prices = services.load_result(priced)["prices"]
    page = client.get(exp.get_absolute_url(), {"tab": "prices"})
    html = page.content.decode()
    assert 'id="prices-data"' in html and 'id="price-decision"' in html
    assert f'max="{len(prices["decisions"]) - 1}"' in html
    assert 'id="price-past"' in html  # past slots keep their prices (schema /3 only)
    titles = [f["figure"]["layout"]["title"]["text"] for f in page.context["figures"]]
    assert titles[0] == "gpu: price (p) of the current and upcoming slots, mean and max over servers"
    assert len(titles) == 2 and page.context["figures"][0]["figure"]["layout"]["yaxis"]["title"]["text"] == "price (p)"
    mean = page.context["figures"][0]["figure"]["data"][0]["y"]
    assert mean == prices["summary"]["gpu"]["mean"]
    assert matrix_at(prices, len(prices["decisions"]) - 1, "gpu").max() > 0
    # a run without prices: the tab says so
    fifo_only = client.get(exp.get_absolute_url(), {"tab": "prices", "run": exp.runs.get(algorithm="fifo").pk})
    assert fifo_only.context["run"] == priced.pk  # only priced runs can be chosen
    # a result stored before the runs of slots (schema mlsched.prices/1, single entries) still shows
    assert prices["schema"] == "mlsched.prices/3"
    older = single_entries(prices)
    stored = encode_result({**services.load_result(priced), "prices": older})
    default_storage.delete(priced.result.name)
    assert default_storage.save(priced.result.name, ContentFile(stored)) == priced.result.name
    page = client.get(exp.get_absolute_url(), {"tab": "prices"})
    assert page.context["run"] == priced.pk and page.context["prices"]["schema"] == "mlsched.prices/1"
    assert page.context["figures"][0]["figure"]["data"][0]["y"] == mean
    assert 'id="price-past"' not in page.content.decode()


def test_the_prices_tab_opens_only_the_shown_runs_result(
    client, tiny_cluster, tiny_trace, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setitem(registry.REGISTRY, "priced", PRICED)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "srtf", "priced"]))
    exp = Experiment.objects.get()
    assert {r.status for r in exp.runs.all()} == {"done"}
    opened = []
    load = services.load_result
    monkeypatch.setattr(results_io, "load_result", lambda run: opened.append(run.algorithm) or load(run))
    page = client.get(exp.get_absolute_url(), {"tab": "prices"})
    assert opened == ["priced"] and page.context["prices"]["schema"] == "mlsched.prices/3"
    assert [label for _, label in page.context["priced_runs"]] == ["priced"]
    # an experiment whose algorithms write no price log: no result is opened
    opened.clear()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "srtf"]))
    plain = Experiment.objects.exclude(pk=exp.pk).get()
    page = client.get(plain.get_absolute_url(), {"tab": "prices"})
    assert opened == [] and not page.context.get("prices")
    assert "No run of this experiment recorded prices" in page.content.decode()


def test_the_price_matrix_rebuilt_by_matrix_at_equals_the_recorded_prices():
    from tests.webhelpers import Priced

    p = Priced.__new__(Priced)
    from scheduling.prices import PriceLog

    p.log = PriceLog(["gpu", "cpu"], ["s0", "s1", "s2"], slots=8, label="p")
    p.prices = np.zeros(p.log.shape)
    snapshots = []
    for t in range(4):
        p.prices[0, t % 3, t:] += 1.5
        p.log.record(t, f"j{t}", True, p.prices)
        snapshots.append(p.prices[0].copy())
    doc = p.log.to_dict()
    for k, snap in enumerate(snapshots):
        assert np.array_equal(matrix_at(doc, k, "gpu"), snap)


def test_price_marks_say_what_a_decision_not_admitted_means():
    files = presets.build("zhou-ps", jobs=6, seed=2, size=0.1)
    cluster = parse_cluster(files.cluster)
    doc = api.run(Instance(cluster, parse_trace(files.trace, cluster, files.trace_name)), "zhou")
    assert doc["prices"]["declined"] == "not scheduled in this sub-round"
    marks = charts.price_lines(doc["prices"])[0]["data"][2]
    assert marks["name"] == "not scheduled in this sub-round" and marks["x"]  # carried over, not rejected
    older = {k: v for k, v in doc["prices"].items() if k != "declined"}  # results from before the field
    assert charts.price_lines(older)[0]["data"][2]["name"] == "rejected"


def test_run_legends_stand_right_of_the_plot_one_entry_per_run(client, done_experiment):
    page = client.get(done_experiment.get_absolute_url(), {"tab": "time"})
    figures = [f["figure"] for f in page.context["figures"]]
    labels = [label for _, label in page.context["done_runs"]]
    for figure in figures:  # under the plot, a horizontal legend covers the x-axis title
        assert figure["layout"]["legend"]["orientation"] == "v" and figure["layout"]["legend"]["x"] > 1
    events = next(f for f in figures if f["layout"]["title"]["text"].startswith("Admitted"))
    assert [t["name"] for t in events["data"] if t.get("showlegend", True)] == labels  # completed: same entry


def test_log_axes_are_labelled_with_their_magnitude():
    # plotly's own labels on a log axis are bare digits between the powers of ten ("2 3 ... 10 2 3")
    runs = [("a", {"jobs": [{"job_id": f"j{c}", "arrival": 0, "completion": c} for c in (3, 40, 95)]})]
    cdf, box = charts.jct_cdf(runs)["layout"]["xaxis"], charts.jct_box(runs)["layout"]["yaxis"]
    for axis in (cdf, box):
        assert axis["type"] == "log" and axis["tickvals"] == [1, 2, 5, 10, 20, 50, 100, 200, 500]
    wide = charts.log_axis("JCT (slots)", [3, 250_000])  # beyond three decades: the powers of ten only
    assert wide["tickvals"] == [1, 10, 100, 1000, 10_000, 100_000, 1_000_000]
    assert "tickvals" not in charts.log_axis("JCT (slots)", [])


def test_the_gantt_index_gives_the_same_charts_as_the_result_document(done_experiment):
    from django.core.files.storage import default_storage

    from webapp.runstore import gantt_doc, gantt_index, index_name

    for run in done_experiment.runs.all():
        doc = services.load_result(run)
        assert default_storage.exists(index_name(run.result.name))
        index = services.load_gantt_index(run)
        assert index == json.loads(json.dumps(gantt_index(doc)))
        assert gantt_doc(index)["placements"] == [{**p, "demand": {k: v for k, v in p["demand"].items() if k == "gpu"}}
                                                  for p in doc["placements"]]  # fmt: skip
        for kwargs in ({}, {"job": "j2"}, {"server": "node-1"}, {"t0": 3, "t1": 9}, {"max_bars": 1},
                       {"max_bars": 2, "t0": 1}, {"job": "j1", "max_bars": 1}):  # fmt: skip
            assert charts.gantt_from_index(index, "x", **kwargs) == charts.gantt(doc, "x", **kwargs), kwargs


def test_the_aggregate_heat_map_matches_a_direct_per_bin_sum():
    rng = np.random.default_rng(4)
    placements = []
    for i in range(300):
        start = int(rng.integers(0, 500))
        placements.append({"job_id": f"j{i}", "server": f"s{rng.integers(0, 5)}", "role": "worker", "type": "w",
                           "count": int(rng.integers(1, 4)), "start": start, "end": start + int(rng.integers(1, 120)),
                           "demand": {"gpu": 1.0} if i % 7 else {"cpu": 2.0}})  # fmt: skip
    doc = {"servers": [{"id": f"s{k}"} for k in range(5)], "slot_seconds": 60, "placements": placements}
    for t0, t1 in ((None, None), (100, 260)):
        fig = charts.gantt(doc, "x", t0=t0, t1=t1, max_bars=1)
        heat = fig["data"][0]
        lo = t0 if t0 is not None else min(p["start"] for p in placements)
        hi = t1 if t1 is not None else max(p["end"] for p in placements)
        width = (hi - lo) / charts.AGGREGATE_BINS
        for r, sid in enumerate(heat["y"]):
            for b in (0, 7, 150, 399):
                a, z = lo + b * width, lo + (b + 1) * width
                busy = [
                    p["count"] * p["demand"].get("gpu", 0) * max(0.0, min(p["end"], z, hi) - max(p["start"], a, lo))
                    for p in placements
                    if p["server"] == sid
                ]
                expect = sum(busy) / width
                assert heat["z"][r][b] == pytest.approx(expect, abs=2e-3)
