"""Repetitions through Django's test client: the form and the API store one run per variant and
repetition (seeds of a preset, algorithm seeds of an uploaded trace, windows of a trace), each run
sees its own instance, and bad repetitions are refused with the field at fault."""

import csv
import io
import json

import pytest
from django.test import Client
from django.urls import reverse

from scheduling import presets
from tests.webhelpers import upload_data
from webapp import repetitions, results_io, services
from webapp.models import ApiToken, Experiment
from workers.runs import load_instance

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")

WINDOW_TRACE = "job_id,arrival,epochs,chunks,minibatches,batch_time,ps_update\n" + "".join(
    f"j{i},{t},1,2,2,60,30\n" for i, t in enumerate((0, 1, 2, 5, 6, 7, 10, 11, 12, 12))
)


@pytest.fixture
def client(auth_client):
    """Pages need a signed-in user (conftest ``auth_client``)."""
    return auth_client


def preset_data(**extra):
    return {"source": "preset", "preset": "demo", "jobs": "6", "size": "1", "algorithms": ["fifo", "srtf"],
            "seed": "0", **extra}  # fmt: skip


def test_repeating_a_preset_over_seeds_runs_each_algorithm_on_each_seeds_trace(
    client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, preset_data(repeat="seeds", repeat_seeds="3-5"))
    assert response.status_code == 302, response.context["form"].errors
    exp = Experiment.objects.get()
    assert exp.repetition == {"over": "seeds", "seeds": [3, 4, 5], "trace_seeds": True}
    assert exp.name == "demo preset (6 jobs, 3 trace seeds, size 1)"
    runs = list(exp.runs.all())
    assert [(r.algorithm, r.repetition, r.seed, r.trace_seed) for r in runs] == [
        ("fifo", 0, 3, 3), ("srtf", 0, 3, 3), ("fifo", 1, 4, 4), ("srtf", 1, 4, 4), ("fifo", 2, 5, 5),
        ("srtf", 2, 5, 5),
    ]  # fmt: skip
    assert {r.status for r in runs} == {"done"}
    # each repetition simulated the preset's trace of its seed
    docs = {r.pk: services.load_result(r) for r in runs}
    for run in runs:
        files = presets.build("demo", jobs=6, seed=run.trace_seed)
        expected = load_instance(files.cluster, "cluster.json", files.trace, files.trace_name)
        assert docs[run.pk]["seed"] == run.seed
        assert [(j["job_id"], j["arrival"]) for j in docs[run.pk]["jobs"]] == [
            (j.job_id, j.arrival) for j in expected.jobs
        ]
    arrivals = {tuple(j["arrival"] for j in doc["jobs"]) for doc in docs.values()}
    assert len(arrivals) == 3  # the seeds drew different traces


def test_repeating_an_uploaded_trace_over_seeds_changes_only_the_algorithm_seed(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo"], repeat="seeds", repeat_seeds="1, 7")
        )
    exp = Experiment.objects.get()
    assert exp.repetition == {"over": "seeds", "seeds": [1, 7], "trace_seeds": False}
    assert [(r.seed, r.trace_seed, r.status) for r in exp.runs.all()] == [(1, None, "done"), (7, None, "done")]


def test_repeating_over_even_windows_gives_each_run_its_windows_jobs_from_slot_0(
    client, tiny_cluster, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            NEW,
            upload_data(tiny_cluster, WINDOW_TRACE, algorithms=["fifo", "srtf"], repeat="windows", repeat_windows="3"),
        )
    assert response.status_code == 302, response.context["form"].errors
    exp = Experiment.objects.get()
    # 10 jobs in arrival order: 4, 3 and 3 (as compare --windows 3 cuts them)
    assert exp.repetition == {"over": "windows", "cut_by": 3, "cut": "even", "windows": [[0, 6], [6, 11], [11, 13]]}
    runs = list(exp.runs.all())
    assert [(r.algorithm, r.repetition, r.window) for r in runs[:2]] == [("fifo", 0, [0, 6]), ("srtf", 0, [0, 6])]
    jobs = {r.window[0]: [(j["job_id"], j["arrival"]) for j in services.load_result(r)["jobs"]] for r in runs}
    assert jobs[0] == [("j0", 0), ("j1", 1), ("j2", 2), ("j3", 5)]
    assert jobs[6] == [("j4", 0), ("j5", 1), ("j6", 4)]
    assert jobs[11] == [("j7", 0), ("j8", 1), ("j9", 1)]


def test_chosen_windows_are_kept_as_given(client, tiny_cluster, django_capture_on_commit_callbacks):
    data = upload_data(tiny_cluster, WINDOW_TRACE, repeat="windows", repeat_windows="0:3, 5:13")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, data)
    exp = Experiment.objects.get()
    assert exp.repetition == {
        "over": "windows",
        "cut_by": [[0, 3], [5, 13]],
        "cut": "chosen",
        "windows": [[0, 3], [5, 13]],
    }
    assert [len(services.load_result(r)["jobs"]) for r in exp.runs.all()] == [3, 7]


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("repeat_seeds", "", "Give the seeds"),
        ("repeat_seeds", "1", "'1': repeat over 2 to 100 seeds"),
        ("repeat_seeds", "5-2", "'5-2': a range goes from a seed >= 0 up to a larger one"),
        ("repeat_seeds", "0-200", "201 seeds: repeat over 2 to 100 seeds"),
        ("repeat_seeds", "1, x", "'x' is not a seed or a range like 0-9"),
        ("repeat_seeds", "1, 1", "lists a seed twice"),
        ("repeat_windows", "11", "11 windows but the trace has 10 jobs"),
        ("repeat_windows", "1", "1 windows: cut the trace into 2 to 100 windows"),
        ("repeat_windows", "0:3, 20:30", "window 20:30 holds no job arrival"),
        ("repeat_windows", "3:1, 5:9", "'3:1': need 0 <= START < END"),
        ("repeat_windows", "a:b", "'a:b' is not START:END (whole slots)"),
    ],
)
def test_bad_repetitions_are_refused_on_their_field_and_nothing_is_stored(client, tiny_cluster, field, value, message):
    over = "seeds" if field == "repeat_seeds" else "windows"
    response = client.post(NEW, upload_data(tiny_cluster, WINDOW_TRACE, repeat=over, **{field: value}))
    assert response.status_code == 200
    assert message in " ".join(response.context["form"].errors.get(field, [])), response.context["form"].errors
    assert Experiment.objects.count() == 0


def test_algorithms_times_repetitions_beyond_the_run_cap_are_refused(client, tiny_cluster, tiny_trace):
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf"], repeat="seeds", repeat_seeds="61")
    response = client.post(NEW, data)
    assert (
        "122 runs (2 x 61 repetitions): an experiment may have at most 120"
        in response.context["form"].errors["__all__"]
    )


def test_a_worker_cuts_the_window_of_its_run_and_a_count_of_seeds_starts_at_0(tiny_cluster):
    chosen = load_instance(tiny_cluster, "cluster.json", WINDOW_TRACE, "trace.csv", windows=[[0, 3], [7, 13]], window=1)
    assert [(j.job_id, j.arrival) for j in chosen.jobs] == [("j5", 0), ("j6", 3), ("j7", 4), ("j8", 5), ("j9", 5)]
    even = load_instance(tiny_cluster, "cluster.json", WINDOW_TRACE, "trace.csv", windows=2, window=1)
    assert [(j.job_id, j.arrival) for j in even.jobs] == [("j5", 0), ("j6", 3), ("j7", 4), ("j8", 5), ("j9", 5)]
    assert repetitions.parse_seeds("10") == list(range(10)) and repetitions.parse_seeds("0-2, 7") == [0, 1, 2, 7]


def test_the_api_creates_a_repeated_experiment_and_returns_its_statistics(
    user, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    api = Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}")
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "srtf"], repeat="seeds", repeat_seeds="3")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/experiments/", data)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["repetition"] == {"over": "seeds", "seeds": [0, 1, 2], "trace_seeds": False}
    assert [(r["algorithm"], r["repetition"], r["seed"]) for r in body["runs"]][:3] == [
        ("fifo", 0, 0), ("srtf", 0, 0), ("fifo", 1, 1)
    ]  # fmt: skip
    stats = api.get(f"/api/experiments/{body['id']}/repetitions.json?reference=srtf").json()
    assert stats["variants"] == ["fifo", "srtf"] and stats["reference"] == "srtf"
    jct = stats["metrics"]["avg_jct"]
    assert jct["summaries"]["fifo"]["n"] == 3 and set(jct["paired"]) == {"fifo"}
    paired = jct["paired"]["fifo"]
    assert paired["wins"] + paired["ties"] + paired["losses"] == 3
    csv_text = api.get(f"/api/experiments/{body['id']}/repetitions.csv").content.decode()
    assert csv_text.splitlines()[0].startswith("variant,algorithm,params,repetition,")
    assert len(csv_text.splitlines()) == 7


@pytest.fixture
def repeated(client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks):
    """fifo, srtf and drf on the tiny inputs over 6 algorithm seeds, every run done; their avg_jct
    then set so that fifo is 10 slots below srtf on every seed, and drf within +-0.5 of fifo."""
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "srtf", "drf"], repeat="seeds", repeat_seeds="6")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, data)
    exp = Experiment.objects.get()
    for r in exp.runs.all():
        base = 10.0 + r.repetition
        r.metrics["avg_jct"] = {"fifo": base, "srtf": base + 10, "drf": base + (0.5 if r.repetition % 2 else -0.5)}[
            r.algorithm
        ]
        r.save()
    return exp


def test_the_repetitions_tab_shows_cis_paired_differences_and_win_counts(client, repeated):
    response = client.get(repeated.get_absolute_url() + "?metric=avg_jct&reference=srtf")
    assert response.context["tab"] == "repetitions"  # the default tab of a repeated experiment
    page = response.content.decode()
    assert "repeated over 6 seeds (0, 1, 2, 3, 4, 5: algorithm seeds)" in page
    detail = {row["variant"]: row for row in response.context["rep_detail"]}
    assert detail["fifo"]["median"] == "12.50" and detail["fifo"]["diff"] == "-10"
    assert (detail["fifo"]["wins"], detail["fifo"]["ties"], detail["fifo"]["losses"]) == (6, 0, 0)
    assert detail["fifo"]["verdict"] == "better" and detail["srtf"]["verdict"] == "reference"
    assert detail["drf"]["wins"] == 6 and detail["drf"]["verdict"] == "better"
    assert detail["fifo"]["diff_ci"] == "[-10, -10]"  # every paired difference is -10
    # ratios fifo / srtf per seed: 10/20 ... 15/25, median (12/22 + 13/23) / 2
    assert detail["fifo"]["ratio"] == f"{(12 / 22 + 13 / 23) / 2:.3f}"
    assert 'id="rep-detail"' in page and "data-verdict>better<" in page and "median [95% CI]" in page


def test_best_is_marked_only_where_the_ci_of_the_difference_excludes_0(client, repeated):
    response = client.get(repeated.get_absolute_url() + "?metric=avg_jct&reference=fifo")
    best, note = response.context["rep_best"]["avg_jct"]
    assert best is None and "fifo has the best median but is not separated from drf" in note
    overview = {row["variant"]: row for row in response.context["rep_overview"]}
    assert not any(cell["best"] for row in overview.values() for cell in row["cells"][:1])
    for r in repeated.runs.filter(algorithm="drf"):  # drf now 1 slot above fifo on every seed
        r.metrics["avg_jct"] = 11.0 + r.repetition
        r.save()
    response = client.get(repeated.get_absolute_url() + "?metric=avg_jct&reference=fifo")
    assert response.context["rep_best"]["avg_jct"][0] == "fifo"
    overview = {row["variant"]: row for row in response.context["rep_overview"]}
    assert overview["fifo"]["cells"][0]["best"] and not overview["drf"]["cells"][0]["best"]
    assert '<th scope="row" class="best">fifo (best)</th>' in response.content.decode()


def test_the_tab_draws_paired_differences_and_a_pooled_cdf_with_a_band(client, repeated):
    response = client.get(repeated.get_absolute_url() + "?tab=repetitions&reference=srtf")
    figures = [f["figure"] for f in response.context["figures"]]
    assert figures[0]["data"][0]["y"] == ["fifo", "drf"] and figures[0]["data"][0]["x"] == [-10.0, -10.0]
    cdf = figures[1]
    filled = [t for t in cdf["data"] if t.get("fill") == "tonexty"]
    assert len(filled) == 3  # a band per variant
    assert [t["name"].split(" (")[0] for t in cdf["data"] if "name" in t] == ["fifo", "srtf", "drf"]


def test_the_pooled_cdf_reads_the_chart_indexes_not_the_results(repeated, monkeypatch):
    from django.core.cache import cache

    from scheduling import stats
    from webapp import repetition_stats

    table = repetition_stats.variant_table(repeated, list(repeated.runs.all()))
    from_results = [
        (v, stats.jct_cdf([repetition_stats._jcts(services.load_result(r)) for r in reps.values()]))
        for v, reps in table.items()
    ]
    opened = []
    monkeypatch.setattr(results_io, "load_result", lambda run: opened.append(run.pk))
    cache.clear()
    assert repetition_stats.cdf_bands(table) == from_results
    assert opened == []  # every run's chart index was written when it finished


def test_the_per_repetition_table_exports_as_csv_and_the_figures_as_html(client, repeated):
    import csv
    import io

    base = repeated.get_absolute_url()
    response = client.get(base + "repetitions.csv")
    assert response["Content-Disposition"] == f'attachment; filename="experiment-{repeated.pk}-repetitions.csv"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 18
    fifo = [r for r in rows if r["variant"] == "fifo"]
    assert [(r["repetition"], r["seed"], r["avg_jct"]) for r in fifo][:2] == [("0", "0", "10.0"), ("1", "1", "11.0")]
    assert fifo[0]["repetition_name"] == "seed 0" and fifo[0]["status"] == "done"
    html = client.get(base + "repetitions-figures.html?reference=srtf").content.decode()
    assert html.count('class="plotly-graph-div"') == 2 and "Plotly.newPlot" in html
    assert "<script src=" not in html and len(html) > 1_000_000  # plotly.js inlined: opens offline


def test_a_shared_link_shows_and_exports_the_repetitions(client, repeated):
    from webapp.models import ShareLink

    link = ShareLink.objects.create(experiment=repeated)
    anonymous = Client()
    assert 'id="rep-overview"' in anonymous.get(f"/s/{link.token}/").content.decode()
    assert anonymous.get(f"/s/{link.token}/repetitions.csv").status_code == 200


def test_an_experiment_without_repetitions_has_no_such_tab_or_export(client, done_experiment):
    page = client.get(done_experiment.get_absolute_url()).content.decode()
    assert 'data-tab="repetitions"' not in page
    assert client.get(done_experiment.get_absolute_url() + "repetitions.csv").status_code == 404


def test_a_sweep_repeated_over_seeds_draws_the_mean_with_a_ci_band_against_the_swept_value(
    client, django_capture_on_commit_callbacks
):
    data = preset_data(mode="sweep", sweep_param="workers_max", sweep_values="1, 4", repeat="seeds", repeat_seeds="3")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, data)
    exp = Experiment.objects.get()
    assert exp.runs.count() == 12 and {r.status for r in exp.runs.all()} == {"done"}
    response = client.get(exp.get_absolute_url() + "?metric=avg_jct")
    variants = response.context["rep_variants"]
    assert variants == ["fifo workers_max=1", "fifo workers_max=4", "srtf workers_max=1", "srtf workers_max=4"]
    sweep = response.context["figures"][-1]["figure"]
    assert sweep["layout"]["title"]["text"] == "average JCT (slots) against workers_max (mean, 95% CI over repetitions)"
    lines = {t["name"]: t for t in sweep["data"] if "name" in t}
    assert set(lines) == {"fifo", "srtf"} and lines["fifo"]["x"] == [1, 4]
    fifo_1 = [r.metrics["avg_jct"] for r in exp.runs.filter(algorithm="fifo") if r.params["workers_max"] == 1]
    assert lines["fifo"]["y"][0] == pytest.approx(sum(fifo_1) / 3)
    assert len([t for t in sweep["data"] if t.get("fill") == "tonexty"]) == 2  # a band per line
    assert "against workers_max" not in " ".join(  # the summary tab leaves the repeated sweep to this tab
        f["figure"]["layout"]["title"]["text"]
        for f in client.get(exp.get_absolute_url() + "?tab=summary").context["figures"]
    )


@pytest.mark.slow
def test_a_figure_exports_as_svg_and_png_through_kaleido_and_chromium(client, repeated):
    base = repeated.get_absolute_url()
    svg = client.get(base + "repetitions-figure.svg?figure=1")
    assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml"
    assert svg.content.startswith(b"<svg") and b"JCT distribution pooled over repetitions" in svg.content
    png = client.get(base + "repetitions-figure.png?figure=0&reference=srtf")
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG\r\n\x1a\n")
    assert client.get(base + "repetitions-figure.svg?figure=9").status_code == 404


def test_without_a_usable_chromium_the_image_export_says_to_take_the_html(client, repeated, monkeypatch):
    import plotly.io as pio

    def no_browser(*args, **kwargs):
        raise RuntimeError("no Chrome found")

    monkeypatch.setattr(pio, "to_image", no_browser)
    response = client.get(repeated.get_absolute_url() + "repetitions-figure.png?figure=0")
    assert response.status_code == 503
    assert "Download the figures as HTML instead" in response.content.decode()


def test_a_rerun_repeats_the_same_repetitions_and_the_zip_holds_the_per_repetition_table(
    client, repeated, django_capture_on_commit_callbacks
):
    import io
    import zipfile

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("experiment-rerun", args=[repeated.pk]))
    again = Experiment.objects.exclude(pk=repeated.pk).get()
    assert response.url == again.get_absolute_url() and again.repetition == repeated.repetition

    def runs(exp):
        return [(r.algorithm, r.repetition, r.seed) for r in exp.runs.all()]

    assert runs(again) == runs(repeated) and len(runs(again)) == 18
    archive = zipfile.ZipFile(io.BytesIO(client.get(repeated.get_absolute_url() + "export.zip").content))
    table = archive.read("repetitions.csv").decode()
    assert table.startswith("variant,algorithm,") and len(table.splitlines()) == 19


def test_the_summary_of_a_repeated_experiment_marks_no_single_run_best(client, repeated):
    page = client.get(repeated.get_absolute_url() + "?tab=summary").content.decode()
    table = page.split('id="metrics"')[1].split("</table>")[0]
    assert 'class="best"' not in table and 'the <a href="?tab=repetitions">Repetitions</a> tab' in page


def test_the_pooled_cdf_is_left_out_with_a_note_beyond_the_jobs_a_page_pools(client, repeated, monkeypatch):
    from webapp import repetition_stats

    monkeypatch.setattr(repetition_stats, "MAX_POOLED_JOBS", 53)  # 18 runs of 3 jobs: 54
    response = client.get(repeated.get_absolute_url())
    titles = [f["figure"]["layout"]["title"]["text"] for f in response.context["figures"]]
    assert not any("JCT distribution" in t for t in titles)
    assert "its 54 jobs are more than the 53 a page pools" in response.content.decode()


def test_the_runs_of_every_repetition_go_out_as_one_group(
    client, tiny_cluster, tiny_trace, monkeypatch, django_capture_on_commit_callbacks
):
    from workers import tasks

    sent = []
    inline = tasks.send_runs  # the inline_tasks fixture's stand-in
    monkeypatch.setattr(tasks, "send_runs", lambda ids: (sent.append(list(ids)), inline(ids)))
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "srtf"], repeat="seeds", repeat_seeds="4")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, data)
    exp = Experiment.objects.get()
    assert sent == [[r.pk for r in exp.runs.all()]] and len(sent[0]) == 8


def test_a_trace_seed_whose_preset_cannot_be_built_fails_its_runs_with_the_reason(
    client, monkeypatch, django_capture_on_commit_callbacks
):
    from scheduling.errors import InputError

    build = presets.build

    def failing(name, jobs=None, seed=0, size=1.0, **options):
        if seed == 4:
            raise InputError("cannot draw this trace", field="jobs")
        return build(name, jobs=jobs, seed=seed, size=size, **options)

    monkeypatch.setattr(presets, "build", failing)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, preset_data(repeat="seeds", repeat_seeds="3-4"))
    runs = list(Experiment.objects.get().runs.all())
    assert [r.status for r in runs] == ["done", "done", "failed", "failed"]
    assert runs[2].error == "preset demo with trace seed 4: field 'jobs': cannot draw this trace"


def test_the_page_says_when_results_were_made_by_another_version_and_the_csv_records_it(client, repeated):
    from scheduling import provenance

    assert 'id="version-note"' not in client.get(repeated.get_absolute_url()).content.decode()
    run = repeated.runs.first()
    assert run.code == provenance.code()  # recorded from the result when the run finished
    run.code = {**run.code, "version": "0.0.1", "commit": "abc123"}
    run.save()
    page = client.get(repeated.get_absolute_url()).content.decode()
    assert "Results made by another version of the code: 1 by version 0.0.1, commit abc123." in page
    text = client.get(repeated.get_absolute_url() + "repetitions.csv").content.decode()
    rows = {int(r["run"]): r for r in csv.DictReader(io.StringIO(text))}
    assert (rows[run.pk]["code_version"], rows[run.pk]["code_commit"]) == ("0.0.1", "abc123")


def test_a_preset_repeated_over_seeds_keeps_the_forms_offered_load_and_restart_cost(
    client, django_capture_on_commit_callbacks
):
    data = {**preset_data(repeat="seeds", repeat_seeds="3-4"), "preset": "zhou-ps", "size": "0.1"}
    data.update(load="1", restart_seconds="120", algorithms=["fifo"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, data)
    assert response.status_code == 302, response.context["form"].errors
    exp = Experiment.objects.get()
    for seed in (3, 4):
        cluster_text, _name, trace_text = repetitions.repetition_inputs(exp, seed)
        files = presets.build("zhou-ps", jobs=6, seed=seed, size=0.1, load=1.0)
        assert trace_text == files.trace  # the load-scaled arrivals, not the preset's default load
        assert trace_text != presets.build("zhou-ps", jobs=6, seed=seed, size=0.1).trace
        assert json.loads(cluster_text)["restart_seconds"] == 120
        preset_cluster = json.loads(files.cluster)
        assert preset_cluster["restart_seconds"] == 30  # the preset's own restart cost, replaced by the form's
        assert {k: v for k, v in json.loads(cluster_text).items() if k != "restart_seconds"} == {
            k: v for k, v in preset_cluster.items() if k != "restart_seconds"
        }


def test_repeating_over_windows_of_library_inputs_whose_trace_was_checked_before(
    client, tiny_cluster, django_capture_on_commit_callbacks
):
    from scheduling.loaders import parse_cluster, parse_trace
    from webapp import tracechecks
    from webapp.models import Dataset
    from workers.checks import summarize

    client.post(NEW, upload_data(tiny_cluster, WINDOW_TRACE))
    cluster, trace = Dataset.objects.get(kind="cluster"), Dataset.objects.get(kind="trace")
    # checked when added to the library: the form then takes the stored check's reasons, not the trace
    spec = parse_cluster(cluster.text, cluster.name)
    tracechecks.record(trace, cluster, summarize(parse_trace(trace.text, spec, trace.name, "csv"), spec))
    data = {"source": "library", "cluster_dataset": cluster.pk, "trace_dataset": trace.pk, "seed": "0"}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, {**data, "algorithms": ["fifo"], "repeat": "windows", "repeat_windows": "3"})
    assert response.status_code == 302
    exp = Experiment.objects.order_by("-id").first()
    assert exp.repetition["windows"] == [[0, 6], [6, 11], [11, 13]]
    assert [r.status for r in exp.runs.all()] == ["done"] * 3
