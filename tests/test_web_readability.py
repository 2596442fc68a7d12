"""Readability of the charts: distinct colours past ten runs, legends that fit, flat sweep lines that
are not zoomed into noise (nor have their tick labels cut), a note when a swept parameter changed
nothing, and a price page that opens on its last decision."""

import pytest
from django.urls import reverse

from scheduling import registry
from tests.webhelpers import PRICED, upload_data
from webapp import charts
from webapp.charts.sweeps import unchanged
from webapp.models import Experiment

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]


@pytest.fixture
def client(auth_client):
    return auth_client


def run(k: int) -> tuple[str, dict]:
    jobs = [{"job_id": f"j{i}", "arrival": 0, "completion": i + k + 1, "admitted": True, "utility": 0.5}
            for i in range(5)]  # fmt: skip
    return f"run-{k}", {"jobs": jobs, "metrics": {}}


def test_twenty_one_runs_get_twenty_one_colours_and_a_legend_tall_enough_for_them():
    cdf = charts.jct_cdf([run(k) for k in range(21)])
    colours = [trace["line"]["color"] for trace in cdf["data"]]
    assert len(set(colours)) == 21
    assert cdf["layout"]["height"] >= 21 * 20


def test_a_flat_sweep_metric_keeps_a_padded_range_and_whole_tick_labels():
    points = [("zhou", f, {"total_jct": 7_420_199, "avg_jct": 100.0 + f}) for f in (0.5, 1, 2, 4)]
    figures = {f["layout"]["title"]["text"]: f for f in charts.sweep_charts("F", points)}
    flat = figures["total JCT (slots) against F"]["layout"]["yaxis"]
    assert flat["range"] == pytest.approx([7_420_199 * 0.9, 7_420_199 * 1.1]) and flat["automargin"] is True
    assert "range" not in figures["average JCT (slots) against F"]["layout"]["yaxis"]


def test_a_sweep_whose_parameter_changed_no_schedule_gets_a_note():
    same = {"avg_jct": 10.0, "completed": 3}
    points = [("zhou", f, same) for f in (0.5, 1, 2)] + [("fifo", f, {"avg_jct": f, "completed": 3}) for f in (1, 2)]
    assert unchanged("F", points) == [
        "zhou: F = 0.5, 1, 2 all gave the same metrics; the parameter changed no schedule here."
    ]


def test_the_prices_tab_opens_on_the_last_decision(
    client, tiny_cluster, tiny_trace, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setitem(registry.REGISTRY, "priced", PRICED)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("experiment-new"), upload_data(tiny_cluster, tiny_trace, algorithms=["priced"]))
    exp = Experiment.objects.get()
    html = client.get(exp.get_absolute_url(), {"tab": "prices"}).content.decode()
    slider = html.split('id="price-decision"')[1].split(">")[0]
    last = slider.split('max="')[1].split('"')[0]
    assert int(last) > 0 and f'value="{last}"' in slider
    html = client.get(exp.get_absolute_url(), {"tab": "prices", "decision": "0"}).content.decode()
    assert 'value="0"' in html.split('id="price-decision"')[1].split(">")[0]  # a shared URL's decision is kept


def test_time_axes_say_what_a_slot_is_in_seconds_and_hours_and_the_scatter_offers_a_log_scale():
    runs = [run(0), run(1)]
    for _, doc in runs:
        doc.update(slot_seconds=60, placements=[], servers=[])
    cdf = charts.jct_cdf(runs)
    assert "1 slot = 60 s; 1,000 slots = 16.7 h" in cdf["layout"]["xaxis"]["title"]["text"]
    events = charts.events_over_time(runs)[0]
    assert "16.7 h" in events["layout"]["xaxis"]["title"]["text"]
    buttons = charts.jct_scatter(runs[0], runs[1])["layout"]["updatemenus"][0]["buttons"]
    assert [b["label"] for b in buttons] == ["linear", "log"]


def test_the_job_filter_matches_a_whole_job_id_or_a_pattern_never_a_part_of_an_id():
    placements = [{"job_id": j, "server": "s", "role": "worker", "type": "w", "count": 1, "start": 0, "end": 1}
                  for j in ("philly-1", "philly-10", "philly-100", "other")]  # fmt: skip
    assert [p["job_id"] for p in charts.filter_placements(placements, job="philly-1")] == ["philly-1"]
    assert [p["job_id"] for p in charts.filter_placements(placements, job="philly-1*")] == [
        "philly-1", "philly-10", "philly-100"
    ]  # fmt: skip


def test_also_run_variants_that_gave_the_same_metrics_get_a_note():
    from webapp.services import same_variants

    runs = [
        ("fifo", "fifo", {"avg_jct": 3.0}),
        ("fifo", "fifo backfill=true", {"avg_jct": 3.0}),
        ("drf", "drf", {"avg_jct": 4.0}),
        ("drf", "drf fixed=true", {"avg_jct": 5.0}),
        ("srtf", "srtf", {}),
    ]
    assert same_variants(runs) == [
        "fifo, fifo backfill=true gave the same metrics: their parameters changed no schedule here."
    ]


def test_the_summary_tab_shows_the_note_of_variants_that_changed_nothing(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    # On the tiny trace (3 small jobs, room for all at once) backfilling has nothing to fill.
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["fifo"], extra_runs="fifo backfill=true")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("experiment-new"), data)
    exp = Experiment.objects.get()
    first, second = exp.runs.all()
    assert first.metrics == second.metrics
    assert "their parameters changed no schedule here" in client.get(exp.get_absolute_url()).content.decode()
