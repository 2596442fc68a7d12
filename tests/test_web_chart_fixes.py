"""Charts read as they should: a repeated experiment's time series as one band per variant in one
colour, bars with a y-axis title, an all-zero metric on a 0-based axis that says so."""

import numpy as np
import pytest
from django.urls import reverse

from tests.webhelpers import upload_data
from webapp import charts
from webapp.charts.bands import GRID, events_bands, utilization_bands
from webapp.models import Experiment

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]


@pytest.fixture
def client(auth_client):
    return auth_client


def doc(arrivals, completions, util):
    jobs = [{"arrival": a, "completion": c, "admitted": True} for a, c in zip(arrivals, completions, strict=True)]
    return {"jobs": jobs, "_suspension_starts": [], "_utilization": {"gpu": {"x": [0, 5, 10], "y": util, "width": 1}}}


def test_the_repetitions_of_a_variant_are_one_band_around_their_median_in_one_colour():
    groups = [
        ("fifo", [doc([0, 1], [4, 9], [0.2, 0.4, 0.0]), doc([0, 2], [5, 8], [0.6, 0.8, 0.0]),
                  doc([0, 3], [6, 7], [0.4, 1.0, 0.0])]),
        ("srtf", [doc([0, 1], [3, 6], [1.0, 0.5, 0.0]), doc([0, 1], [2, 6], [0.5, 0.5, 0.0])]),
    ]  # fmt: skip
    (gpu,) = utilization_bands(groups, None)
    fifo = [t for t in gpu["data"] if t["legendgroup"] == "fifo"]
    srtf = [t for t in gpu["data"] if t["legendgroup"] == "srtf"]
    assert len(fifo) == len(srtf) == 3  # lowest, highest (filled), median: not a line per run
    assert len({t["line"]["color"] for t in fifo}) == 1 and fifo[0]["line"]["color"] != srtf[0]["line"]["color"]
    assert [t["name"] for t in gpu["data"] if t["showlegend"]] == ["fifo (median of 3)", "srtf (median of 2)"]
    x = np.array(fifo[0]["x"])
    assert len(x) == GRID
    at = int(np.searchsorted(x, 6))  # a grid slot in [5, 10): runs at 40, 80 and 100 %
    assert (fifo[0]["y"][at], fifo[2]["y"][at], fifo[1]["y"][at]) == (40.0, 80.0, 100.0)
    assert fifo[1]["fill"] == "tonexty"

    admitted, _ = events_bands(groups, None)
    completed = next(t for t in admitted["data"] if t["name"] == "fifo (completed) (median of 3)")
    x = np.array(completed["x"])
    at = [int(np.searchsorted(x, t)) for t in (6.5, 8.5)]  # completions 4, 9 / 5, 8 / 6, 7
    assert [completed["y"][i] for i in at] == [1, 2]  # the median run's count


def test_a_repeated_experiments_utilisation_tab_draws_a_band_per_algorithm(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "srtf"], repeat="seeds", repeat_seeds="4")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("experiment-new"), data)
    exp = Experiment.objects.get()
    figures = client.get(exp.get_absolute_url(), {"tab": "time"}).context["figures"]
    for chart in figures:
        legend = [t["name"] for t in chart["figure"]["data"] if t.get("showlegend", True)]
        assert legend == ["fifo (median of 4)", "srtf (median of 4)"], legend  # 8 runs, 2 entries
        assert len({t["line"]["color"] for t in chart["figure"]["data"]}) == 2


def test_bar_charts_title_their_y_axis_and_an_all_zero_metric_says_so_on_a_0_based_axis():
    runs = [(name, {"metrics": {"avg_jct": jct, "avg_wait": 0, "total_jct": 1}, "jobs": []})
            for name, jct in (("fifo", 4.5), ("srtf", 3.0))]  # fmt: skip
    bars = {f["layout"]["title"]["text"]: f for f in charts.metric_bars(runs)}
    jct = bars["average JCT (slots)"]
    assert jct["layout"]["yaxis"]["title"]["text"] == "average JCT (slots)"
    wait = bars["average wait before the first start (slots)"]
    assert wait["layout"]["yaxis"]["range"] == [0, 1]  # not plotly's -1..1 around nothing
    assert wait["layout"]["annotations"][0]["text"] == "0 for every run"


def luminance(hex_colour):
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_the_aggregate_gantt_heat_map_draws_idle_pale_and_busy_dark():
    placements = [{"job_id": f"j{i}", "server": "s0", "role": "worker", "type": "w", "count": 1, "start": i,
                   "end": i + 50, "demand": {"gpu": 1.0}} for i in range(20)]  # fmt: skip
    doc = {"servers": [{"id": "s0"}, {"id": "s1"}], "slot_seconds": 60, "placements": placements}
    heat = charts.gantt(doc, "x", max_bars=1)["data"][0]
    assert heat["type"] == "heatmap" and heat["zmin"] == 0 and not heat.get("reversescale")
    scale = heat["colorscale"]
    assert isinstance(scale, list)  # never plotly.js's named "Blues", which runs dark to pale
    assert luminance(scale[0][1]) > 200 > 80 > luminance(scale[-1][1])


RIGID_TRACE = "job_id,arrival,gpus,duration\nr1,0,2,3\nr2,1,1,2\nr3,2,4,1\n"


def test_runs_on_a_rigid_trace_do_not_list_the_elastic_worker_parameters(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("experiment-new"), upload_data(tiny_cluster, RIGID_TRACE, algorithms=["fifo"]))
    rigid = Experiment.objects.get()
    page = client.get(rigid.get_absolute_url()).content.decode()
    runs = page.split('id="runs"')[1].split("</section>")[0]
    assert "workers_max=" not in runs and "workers_min=" not in runs and "ps=" not in runs
    assert "backfill=False" in runs  # fifo's own parameter still applies
    assert "Every job of this trace is rigid" in runs and "workers_max" in runs.split('id="rigid-note"')[1]

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("experiment-new"), upload_data(tiny_cluster, tiny_trace, algorithms=["fifo"]))
    elastic = Experiment.objects.exclude(pk=rigid.pk).get()
    page = client.get(elastic.get_absolute_url()).content.decode()
    assert "workers_max=30" in page and 'id="rigid-note"' not in page


def test_a_running_run_says_about_how_long_it_has_left_as_the_cli_does(client, user, tiny_cluster, tiny_trace):
    from datetime import timedelta

    from django.utils import timezone

    from webapp.models import Run
    from webapp.timeleft import left_text, seconds_left

    now = timezone.now()
    assert seconds_left(0.25, now - timedelta(seconds=60), now) == 180  # tqdm: elapsed x (1 - p) / p
    assert seconds_left(0.005, now - timedelta(seconds=60), now) is None  # too early to tell
    assert [left_text(s) for s in (40, 180, 9000, None)] == ["about 40 s left", "about 3 min left",
                                                             "about 2.5 h left", ""]  # fmt: skip
    exp = Experiment.objects.create(name="x", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                    trace_text=tiny_trace, owner=user)  # fmt: skip
    run = Run.objects.create(experiment=exp, algorithm="fifo", params={}, status=Run.Status.RUNNING, progress=0.5,
                             started=now - timedelta(seconds=120))  # fmt: skip
    status = client.get(reverse("experiment-status", args=[exp.pk])).json()["runs"][0]
    assert 119 <= status["seconds_left"] <= 125 and status["time_left"] == "about 2 min left"
    page = client.get(exp.get_absolute_url()).content.decode()
    assert f'data-run="{run.pk}"' in page and "about 2 min left</span>" in page
