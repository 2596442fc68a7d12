"""The dashboard through Django's test client: upload or preset -> runs -> experiment page."""

import gzip
import html
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from scheduling import registry
from scheduling.errors import InputError
from scheduling.registry import AlgorithmSpec, Feature
from webapp import charts, services
from webapp.models import Experiment, Run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")


@pytest.fixture
def client(auth_client):
    """Every page needs a signed-in user (the anonymous cases are in tests/test_web_abuse.py)."""
    return auth_client


def upload(client, cluster, trace, trace_name="trace.csv", algorithms=("fifo",), **extra):
    """POST the form with files; ``cluster``/``trace`` are text or bytes."""
    as_bytes = lambda x: x if isinstance(x, bytes) else x.encode()  # noqa: E731
    data = {
        "source": "upload",
        "cluster_file": SimpleUploadedFile("cluster.json", as_bytes(cluster)),
        "trace_file": SimpleUploadedFile(trace_name, as_bytes(trace)),
        "algorithms": list(algorithms),
        "seed": "0",
        **extra,
    }
    return client.post(NEW, data)


def field_errors(response, field):
    return response.context["form"].errors.get(field, [])


def assert_refused(response, field, *fragments):
    assert response.status_code == 200
    errors = " ".join(field_errors(response, field))
    for fragment in fragments:
        assert fragment in errors, f"{fragment!r} not in {field} errors: {errors!r}"
        assert html.escape(fragment) in response.content.decode()
    assert Experiment.objects.count() == 0
    assert Run.objects.count() == 0


# ---------------------------------------------------------------------------------------------
# Pages


def test_the_home_page_lists_experiments_with_links(client, user, tiny_cluster, tiny_trace):
    exp = Experiment.objects.create(
        name="mine", source="upload", cluster_text=tiny_cluster, trace_name="t.csv", trace_text=tiny_trace, owner=user
    )
    page = client.get("/").content.decode()
    assert "mine" in page
    assert exp.get_absolute_url() in page
    assert NEW in page


def test_plotly_js_is_served_gzipped_to_browsers_that_accept_it():
    call_command("vendor_plotly", verbosity=0)
    plain = Client().get("/static/vendor/plotly.min.js")
    packed = Client().get("/static/vendor/plotly.min.js", HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    body = b"".join(plain.streaming_content)
    assert plain.status_code == packed.status_code == 200 and plain.get("Content-Encoding") is None
    assert packed["Content-Encoding"] == "gzip"
    compressed = b"".join(packed.streaming_content)
    assert len(compressed) < len(body) / 2 and gzip.decompress(compressed) == body


def test_make_runs_server_sends_plotly_js_gzipped(tmp_path):
    """`make run` serves with runserver in DEBUG, whose own static handler would answer
    /static/ before WhiteNoise: whitenoise.runserver_nostatic leaves it to WhiteNoise."""
    call_command("vendor_plotly", verbosity=0)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "MLSCHED_VAR_DIR": str(tmp_path), "DJANGO_DEBUG": "1"}  # as bin/run-local
    env.pop("DATABASE_URL", None)
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=Path(__file__).resolve().parent.parent, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/static/vendor/plotly.min.js", headers={"Accept-Encoding": "gzip"}
        )
        for _ in range(100):
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    encoding, body = response.headers.get("Content-Encoding"), response.read()
                break
            except urllib.error.URLError:
                time.sleep(0.1)
        else:
            pytest.fail("runserver did not answer")
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert encoding == "gzip" and len(gzip.decompress(body)) > 2 * len(body)


def test_the_form_offers_every_algorithm_with_fields_from_its_declared_parameters(client):
    page = client.get(NEW).content.decode()
    for name, spec in registry.all_specs().items():
        assert f'value="{name}"' in page
        for param in spec.params:
            assert f'name="{name}__{param.name}"' in page
    workers_max = next(p for p in registry.get("fifo").params if p.name == "workers_max")
    assert f'max="{workers_max.max:g}"' in page
    assert 'name="fifo__backfill"' in page and 'type="checkbox"' in page


# ---------------------------------------------------------------------------------------------
# Upload: happy path and every kind of bad input


def test_uploading_valid_files_creates_an_experiment_with_one_run_per_algorithm(client, tiny_cluster, tiny_trace):
    # drf__fixed as the page sends it: the checkbox starts ticked (default true)
    ticked = {"drf__fixed": "on"}
    response = upload(client, tiny_cluster, tiny_trace, algorithms=["fifo", "drf"], fifo__workers_max="2", **ticked)
    exp = Experiment.objects.get()
    assert response.status_code == 302 and response.url == exp.get_absolute_url()
    assert exp.cluster_text == tiny_cluster and exp.trace_text == tiny_trace and exp.source == "upload"
    runs = {r.algorithm: r for r in exp.runs.all()}
    assert set(runs) == {"fifo", "drf"}
    assert runs["fifo"].params["workers_max"] == 2
    assert runs["drf"].params == registry.get("drf").parse_params({})


BAD_TRACES = {
    "missing column": ("job_id,epochs\nj1,2\n", "missing column 'arrival'"),
    "wrong type": ("job_id,arrival\nj1,abc\n", "line 2, job 'j1', field 'arrival': 'abc' is not a number"),
    "duplicate job id": ("job_id,arrival\nj1,0\nj1,3\n", "line 3, job 'j1', field 'job_id': duplicate job id"),
    "unknown worker type": ("job_id,arrival,batch_time.zz\nj1,0,5\n", "field 'batch_time.zz': unknown type 'zz'"),
    "empty file": ("", "trace.csv: file is empty"),
    "non-UTF-8 bytes": (b"job_id,arrival\nj\xff1,0\n", "trace.csv, line 2: not UTF-8 text"),
    "slot length unlike the cluster's": (
        "job_id,arrival,slot_seconds,gpus,duration\nj1,0,1,1,60\n",
        "field 'slot_seconds': the trace's arrivals are in slots of 1 s, the cluster's slots are 60 s",
    ),
    "job fits no server": (
        "job_id,arrival,gpus,duration\nbig,0,64,600\n",
        "job 'big', field 'gpus': needs 64 GPUs but the cluster has 8",
    ),
}


@pytest.mark.parametrize("trace, message", BAD_TRACES.values(), ids=BAD_TRACES.keys())
def test_a_bad_trace_is_refused_with_its_location_and_nothing_is_stored(client, tiny_cluster, trace, message):
    assert_refused(upload(client, tiny_cluster, trace), "trace_file", message)


def cluster_with(**server):
    spec = {
        "slot_seconds": 60,
        "resources": ["gpu"],
        "servers": [{"id": "n", **server}],
        "worker_types": [{"id": "w1", "demand": {"gpu": 1}}],
    }
    return json.dumps(spec)


BAD_CLUSTERS = {
    "negative capacity": (cluster_with(capacity={"gpu": -8}), "field 'servers[0].capacity.gpu': -8 must be >= 0"),
    "missing capacity": (cluster_with(), "field 'servers[0].capacity': missing capacity"),
    "invalid JSON": ('{"slot_seconds": 60,', "cluster.json, line 1: invalid JSON"),
    "empty file": ("  \n", "cluster.json: file is empty"),
}


@pytest.mark.parametrize("cluster, message", BAD_CLUSTERS.values(), ids=BAD_CLUSTERS.keys())
def test_a_bad_cluster_spec_is_refused_with_its_location_and_nothing_is_stored(client, tiny_trace, cluster, message):
    assert_refused(upload(client, cluster, tiny_trace), "cluster_file", message)


def test_a_50_mb_upload_is_refused_by_its_size(client, tiny_cluster):
    big = b"job_id,arrival\n" + b"j,0\n" * (50 * 2**20 // 4)
    assert_refused(
        upload(client, tiny_cluster, big), "trace_file", "trace.csv: file is 50.0 MiB, larger than the 32 MiB limit"
    )


def test_missing_files_are_asked_for(client):
    response = client.post(NEW, {"source": "upload", "algorithms": ["fifo"], "seed": "0"})
    assert field_errors(response, "cluster_file") == ["Choose a file."]
    assert field_errors(response, "trace_file") == ["Choose a file."]
    assert Experiment.objects.count() == 0


def test_at_least_one_algorithm_is_required(client, tiny_cluster, tiny_trace):
    assert_refused(
        upload(client, tiny_cluster, tiny_trace, algorithms=[]), "algorithms", "Pick at least one algorithm."
    )


def test_a_parameter_out_of_its_declared_range_is_refused_on_its_field(client, tiny_cluster, tiny_trace):
    limit = next(p for p in registry.get("fifo").params if p.name == "workers_max").max
    response = upload(client, tiny_cluster, tiny_trace, fifo__workers_max=str(int(limit) + 1))
    assert_refused(response, "fifo__workers_max", f"fifo: {int(limit) + 1} is above the maximum {limit:g}")


def test_parameters_of_algorithms_not_chosen_are_ignored(client, tiny_cluster, tiny_trace):
    response = upload(client, tiny_cluster, tiny_trace, algorithms=["fifo"], drf__ps="not a number")
    assert response.status_code == 302
    assert [r.algorithm for r in Run.objects.all()] == ["fifo"]


def test_an_algorithm_that_cannot_run_the_inputs_is_refused_with_its_reason(
    client, tiny_cluster, tiny_trace, monkeypatch
):
    needs_edge = Feature("edge", "edge servers", lambda instance: "the cluster has no edge server")
    spec = AlgorithmSpec(
        "edgy", "Needs edge servers.", "-", "-", factory=registry.get("fifo").factory, needs=(needs_edge,)
    )
    monkeypatch.setitem(registry.REGISTRY, "edgy", spec)
    response = upload(client, tiny_cluster, tiny_trace, algorithms=["fifo", "edgy"])
    assert_refused(response, "algorithms", "edgy needs edge servers: the cluster has no edge server")


# ---------------------------------------------------------------------------------------------
# Presets


def test_a_preset_creates_an_experiment_from_its_generated_files(client):
    data = {
        "source": "preset",
        "preset": "demo",
        "jobs": "7",
        "preset_seed": "3",
        "size": "0.5",
        "algorithms": ["srtf"],
        "seed": "1",
    }
    response = client.post(NEW, data)
    exp = Experiment.objects.get()
    assert response.status_code == 302
    assert exp.source == "preset" and exp.preset == "demo"
    assert exp.preset_options == {"jobs": 7, "seed": 3, "size": 0.5}
    assert exp.name == "demo preset (7 jobs, trace seed 3, size 0.5)"
    assert exp.trace_text.count("\n") == 8  # header and 7 jobs
    assert [(r.algorithm, r.seed) for r in exp.runs.all()] == [("srtf", 1)]


def test_a_preset_gives_the_algorithms_that_learn_from_past_jobs_its_own_history(
    client, django_capture_on_commit_callbacks
):
    """asrpt's predictor learns from the preset's own history (generate --history: the preset from
    another seed), in each repetition from its trace seed's; the zip export holds that history."""
    import io
    import zipfile

    from scheduling import presets
    from webapp.repetitions import preset_history

    data = {"source": "preset", "preset": "asrpt", "jobs": "10", "size": "0.04", "algorithms": ["asrpt", "fifo"]}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, {**data, "seed": "0", "repeat": "seeds", "repeat_seeds": "2-3"})
    assert response.status_code == 302, response.context["form"].errors
    exp = Experiment.objects.get()
    runs = list(exp.runs.order_by("trace_seed", "algorithm"))
    assert [(r.algorithm, r.trace_seed, r.status) for r in runs] == [
        ("asrpt", 2, "done"), ("fifo", 2, "done"), ("asrpt", 3, "done"), ("fifo", 3, "done"),
    ]  # fmt: skip
    errors = set()
    for r in runs:
        doc = services.load_result(r)
        if r.algorithm == "fifo":
            assert "prediction" not in doc  # (fifo reads no history: none is built for it)
            continue
        assert doc["prediction"]["history_jobs"] == 10
        errors.add(doc["prediction"]["mean_abs_error"])
    assert len(errors) == 2  # each trace seed's own trace and history
    name, text = preset_history(exp, 3)
    assert text == presets.own_history("asrpt", jobs=10, seed=3, size=0.04).trace and name.startswith("history.")
    exported = zipfile.ZipFile(io.BytesIO(client.get(reverse("experiment-export", args=[exp.pk])).content))
    assert exported.read(f"inputs/raw/{name}").decode() == preset_history(exp)[1]


def test_an_uploaded_history_reaches_the_predictors_joins_the_library_and_is_exported(
    client, user, django_capture_on_commit_callbacks
):
    """A history of past jobs uploaded with the trace: asrpt's predictor is fitted on it (fifo is
    given none), it joins the datasets, the zip export and a rerun keep it; from the library, it
    may be chosen as the history of another experiment but not of its own trace."""
    import io
    import zipfile

    from scheduling import presets
    from webapp.models import Dataset

    now = presets.build("asrpt", jobs=10, seed=1, size=0.04)
    past = presets.own_history("asrpt", jobs=10, seed=1, size=0.04)
    history = SimpleUploadedFile("past.json", past.trace.encode())
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, now.cluster, now.trace, now.trace_name, ("asrpt", "fifo"), history_file=history)
    assert response.status_code == 302, response.context["form"].errors
    exp = Experiment.objects.get()
    assert (exp.history_name, exp.history_text) == ("past.json", past.trace)
    page = client.get(reverse("experiment", args=[exp.pk]) + "?tab=inputs").content.decode()
    assert "history <code>past.json</code>" in page and 'id="history"' in page
    docs = {r.algorithm: services.load_result(r) for r in exp.runs.all()}
    assert docs["asrpt"]["prediction"]["history_jobs"] == 10 and "prediction" not in docs["fifo"]
    exported = zipfile.ZipFile(io.BytesIO(client.get(reverse("experiment-export", args=[exp.pk])).content))
    assert exported.read("inputs/raw/past.json").decode() == past.trace
    assert json.loads(exported.read("experiment.json"))["history_name"] == "past.json"
    again = services.rerun(exp, user)
    assert (again.history_name, again.history_text) == ("past.json", past.trace)
    stored = Dataset.objects.get(name="past.json", owner=user)
    trace = Dataset.objects.get(name=now.trace_name, owner=user)
    cluster = Dataset.objects.get(name="cluster.json", owner=user)
    data = {"source": "library", "cluster_dataset": cluster.pk, "trace_dataset": trace.pk, "algorithms": ["asrpt"]}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, {**data, "history_dataset": stored.pk, "seed": "0"})
    assert response.status_code == 302, response.context["form"].errors
    chosen = Experiment.objects.order_by("-pk").first()
    assert chosen.history_text == past.trace
    assert services.load_result(chosen.runs.get())["prediction"]["history_jobs"] == 10
    response = client.post(NEW, {**data, "history_dataset": trace.pk, "seed": "0"})
    assert "another trace than the one evaluated" in " ".join(field_errors(response, "history_dataset"))


def test_the_page_notes_a_fitted_predictor_run_without_a_history(client, django_capture_on_commit_callbacks):
    """An uploaded trace without a history: asrpt (random forest) refuses to run, and the experiment
    page says so; with predictor=perfect (no fitting) or with a history it does not."""
    from scheduling import presets

    now = presets.build("asrpt", jobs=8, seed=1, size=0.04)
    past = SimpleUploadedFile("past.json", presets.own_history("asrpt", jobs=8, seed=1, size=0.04).trace.encode())
    note = "no history of past jobs was given with the trace"
    for extra, expected in (({}, True), ({"history_file": past}, False), ({"asrpt__predictor": "perfect"}, False)):
        with django_capture_on_commit_callbacks(execute=True):
            response = upload(client, now.cluster, now.trace, now.trace_name, ("asrpt", "fifo"), **extra)
        assert response.status_code == 302, response.context["form"].errors
        exp = Experiment.objects.order_by("-pk").first()
        page = client.get(reverse("experiment", args=[exp.pk])).content.decode()
        assert (note in page) == expected, extra
        assert ("asrpt: " + note in page) == expected  # fifo learns from nothing: not named


def test_the_form_says_which_algorithms_learn_from_a_history(client):
    page = client.get(NEW).content.decode()
    learners = re.findall(r'data-algorithm="([^"]+)">(?:(?!data-algorithm=).)*?learns-history', page, re.S)
    assert learners == [name for name, spec in registry.all_specs().items() if spec.history]
    assert {"asrpt", "spjf", "oasis"} <= set(learners) and "fifo" not in learners
    assert 'name="history_file"' in page and 'name="history_dataset"' in page
    # The form's script warns before submit from this list (tests/test_browser_dashboard.py).
    data = json.loads(re.search(r'<script id="history-learners" type="application/json">(.*?)</script>', page).group(1))
    assert set(data["learners"]) == {"asrpt", "spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime"}
    assert data["learners"]["asrpt"] == {"field": "asrpt__predictor", "default": "random-forest"}
    assert "random-forest" in data["fitted"] and "perfect" not in data["fitted"]


def test_a_bad_history_file_is_refused_on_its_field_and_nothing_is_stored(client, tiny_cluster, tiny_trace):
    bad = SimpleUploadedFile("past.csv", b"job_id,arrival,gpus,duration\np1,0,2,600\np2,x,1,60\n")
    response = upload(client, tiny_cluster, tiny_trace, history_file=bad)
    assert_refused(response, "history_file", "past.csv", "line 3")


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("size", "2", "2 must be in (0, 1]"),
        ("jobs", "0", "0 must be at least 1"),
        ("load", "2", "has no offered-load knob"),
    ],
)
def test_preset_options_the_preset_refuses_are_reported_on_their_field(client, field, value, message):
    data = {"source": "preset", "preset": "demo", field: value, "algorithms": ["fifo"], "seed": "0"}
    assert_refused(client.post(NEW, data), field, message)


def test_a_preset_takes_an_offered_load_and_records_it(client):
    data = {"source": "preset", "preset": "zhou-ps", "jobs": "6", "size": "0.1", "load": "8", "algorithms": ["fifo"]}
    assert client.post(NEW, {**data, "seed": "0"}).status_code == 302
    exp = Experiment.objects.get()
    assert exp.preset_options == {"jobs": 6, "seed": 0, "size": 0.1, "load": 8.0}
    from scheduling import presets

    assert exp.trace_text == presets.build("zhou-ps", jobs=6, seed=0, size=0.1, load=8.0).trace


def test_the_error_banner_asks_to_choose_files_again_only_after_an_upload(client, tiny_cluster, tiny_trace):
    again = "files have to be chosen again"
    preset = client.post(NEW, {"source": "preset", "preset": "demo", "jobs": "0", "algorithms": ["fifo"], "seed": "0"})
    assert "Nothing was saved" in preset.content.decode() and again not in preset.content.decode()
    uploaded = upload(client, tiny_cluster, tiny_trace, algorithms=[])
    assert "Nothing was saved" in uploaded.content.decode() and again in uploaded.content.decode()


def test_an_unknown_preset_is_refused(client):
    response = client.post(NEW, {"source": "preset", "preset": "nope", "algorithms": ["fifo"], "seed": "0"})
    assert "nope" in " ".join(field_errors(response, "preset"))
    assert Experiment.objects.count() == 0


# ---------------------------------------------------------------------------------------------
# Running and the experiment page


def test_the_experiment_page_shows_metrics_and_a_gantt_chart_per_run_once_done(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, tiny_cluster, tiny_trace, algorithms=["fifo", "drf"])
    exp = Experiment.objects.get()
    assert [r.status for r in exp.runs.all()] == ["done", "done"]

    status = client.get(reverse("experiment-status", args=[exp.pk])).json()
    assert status["finished"] is True
    assert {r["algorithm"]: r["status"] for r in status["runs"]} == {"fifo": "done", "drf": "done"}

    page = client.get(response.url).content.decode()
    assert 'id="metrics"' in page and "avg JCT" in page
    for run in exp.runs.all():
        assert run.metrics["completed"] == 3
        gantt = client.get(response.url, {"tab": "gantt", "run": run.pk}).content.decode()
        assert 'class="gantt" id="gantt-0"' in gantt and 'id="gantt-figure-0"' in gantt
        assert f'<option value="{run.pk}" selected>' in gantt
        assert re.search(r"vendor/plotly(-cartesian)?\.min\.js", gantt)  # the partial bundle once vendored
    jct = client.get(response.url, {"tab": "jct"}).content.decode()
    assert "JCT distribution" in jct and "average JCT" in jct and "JCT per job: fifo vs drf" in jct
    time_tab = client.get(response.url, {"tab": "time"}).content.decode()
    assert "gpu utilisation" in time_tab and "Admitted (solid" in time_tab


def test_every_tab_shows_an_experiment_on_a_trace_with_utilities(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    """Such results carry the per-class ``timeliness`` metric (a mapping of mappings), which the
    summary table sorts by the mean over classes."""
    header, *rows = tiny_trace.strip().splitlines()
    utilities = ["10,0,3", "50,0.5,2", "80,5,4"]  # one job per class: insensitive, sensitive, critical
    trace = (
        "\n".join([header + ",priority,decay,target", *(f"{r},{u}" for r, u in zip(rows, utilities, strict=True))])
        + "\n"
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, tiny_cluster, trace, algorithms=["fifo", "drf"])
    exp = Experiment.objects.get()
    assert {r.status for r in exp.runs.all()} == {"done"}
    assert all("timeliness" in r.metrics for r in exp.runs.all())
    for tab, _ in services.TABS:
        assert client.get(response.url, {"tab": tab}).status_code == 200, tab
    col = [k for k, _ in charts.METRIC_COLUMNS].index("timeliness")
    for row, run in zip(client.get(response.url).context["metric_rows"], exp.runs.all(), strict=True):
        means = [c["mean"] for c in run.metrics["timeliness"].values() if c["mean"] is not None]
        assert row["cells"][col]["sort"] == pytest.approx(sum(means) / len(means))


def test_a_run_that_fails_shows_its_message_on_the_experiment_page(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks, monkeypatch
):
    def refuse(instance, params, rng):
        raise InputError("no placement for j1 on this cluster", field="job j1")

    monkeypatch.setitem(registry.REGISTRY, "refusing", AlgorithmSpec("refusing", "-", "-", "-", factory=refuse))
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, tiny_cluster, tiny_trace, algorithms=["refusing"])
    run = Run.objects.get()
    assert run.status == "failed"
    assert "no placement for j1 on this cluster" in run.error
    assert "no placement for j1 on this cluster" in client.get(response.url).content.decode()


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"fifo__workers_min": "5", "fifo__workers_max": "2"}, "fifo__workers_min", "workers_min 5 is above"),
        ({"tiresias__queue_thresholds": "abc"}, "tiresias__queue_thresholds", "is not a comma-separated list"),
        ({"tiresias__queue_thresholds": "500,100"}, "tiresias__queue_thresholds", "must be positive and increasing"),
    ],
)
def test_parameter_values_the_algorithm_would_refuse_are_refused_by_the_form(
    client, tiny_cluster, tiny_trace, fields, field, message
):
    algorithm = field.split("__")[0]
    assert_refused(upload(client, tiny_cluster, tiny_trace, algorithms=[algorithm], **fields), field, message)


def test_a_done_run_offers_its_result_document(client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        upload(client, tiny_cluster, tiny_trace)
    run = Run.objects.get()
    response = client.get(reverse("run-result", args=[run.pk]))
    assert response.streaming  # decompressed a piece at a time, never held whole
    doc = json.loads(b"".join(response.streaming_content))
    assert doc["schema"] == "mlsched.result/1" and doc["algorithm"] == "fifo"
    assert run.result.name.endswith(".json.gz")


def test_an_unfinished_experiment_page_polls_its_status(client, tiny_cluster, tiny_trace):
    response = upload(client, tiny_cluster, tiny_trace)  # on-commit callbacks not run: still queued
    page = client.get(response.url).content.decode()
    assert 'data-finished="false"' in page
    assert reverse("experiment-status", args=[Experiment.objects.get().pk]) in page
    assert "queued" in page


def test_the_example_command_is_idempotent(django_capture_on_commit_callbacks):
    from django.core.management import call_command

    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_examples")
        call_command("load_examples")
    exp = Experiment.objects.get()
    assert exp.preset == "demo"
    assert {r.status for r in exp.runs.all()} == {"done"}
    # Every algorithm that supports the demo instance (the command skips the others, e.g. asrpt).
    from webapp.management.commands.load_examples import example

    assert {r.algorithm for r in exp.runs.all()} == {name for name, _ in example("demo").runs}
    assert {"fifo", "drf"} <= {r.algorithm for r in exp.runs.all()}


# ---------------------------------------------------------------------------------------------
# Chart assembly (pure functions of result documents)


def test_the_gantt_chart_has_a_row_per_server_and_tells_workers_from_parameter_servers(tiny_cluster, tiny_trace):
    from scheduling import api
    from workers.runs import load_instance

    result = api.run(load_instance(tiny_cluster, "c.json", tiny_trace, "t.csv"), "drf", {}, 0)
    figure = charts.gantt(result, "drf")
    legend = [t for t in figure["data"] if t.get("showlegend", True)]
    assert [t["name"] for t in legend] == ["worker", "parameter server (PS)"]
    assert all(t["x"] == [None] and t["marker"]["color"] == "#6b7280" for t in legend)  # grey swatches
    traces = {t["name"]: t for t in figure["data"] if t.get("showlegend", True) is False}
    assert set(traces) == {"worker", "parameter server (PS)"}
    # bars are coloured by job (the same job has one colour), PS bars are hatched
    worker, ps = traces["worker"], traces["parameter server (PS)"]
    assert worker["marker"]["pattern"]["shape"] == "" and ps["marker"]["pattern"]["shape"] == "/"
    colours = dict(zip(worker["text"] + ps["text"], worker["marker"]["color"] + ps["marker"]["color"], strict=True))
    for t in (worker, ps):
        assert all(colours[job] == colour for job, colour in zip(t["text"], t["marker"]["color"], strict=True))
    assert len(set(colours.values())) > 1
    assert figure["layout"]["yaxis"]["ticktext"] == ["node-0", "node-1"]
    bars = sum(len(t["x"]) for t in traces.values())
    assert bars == len(result["placements"])
    assert "%{customdata[0]}" in traces["worker"]["hovertemplate"]
    _job, role, type_, count, start, end, *_ = traces["worker"]["customdata"][0]
    assert role == "worker" and type_ == "w1" and count >= 1 and end > start


def test_overlapping_placements_on_one_server_get_separate_lanes():
    placements = [
        {"server": "a", "job_id": "x", "role": "worker", "start": 0, "end": 5},
        {"server": "a", "job_id": "y", "role": "worker", "start": 2, "end": 4},
        {"server": "a", "job_id": "z", "role": "worker", "start": 4, "end": 6},
        {"server": "b", "job_id": "y", "role": "ps", "start": 2, "end": 3},
    ]
    lanes, counts = charts.assign_lanes(placements)
    assert lanes == [0, 1, 1, 0]
    assert counts == {"a": 2, "b": 1}


def test_the_utilisation_chart_follows_the_placements(tiny_cluster, tiny_trace):
    from scheduling import api
    from workers.runs import load_instance

    instance = load_instance(tiny_cluster, "c.json", tiny_trace, "t.csv")
    result = api.run(instance, "fifo", seed=0)
    (gpu,) = [f for f in charts.utilization([("fifo", result)]) if f["layout"]["title"]["text"] == "gpu utilisation"]
    line = gpu["data"][0]
    assert line["x"][0] == min(p["start"] for p in result["placements"])
    assert line["y"][-1] == 0.0 and max(line["y"]) <= 100
