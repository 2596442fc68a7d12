"""The reproductions page: one entry per figure of scheduling.reproduce.FIGURES; a run goes to the
reproduce task (run inline here, on a small made-up figure) and its table, CSVs and figure show."""

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse

from scheduling import reproduce
from workers import reproductions as task

pytestmark = [pytest.mark.django_db]

SMALL = reproduce.Figure(
    name="test-demo",
    paper="Test",
    figure="Fig. 0",
    title="average JCT on the demo preset",
    setting="preset demo, 6 jobs",
    metric="avg_jct",
    scale=1.0,
    unit="slots",
    algorithms=(("fifo", "fifo", {}), ("srtf", "srtf", {})),
    reference="fifo",
    claimed_best="srtf",
    points=(("6 jobs", reproduce.preset_builder("demo", 6)),),
    x_label="setting",
    paper_claim="srtf is best",
    default_seeds=3,
)


@pytest.fixture
def client(auth_client):
    return auth_client


@pytest.fixture
def inline_reproduce(settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setitem(reproduce.FIGURES, SMALL.name, SMALL)
    sent = []

    def send(name, seeds, out):
        sent.append((name, seeds))
        for point, seed, algorithm in task.cases_of(reproduce.FIGURES[name], seeds):
            task.reproduce_case.apply((name, seeds, point, seed, algorithm, out))

    monkeypatch.setattr(task, "send", send)
    return sent


def test_the_page_lists_every_reproducible_figure_with_a_button(client):
    page = client.get(reverse("reproductions")).content.decode()
    for name in reproduce.FIGURES:
        assert f'id="reproduction-{name}"' in page
        assert reverse("reproduction-start", args=[name]) in page
    assert "Zhou et al. (TCC&#x27;23) Fig. 2" in page or "Zhou et al. (TCC'23) Fig. 2" in page


def test_a_reproduction_runs_on_the_worker_and_its_table_and_figure_show(client, inline_reproduce):
    response = client.post(reverse("reproduction-start", args=["test-demo"]), {"seeds": ""})
    assert response.status_code == 302
    assert inline_reproduce == [("test-demo", [0, 1, 2])]
    page = client.get(reverse("reproductions")).content.decode()
    section = page.split('id="reproduction-test-demo"')[1].split("</section>")[0]
    assert 'id="reproduction-test-demo" data-status="done"' in page
    assert "Latest run over 3 seeds" in section and "W/T/L" in section
    assert '<th scope="row">fifo</th>' in section and "| fifo |" not in section  # a table, not Markdown in a <pre>
    assert "Claim holds across seeds" in section and "<pre" not in section
    # the chart is drawn in the page, by the site's plotly.js: no frame
    assert 'data-figure="reproduction-figure-test-demo-data"' in section and "<iframe" not in section
    summary = client.get(reverse("reproduction-file", args=["test-demo", "summary.csv"]))
    assert summary.status_code == 200 and b"srtf" in b"".join(summary.streaming_content)
    figure = client.get(reverse("reproduction-file", args=["test-demo", "figure.html"]))
    assert figure.status_code == 200 and figure["X-Frame-Options"] == "SAMEORIGIN"
    assert client.get(reverse("reproduction-file", args=["test-demo", "plotly.min.js"])).status_code == 200


def test_the_page_chart_has_a_bar_per_algorithm_with_its_median_and_ci(client, inline_reproduce):
    import csv
    import io

    client.post(reverse("reproduction-start", args=["test-demo"]), {"seeds": ""})
    figures = client.get(reverse("reproductions")).context["figures"]
    chart = next(f for f in figures if f["name"] == "test-demo")["chart"]
    summary = default_storage.open(f"{reproductions_folder()}/summary.csv").read().decode()
    rows = {r["algorithm"]: r for r in csv.DictReader(io.StringIO(summary))}
    assert [t["name"] for t in chart["data"]] == ["fifo", "srtf"]
    for trace in chart["data"]:
        row = rows[trace["name"]]
        assert trace["y"] == [float(row["median"])]
        assert trace["error_y"]["array"] == [float(row["median_ci_high"]) - float(row["median"])]


def test_figure_html_allows_exactly_its_own_inline_scripts_and_may_be_framed_by_the_site(client, inline_reproduce):
    import base64
    import hashlib
    import re

    client.post(reverse("reproduction-start", args=["test-demo"]), {"seeds": ""})
    response = client.get(reverse("reproduction-file", args=["test-demo", "figure.html"]))
    policy = response["Content-Security-Policy"]
    html = response.content
    inline = re.findall(rb"<script>(.*?)</script>", html, re.DOTALL)
    assert len(inline) == 2  # plotly.py's config and its newPlot call
    for body in inline:
        assert f"'sha256-{base64.b64encode(hashlib.sha256(body).digest()).decode()}'" in policy
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'self'" in policy and "default-src 'none'" in policy
    # the site's own policy stays as strict for every other page
    site = client.get(reverse("reproductions"))["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in site and "sha256" not in site


def test_the_figure_download_is_one_file_with_plotly_inlined(client, inline_reproduce):
    client.post(reverse("reproduction-start", args=["test-demo"]), {"seeds": ""})
    response = client.get(reverse("reproduction-file", args=["test-demo", "figure.html"]) + "?download=1")
    assert response["Content-Disposition"] == 'attachment; filename="test-demo-figure.html"'
    html = response.content
    assert b'src="plotly.min.js"' not in html and len(html) > 1_000_000  # plotly.js itself is in it
    assert html.count(b"Plotly.newPlot") >= 1


def reproductions_folder():
    from webapp import reproductions

    return reproductions.folder("test-demo")


def test_bad_seeds_unknown_figures_and_other_files_are_refused(client, inline_reproduce):
    response = client.post(reverse("reproduction-start", args=["test-demo"]), {"seeds": "x"}, follow=True)
    assert "seeds: &#x27;x&#x27; is not a seed" in response.content.decode()
    response = client.post(reverse("reproduction-start", args=["nope"]), follow=True)
    assert "unknown figure" in response.content.decode()
    assert inline_reproduce == []
    assert client.get(reverse("reproduction-file", args=["test-demo", "started.json"])).status_code == 404
    assert client.get(reverse("reproduction-file", args=["nope", "table.md"])).status_code == 404


def test_a_failed_reproduction_shows_its_reason(client, inline_reproduce, monkeypatch):
    case = reproduce.case

    def broken(fig, point, seed):
        if seed == 1:
            raise reproduce.InputError("the preset cannot be built", field="jobs")
        return case(fig, point, seed)

    monkeypatch.setattr(reproduce, "case", broken)
    client.post(reverse("reproduction-start", args=["test-demo"]), {"seeds": "2"})
    page = client.get(reverse("reproductions")).content.decode()
    assert "Failed: fifo on 6 jobs, seed 1: InputError: field &#x27;jobs&#x27;: the preset cannot be built" in page


def test_a_running_reproduction_counts_its_finished_runs_and_cannot_start_twice(client):
    import json
    import time

    from webapp import reproductions

    folder = reproductions.folder("zhou-fig2")
    default_storage.save(f"{folder}/started.json", ContentFile(json.dumps({"at": time.time(), "seeds": [0, 1]})))
    default_storage.save(f"{folder}/cases/0-0-0.json", ContentFile(b"{}"))
    section = client.get(reverse("reproductions")).content.decode().split('id="reproduction-zhou-fig2"')[1]
    assert "1 of 36 runs finished" in section.split("</section>")[0]  # 3 points x 2 seeds x 6 algorithms
    response = client.post(reverse("reproduction-start", args=["zhou-fig2"]), follow=True)
    assert "zhou-fig2 is already running" in response.content.decode()


@pytest.mark.usefixtures("inline_tasks")
def test_a_preset_figure_launches_as_a_repeated_experiment_on_its_metric_and_reference(
    client, inline_reproduce, django_capture_on_commit_callbacks
):
    from webapp.models import Experiment

    assert 'action="/reproductions/test-demo/experiment/"' in client.get(reverse("reproductions")).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("reproduction-experiment", args=["test-demo"]))
    exp = Experiment.objects.get()
    assert response.url == f"{exp.get_absolute_url()}?tab=repetitions&metric=avg_jct&reference=fifo"
    assert exp.preset == "demo" and exp.preset_options == {"jobs": 6, "seed": 0, "size": 1.0}
    assert exp.repetition == {"over": "seeds", "seeds": [0, 1, 2], "trace_seeds": True}
    assert [(r.algorithm, r.trace_seed, r.status) for r in exp.runs.all()][:2] == [
        ("fifo", 0, "done"),
        ("srtf", 0, "done"),
    ]
    page = client.get(response.url)
    assert page.context["rep_reference"] == "fifo" and page.context["rep_metric"] == "avg_jct"


def test_a_figure_not_drawn_on_a_preset_has_no_experiment_button(client):
    from webapp.reproductions import preset_of

    assert preset_of(reproduce.FIGURES["asrpt-fig6"]) is None
    assert preset_of(reproduce.FIGURES["zhou-fig2"]) == ("zhou-ps", 100, 1.0)  # its first point, the headline
    assert client.post(reverse("reproduction-experiment", args=["asrpt-fig6"])).status_code == 404


def test_a_figure_of_several_points_launches_its_first_point_and_says_so():
    from webapp.reproductions import as_experiment

    fig = reproduce.FIGURES["zhou-fig2"]
    sub = as_experiment(fig)
    assert sub is not None and len(fig.points) > 1
    assert f"({fig.points[0][0]}: reproduction, 10 seeds)" in sub.name
    assert [name for name, _ in sub.runs] == [algorithm for _, algorithm, _ in fig.algorithms]


@pytest.mark.redis
def test_a_reproduction_fans_out_as_a_group_over_redis_and_is_assembled_once(redis_worker, monkeypatch, settings):
    import time

    from webapp import reproductions

    monkeypatch.setitem(reproduce.FIGURES, SMALL.name, SMALL)
    assert reproductions.start("test-demo", "3") == "test-demo started over 3 seeds (about 1 min at 3 seeds)"
    deadline = time.monotonic() + 120
    while reproductions.state("test-demo")["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.5)
    done = reproductions.state("test-demo")
    assert done["status"] == "done", done
    folder = reproductions.folder("test-demo")
    assert len(default_storage.listdir(f"{folder}/cases")[1]) == 6  # 3 seeds x 2 algorithms, a task each
    assert "| fifo |" in done["table"] and default_storage.exists(f"{folder}/figure.html")
    runs_csv = default_storage.open(f"{folder}/runs.csv").read().decode().splitlines()
    assert len(runs_csv) == 7 and runs_csv[0].startswith("point,seed,label,algorithm")


# Quotas (webapp/quotas.py): the page's two buttons are held to the form's limits.


@pytest.fixture
def queued_reproduce(settings, tmp_path, monkeypatch):
    """Reproductions sent to no worker: they stay running, every case still to run."""
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setitem(reproduce.FIGURES, SMALL.name, SMALL)
    sent = []
    monkeypatch.setattr(task, "send", lambda name, seeds, out: sent.append((name, seeds)))
    return sent


def test_launching_a_figure_counts_every_repeated_run_against_the_active_runs_quota(client, settings, queued_reproduce):
    from webapp.models import Experiment

    settings.MLSCHED_QUOTA_ACTIVE_RUNS = 5  # the figure is 2 algorithms x 3 seeds = 6 runs
    response = client.post(reverse("reproduction-experiment", args=["test-demo"]), follow=True)
    assert "You have 0 runs queued or running and this experiment adds 6: one account may have at most 5 at once" \
        in response.content.decode()  # fmt: skip
    assert response.redirect_chain[-1][0] == reverse("reproductions") and not Experiment.objects.exists()


def test_launching_a_figure_past_the_hourly_limit_is_refused_with_the_forms_message(
    client, user, settings, queued_reproduce, tiny_cluster, tiny_trace
):
    from webapp.models import Experiment

    settings.MLSCHED_QUOTA_EXPERIMENTS_PER_HOUR = 1
    Experiment.objects.create(name="x", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                              trace_text=tiny_trace, owner=user)  # fmt: skip
    response = client.post(reverse("reproduction-experiment", args=["test-demo"]), follow=True)
    assert response.status_code == 200
    assert "You created 1 experiments in the last hour, the most one account may" in response.content.decode()
    assert Experiment.objects.count() == 1


def test_a_figure_whose_preset_is_over_the_web_limit_is_not_generated_in_the_request(
    client, settings, queued_reproduce, monkeypatch
):
    from scheduling import presets
    from webapp.models import Experiment

    def build(*args, **kwargs):
        raise AssertionError("the preset was generated in the request")

    monkeypatch.setattr(presets, "build", build)
    settings.MLSCHED_QUOTA_WEB_PRESET_JOBS = 5  # the figure's preset has 6 jobs
    response = client.post(reverse("reproduction-experiment", args=["test-demo"]), follow=True)
    assert "test-demo&#x27;s preset has 6 jobs, and at most 5 jobs are generated here" in response.content.decode()
    assert not Experiment.objects.exists()


def test_running_a_reproduction_is_held_to_the_active_runs_and_hourly_quotas(client, settings, queued_reproduce):
    settings.MLSCHED_QUOTA_ACTIVE_RUNS = 5
    start = reverse("reproduction-start", args=["test-demo"])
    response = client.post(start, {"seeds": ""}, follow=True)  # 3 seeds x 2 algorithms = 6 cases
    assert "You have 0 runs queued or running and this reproduction adds 6: one account may have at most 5" \
        in response.content.decode()  # fmt: skip
    assert queued_reproduce == []
    settings.MLSCHED_QUOTA_ACTIVE_RUNS = 10
    assert client.post(start, {"seeds": "0-2"}).status_code == 302 and len(queued_reproduce) == 1
    # Its 6 cases still to run count as runs queued or running: an experiment of 6 more is refused.
    response = client.post(reverse("reproduction-experiment", args=["test-demo"]), follow=True)
    assert "You have 6 runs queued or running and this experiment adds 6" in response.content.decode()
    # A reproduction counts as an experiment created this hour, also once its folder is replaced.
    settings.MLSCHED_QUOTA_ACTIVE_RUNS, settings.MLSCHED_QUOTA_EXPERIMENTS_PER_HOUR = 100, 1
    from webapp import reproductions

    reproductions.delete_folder(reproductions.folder("test-demo"))
    response = client.post(start, {"seeds": "1"}, follow=True)
    assert "You created 1 experiments in the last hour" in response.content.decode()
    assert len(queued_reproduce) == 1
