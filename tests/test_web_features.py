"""Issue 7 through Django's test client: sweeps, the datasets library, result tabs, prices, share
links, exports, the JSON API, cancellation, reruns, broker-down submission and lost-run recovery."""

import csv
import io
import json
import zipfile
from datetime import timedelta

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone
from kombu.exceptions import OperationalError

from scheduling import registry
from scheduling.prices import matrix_at
from scheduling.validator import validate
from tests.webhelpers import PRICED, upload_data
from webapp import charts, services
from webapp.models import ApiToken, Dataset, Experiment, Run, ShareLink
from workers import tasks
from workers.runs import load_instance

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")


@pytest.fixture
def client(auth_client):
    """Pages need a signed-in user (conftest ``auth_client``)."""
    return auth_client


@pytest.fixture
def done_experiment(client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf", "srtf"]))
    exp = Experiment.objects.get()
    assert {r.status for r in exp.runs.all()} == {"done"}
    return exp


# ---------------------------------------------------------------------------------------------
# Sweeps


def test_a_sweep_runs_each_algorithm_once_per_value_and_charts_the_metric_against_it(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    data = upload_data(
        tiny_cluster,
        tiny_trace,
        algorithms=["fifo", "drf"],
        mode="sweep",
        sweep_param="workers_max",
        sweep_values="1:3:1",
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, data)
    exp = Experiment.objects.get()
    assert response.status_code == 302
    assert exp.kind == "sweep" and exp.sweep == {"param": "workers_max", "values": [1, 2, 3]}
    assert sorted((r.algorithm, r.params["workers_max"]) for r in exp.runs.all()) == [
        ("drf", 1),
        ("drf", 2),
        ("drf", 3),
        ("fifo", 1),
        ("fifo", 2),
        ("fifo", 3),
    ]
    assert {r.status for r in exp.runs.all()} == {"done"}
    page = client.get(exp.get_absolute_url()).content.decode()
    assert "average JCT (slots) against workers_max" in page
    figure = json.loads(page.split('id="sweep-figure-0" type="application/json">')[1].split("</script>")[0])
    assert [t["name"] for t in figure["data"]] == ["fifo", "drf"]
    assert figure["data"][0]["x"] == [1, 2, 3]
    fifo = {r.params["workers_max"]: r.metrics["avg_jct"] for r in exp.runs.filter(algorithm="fifo")}
    assert figure["data"][0]["y"] == [fifo[1], fifo[2], fifo[3]]


@pytest.mark.parametrize(
    "values, message",
    [
        ("", "Give the values"),
        ("1:100:1", "more than 50"),
        ("1, x", "'x' is not a number"),
        ("0", "below the minimum"),
        ("3:1:1", "stop at least start"),
    ],
)
def test_a_bad_sweep_is_refused_and_nothing_is_stored(client, tiny_cluster, tiny_trace, values, message):
    data = upload_data(tiny_cluster, tiny_trace, mode="sweep", sweep_param="workers_max", sweep_values=values)
    response = client.post(NEW, data)
    assert response.status_code == 200
    assert message in " ".join(response.context["form"].errors.get("sweep_values", []))
    assert Experiment.objects.count() == 0


def test_sweeping_a_parameter_an_algorithm_lacks_is_refused(client, tiny_cluster, tiny_trace):
    name = next(p.name for p in registry.get("drf").params if p.type in (int, float))
    lacking = next(n for n, s in registry.all_specs().items() if name not in {p.name for p in s.params})
    data = upload_data(
        tiny_cluster, tiny_trace, algorithms=[lacking], mode="sweep", sweep_param=name, sweep_values="1,2"
    )
    response = client.post(NEW, data)
    assert f"{lacking} has no parameter {name}" in " ".join(response.context["form"].errors["sweep_param"])


# ---------------------------------------------------------------------------------------------
# Datasets


def test_uploaded_files_join_the_library_and_can_start_the_next_experiment(
    client, user, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    client.post(NEW, upload_data(tiny_cluster, tiny_trace))
    cluster = Dataset.objects.get(kind="cluster")
    trace = Dataset.objects.get(kind="trace")
    assert cluster.owner == user and cluster.text == tiny_cluster and trace.name == "trace.csv"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            NEW,
            {
                "source": "library",
                "cluster_dataset": cluster.pk,
                "trace_dataset": trace.pk,
                "algorithms": ["srtf"],
                "seed": "3",
            },
        )
    exp = Experiment.objects.order_by("-id").first()
    assert response.status_code == 302 and exp.source == "library" and exp.seed == 3
    assert exp.trace_text == tiny_trace and exp.runs.get().status == "done"


def test_a_dataset_preview_shows_servers_jobs_and_histograms(client, tiny_cluster, tiny_trace):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.post(reverse("datasets"), {"kind": "cluster", "file": SimpleUploadedFile("c.json", tiny_cluster.encode())})
    cluster = Dataset.objects.get()
    page = client.get(cluster.get_absolute_url()).content.decode()
    assert "2 servers" in page and "gpu" in page
    response = client.post(
        reverse("datasets"),
        {"kind": "trace", "cluster": cluster.pk, "file": SimpleUploadedFile("t.csv", tiny_trace.encode())},
    )
    trace = Dataset.objects.get(kind="trace")
    assert response.url == trace.get_absolute_url()
    page = client.get(trace.get_absolute_url()).content.decode()
    assert "3 jobs, arrivals in slots 0–2" in page and "Arrivals" in page and "GPU demand" in page


def test_a_bad_dataset_is_refused_with_its_line_and_field_and_the_line_shown(client, tiny_cluster):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.post(reverse("datasets"), {"kind": "cluster", "file": SimpleUploadedFile("c.json", tiny_cluster.encode())})
    cluster = Dataset.objects.get()
    bad = "job_id,arrival\nj1,0\nj2,<b>soon</b>\n"
    response = client.post(
        reverse("datasets"),
        {"kind": "trace", "cluster": cluster.pk, "file": SimpleUploadedFile("bad.csv", bad.encode())},
    )
    page = response.content.decode()
    assert "bad.csv, line 3, job &#x27;j2&#x27;, field &#x27;arrival&#x27;" in page
    assert '<span class="lineno">3</span> j2,&lt;b&gt;soon&lt;/b&gt;' in page
    assert Dataset.objects.count() == 1


def test_datasets_of_another_user_are_not_found(client, other_user):
    ds = Dataset.objects.create(owner=other_user, kind="cluster", name="theirs.json", text="{}")
    assert client.get(ds.get_absolute_url()).status_code == 404
    assert client.post(reverse("dataset-delete", args=[ds.pk])).status_code == 404
    response = client.post(NEW, {"source": "library", "cluster_dataset": ds.pk, "algorithms": ["fifo"], "seed": 0})
    assert "Select a valid choice" in " ".join(response.context["form"].errors["cluster_dataset"])


# ---------------------------------------------------------------------------------------------
# Result pages


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
    rows = [(1, "a", {}, {"avg_jct": 5.0, "completed": 3}), (2, "b", {}, {"avg_jct": 7.0, "completed": 4})]
    table = charts.summary_table(rows)
    jct = [k for k, _ in charts.METRIC_COLUMNS].index("avg_jct")
    done = [k for k, _ in charts.METRIC_COLUMNS].index("completed")
    assert [r["cells"][jct]["best"] for r in table] == [True, False]
    assert [r["cells"][done]["best"] for r in table] == [False, True]


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
    titles = [f["figure"]["layout"]["title"]["text"] for f in page.context["figures"]]
    assert titles[0].startswith("gpu: p over the decisions") and len(titles) == 2
    mean = page.context["figures"][0]["figure"]["data"][0]["y"]
    assert mean == prices["summary"]["gpu"]["mean"]
    assert matrix_at(prices, len(prices["decisions"]) - 1, "gpu").max() > 0
    # a run without prices: the tab says so
    fifo_only = client.get(exp.get_absolute_url(), {"tab": "prices", "run": exp.runs.get(algorithm="fifo").pk})
    assert fifo_only.context["run"] == priced.pk  # only priced runs can be chosen


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


# ---------------------------------------------------------------------------------------------
# Exports


def test_csv_exports_hold_every_job_and_placement(client, done_experiment):
    run = done_experiment.runs.get(algorithm="srtf")
    doc = services.load_result(run)
    base = done_experiment.get_absolute_url()
    jobs = list(csv.DictReader(io.StringIO(client.get(f"{base}runs/{run.pk}/jobs.csv").content.decode())))
    assert [j["job_id"] for j in jobs] == [j["job_id"] for j in doc["jobs"]]
    for row, job in zip(jobs, doc["jobs"], strict=True):
        assert int(row["jct"]) == job["completion"] - job["arrival"]
    response = client.get(f"{base}runs/{run.pk}/placements.csv")
    assert response["Content-Disposition"].startswith("attachment;")
    placements = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(placements) == len(doc["placements"])
    assert json.loads(placements[0]["demand"]) == doc["placements"][0]["demand"]


def test_the_experiment_zip_holds_inputs_description_and_every_done_result(client, done_experiment, tiny_cluster):
    data = client.get(reverse("experiment-export", args=[done_experiment.pk])).content
    z = zipfile.ZipFile(io.BytesIO(data))
    names = set(z.namelist())
    assert {"inputs/cluster.json", "inputs/trace.csv", "experiment.json"} <= names
    assert z.read("inputs/cluster.json").decode() == tiny_cluster
    described = json.loads(z.read("experiment.json"))
    assert described["seed"] == 0 and len(described["runs"]) == 3
    instance = load_instance(tiny_cluster, "c.json", z.read("inputs/trace.csv").decode(), "t.csv")
    for run in done_experiment.runs.all():
        doc = json.loads(z.read(f"runs/{run.pk}-{run.algorithm}/result.json"))
        assert validate(instance, doc) == []
        assert f"runs/{run.pk}-{run.algorithm}/jobs.csv" in names


def test_csv_cells_that_look_like_formulas_are_defused():
    doc = {"jobs": [{"job_id": "=HYPERLINK(1)", "arrival": 0, "completion": None}], "placements": []}
    assert "'=HYPERLINK(1)" in services.jobs_csv(doc)


# ---------------------------------------------------------------------------------------------
# Share links


def test_a_share_link_opens_without_login_marked_noindex_and_stops_when_revoked(
    client, done_experiment, user, django_capture_on_commit_callbacks
):
    done_experiment.owner = user
    done_experiment.save()
    client.post(reverse("experiment-share", args=[done_experiment.pk]))
    link = ShareLink.objects.get()
    assert len(link.token) >= 32 and str(done_experiment.pk) != link.token
    from django.test import Client

    anon = Client()
    url = reverse("shared", args=[link.token])
    response = anon.get(url, {"tab": "gantt"})
    assert response.status_code == 200 and response["X-Robots-Tag"].startswith("noindex")
    html = response.content.decode()
    assert '<meta name="robots" content="noindex, nofollow">' in html
    assert "Create share link" not in html and "Rerun" not in html
    run = done_experiment.runs.first()
    assert anon.get(f"{url}runs/{run.pk}/jobs.csv").status_code == 200
    assert anon.get(f"{url}status.json").json()["finished"] is True
    assert anon.get(done_experiment.get_absolute_url()).status_code == 302  # the owner URL needs a login
    client.post(reverse("experiment-share", args=[done_experiment.pk]), {"revoke": link.pk})
    assert anon.get(url).status_code == 404
    assert anon.get(f"{url}runs/{run.pk}/jobs.csv").status_code == 404


# ---------------------------------------------------------------------------------------------
# Cancellation, reruns, broker down, lost runs


def test_cancelling_queued_runs_marks_them_and_a_worker_skips_them(client, user, tiny_cluster, tiny_trace):
    client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf"]))  # not dispatched yet
    exp = Experiment.objects.get()
    client.post(reverse("experiment-cancel", args=[exp.pk]), {"run": exp.runs.get(algorithm="fifo").pk})
    runs = {r.algorithm: r for r in exp.runs.all()}
    assert runs["fifo"].status == "cancelled" and runs["drf"].status == "queued"
    assert tasks.simulate_run(runs["fifo"].pk) == "skipped"
    assert tasks.simulate_run(runs["drf"].pk) == "done"


def test_a_rerun_reproduces_the_metrics(client, done_experiment, user):
    response = client.post(reverse("experiment-rerun", args=[done_experiment.pk]))
    again = Experiment.objects.order_by("-id").first()
    assert response.url == again.get_absolute_url() and again.pk != done_experiment.pk
    # the on-commit dispatch ran inside the request (no outer transaction in the test client)
    for old, new in zip(done_experiment.runs.all(), again.runs.all(), strict=True):
        new.refresh_from_db()
        if new.status == "queued":
            tasks.simulate_run(new.pk)
            new.refresh_from_db()
        assert (new.algorithm, new.params, new.seed, new.metrics) == (old.algorithm, old.params, old.seed, old.metrics)


def test_when_the_broker_is_down_the_experiment_is_kept_and_dispatched_later(
    client, tiny_cluster, tiny_trace, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []

    def broker_down(run_ids):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6390. Connection refused.")

    monkeypatch.setattr(tasks, "send_runs", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf"]))
    exp = Experiment.objects.get()
    assert exp.pending_dispatch and {(r.status, r.dispatched) for r in exp.runs.all()} == {("queued", False)}
    page = client.get(response.url).content.decode()
    assert "The task queue could not be reached" in page
    assert client.get(reverse("experiment-status", args=[exp.pk])).json()["waiting_for_broker"] is True
    assert services.recover_runs(force=True)["dispatched"] == 0  # still down

    monkeypatch.setattr(tasks, "send_runs", sent.extend)
    assert services.recover_runs(force=True)["dispatched"] == 2
    exp.refresh_from_db()
    assert sorted(sent) == sorted(exp.runs.values_list("pk", flat=True)) and not exp.pending_dispatch
    assert {r.dispatched for r in exp.runs.all()} == {True}


def test_a_run_whose_heartbeat_stopped_is_requeued_once_then_failed_with_the_reason(
    tiny_cluster, tiny_trace, settings, monkeypatch
):
    sent = []
    monkeypatch.setattr(tasks, "send_runs", sent.extend)
    exp = Experiment.objects.create(
        name="t", source="upload", cluster_text=tiny_cluster, trace_name="t.csv", trace_text=tiny_trace
    )
    run = Run.objects.create(experiment=exp, algorithm="fifo")
    old = timezone.now() - timedelta(seconds=settings.MLSCHED_HEARTBEAT_TIMEOUT + 1)
    Run.objects.filter(pk=run.pk).update(status="running", attempts=1, started=old, heartbeat=old)
    assert services.recover_runs(force=True)["requeued"] == 1
    run.refresh_from_db()
    assert run.status == "queued" and "lost its worker" in run.error and sent == [run.pk]
    Run.objects.filter(pk=run.pk).update(status="running", attempts=2, started=old, heartbeat=old)
    assert services.recover_runs(force=True)["failed"] == 1
    run.refresh_from_db()
    assert run.status == "failed" and run.error.startswith("lost: the worker stopped or was killed during attempt 2")
    # a live heartbeat keeps a run
    Run.objects.filter(pk=run.pk).update(status="running", heartbeat=timezone.now(), started=old)
    assert services.recover_runs(force=True) == {"requeued": 0, "failed": 0, "cancelled": 0, "dispatched": 0}


# ---------------------------------------------------------------------------------------------
# JSON API


@pytest.fixture
def token(user):
    return ApiToken.issue(user)[1]


def test_the_api_creates_an_experiment_from_files_polls_it_and_returns_results(
    client, token, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    from django.test import Client

    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/experiments/",
            upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf"], fifo__workers_max="2"),
        )
    assert response.status_code == 201, response.content
    body = response.json()
    exp_id = body["id"]
    status = api.get(f"/api/experiments/{exp_id}/").json()
    assert status["finished"] and [r["status"] for r in status["runs"]] == ["done", "done"]
    fifo = status["runs"][0]
    assert fifo["params"]["workers_max"] == 2 and fifo["metrics"]["completed"] == 3
    doc = api.get(fifo["links"]["result.json"].replace("http://testserver", "")).json()
    assert doc["metrics"] == fifo["metrics"]
    assert api.get(fifo["links"]["jobs.csv"].replace("http://testserver", "")).content.startswith(b"job_id,")
    assert [e["id"] for e in api.get("/api/experiments/").json()["experiments"]] == [exp_id]
    names = {a["name"] for a in api.get("/api/algorithms/").json()["algorithms"]}
    assert names == set(registry.all_specs())


def test_the_api_refuses_bad_input_with_field_errors_and_stores_nothing(token, tiny_cluster):
    from django.test import Client

    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    response = api.post("/api/experiments/", upload_data(tiny_cluster, "job_id,arrival\nj1,abc\n"))
    assert response.status_code == 400
    assert response.json()["fields"]["trace_file"] == [
        "trace.csv, line 2, job 'j1', field 'arrival': 'abc' is not a number"
    ]
    assert Experiment.objects.count() == 0


@pytest.mark.parametrize("header", ["", "Token nope", "Bearer x", "Token "])
def test_the_api_needs_a_valid_token(header, done_experiment):
    from django.test import Client

    api = Client(HTTP_AUTHORIZATION=header) if header else Client()
    response = api.get(f"/api/experiments/{done_experiment.pk}/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


def test_the_api_hides_other_users_experiments(other_user, tiny_cluster, tiny_trace):
    from django.test import Client

    mine = Experiment.objects.create(
        name="x",
        source="upload",
        cluster_text=tiny_cluster,
        trace_name="t.csv",
        trace_text=tiny_trace,
        owner=other_user,
    )
    key = ApiToken.issue(other_user)[1]
    from django.contrib.auth.models import User

    intruder = ApiToken.issue(User.objects.create_user("eve", password="eve-password-1"))[1]
    assert Client(HTTP_AUTHORIZATION=f"Token {key}").get(f"/api/experiments/{mine.pk}/").status_code == 200
    assert Client(HTTP_AUTHORIZATION=f"Token {intruder}").get(f"/api/experiments/{mine.pk}/").status_code == 404
    assert Client(HTTP_AUTHORIZATION=f"Token {intruder}").post(f"/api/experiments/{mine.pk}/cancel/").status_code == 404


def test_one_click_presets_run_every_algorithm_that_supports_them(client, user, django_capture_on_commit_callbacks):
    from webapp.management.commands.load_examples import example

    assert 'value="demo"' in client.get(NEW).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("experiment-preset"), {"preset": "demo"})
    exp = Experiment.objects.get()
    assert response.url == exp.get_absolute_url() and exp.owner == user and exp.preset == "demo"
    assert [r.algorithm for r in exp.runs.all()] == [name for name, _ in example("demo").runs]
    assert {r.status for r in exp.runs.all()} == {"done"}
    assert client.post(reverse("experiment-preset"), {"preset": "nope"}).status_code == 404


def test_database_errors_in_the_run_store_are_transient_and_retried(monkeypatch, tiny_cluster, tiny_trace):
    from django.db.utils import OperationalError as DbError

    from webapp.runstore import DjangoRunStore
    from workers.runs import TransientStoreError

    exp = Experiment.objects.create(name="t", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                    trace_text=tiny_trace)  # fmt: skip
    run = Run.objects.create(experiment=exp, algorithm="fifo")

    def down(*args, **kwargs):
        raise DbError("server closed the connection unexpectedly")

    with monkeypatch.context() as m:
        m.setattr(Run.objects, "filter", down)
        with pytest.raises(TransientStoreError):
            DjangoRunStore().claim(run.pk)
    assert tasks.simulate_run.autoretry_for == (TransientStoreError,)
    assert tasks.simulate_run.max_retries == 5
    assert tasks.simulate_run(run.pk) == "done"  # nothing was claimed by the failed attempt


def test_raw_production_files_are_imported_into_the_library(client):
    from pathlib import Path

    from django.core.files.uploadedfile import SimpleUploadedFile

    fixtures = Path(__file__).resolve().parent / "fixtures"
    nodes = (fixtures / "openb_nodes_head.csv").read_bytes()
    response = client.post(
        reverse("datasets"), {"kind": "import-nodes", "file": SimpleUploadedFile("openb.csv", nodes)}
    )
    cluster = Dataset.objects.get()
    assert response.url == cluster.get_absolute_url()
    assert cluster.kind == "cluster" and cluster.name == "openb-node-list.json"
    assert len(json.loads(cluster.text)["servers"]) >= 1
    philly = (fixtures / "philly_head.csv").read_bytes()
    client.post(reverse("datasets"), {"kind": "import-gpu", "cluster": cluster.pk,
                                      "file": SimpleUploadedFile("philly.csv", philly)})  # fmt: skip
    trace = Dataset.objects.get(kind="trace")
    assert trace.name == "philly-generic-gpu.csv"
    assert trace.text.count("\n") == philly.count(b"\n")  # one job per raw row (header to header)
    page = client.get(trace.get_absolute_url()).content.decode()
    rows = philly.count(b"\n") - 1
    assert f"{rows} jobs" in page
    bad = b"sn,cpu_milli,memory_mib,gpu,model\nn1,64000,lots,2,P100\n"
    response = client.post(reverse("datasets"), {"kind": "import-nodes", "file": SimpleUploadedFile("bad.csv", bad)})
    assert "bad.csv, line 2" in " ".join(response.context["form"].errors["file"])
    assert Dataset.objects.count() == 2


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


def test_deleting_an_experiment_removes_its_rows_and_result_files(client, done_experiment, user):
    from django.core.files.storage import default_storage

    from webapp.runstore import index_name

    done_experiment.owner = user
    done_experiment.save()
    names = [r.result.name for r in done_experiment.runs.all()]
    assert all(default_storage.exists(n) and default_storage.exists(index_name(n)) for n in names)
    assert client.post(reverse("experiment-delete", args=[done_experiment.pk])).url == reverse("home")
    assert not Experiment.objects.exists() and not Run.objects.exists()
    assert not any(default_storage.exists(n) or default_storage.exists(index_name(n)) for n in names)


def test_api_keys_are_shown_once_and_stored_only_as_digests(client, user):
    page = client.post(reverse("account"), {"name": "ci"}).content.decode()
    key = page.split('id="new-token">New token (shown once): <code>')[1].split("</code>")[0]
    token = ApiToken.objects.get()
    assert token.name == "ci" and token.key != key and key not in client.get(reverse("account")).content.decode()
    from django.test import Client

    assert Client(HTTP_AUTHORIZATION=f"Token {key}").get("/api/experiments/").status_code == 200
    assert Client(HTTP_AUTHORIZATION=f"Token {token.key}").get("/api/experiments/").status_code == 401
    client.post(reverse("account"), {"revoke": token.pk})
    assert Client(HTTP_AUTHORIZATION=f"Token {key}").get("/api/experiments/").status_code == 401
