"""The experiment form's "Run as the model of" (API field ``model``, with ``history_fraction``): a
Philly window on a node list adapted to a paper's model, every algorithm of the experiment running
the same adapted instance, asrpt refused without a history, windows re-seeded, assumptions exported."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.test import Client

from scheduling import importers
from scheduling.adapt import adapt_jobs
from scheduling.loaders import parse_cluster, parse_trace
from tests.webhelpers import upload_data
from webapp import services
from webapp.models import ApiToken, Experiment

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def philly(tmp_path_factory):
    """(node list cluster spec, Philly trace) texts: 40 Philly jobs on 20 Alibaba GPU nodes."""
    d = tmp_path_factory.mktemp("philly-inputs")
    importers.run("generic-gpu", FIXTURES / "philly_head.csv", d / "philly.csv", slot_seconds=60)
    importers.run("node-list", FIXTURES / "openb_nodes_head.csv", d / "nodes.json")
    return (d / "nodes.json").read_text(), (d / "philly.csv").read_text()


@pytest.fixture
def api(user):
    return Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}")


def post(api, philly, capture, **extra):
    cluster, trace = philly
    with capture(execute=True):
        return api.post("/api/experiments/", upload_data(cluster, trace, trace_name="philly.csv", **extra))


def results(api, exp_id):
    status = api.get(f"/api/experiments/{exp_id}/").json()
    assert status["finished"], status
    links = [r["links"]["result.json"].replace("http://testserver", "") for r in status["runs"]]
    docs = [json.loads(b"".join(api.get(link).streaming_content)) for link in links]  # streamed
    return status, docs


def test_the_api_runs_the_paper_algorithm_and_its_baselines_on_one_instance_adapted_to_the_model(
    api, philly, django_capture_on_commit_callbacks
):
    response = post(api, philly, django_capture_on_commit_callbacks, algorithms=["zhou", "fifo", "drf"],
                    model="zhou-ps")  # fmt: skip
    assert response.status_code == 201, response.content
    status, docs = results(api, response.json()["id"])
    assert status["model"] == "zhou-ps" and status["history_fraction"] is None
    assert [r["status"] for r in status["runs"]] == ["done", "done", "done"], status["runs"]
    cluster, trace = philly
    c = parse_cluster(cluster, "nodes.json")
    expected = adapt_jobs("zhou-ps", c, parse_trace(trace, c, "philly.csv", "csv"), 0, None, {}).instance()
    for doc in docs:  # every run saw the adapted instance: its hour slots, its jobs, its servers
        assert doc["slot_seconds"] == expected.cluster.slot_seconds == 3600
        assert sorted(j["job_id"] for j in doc["jobs"]) == sorted(j.job_id for j in expected.jobs)
        assert [s["id"] for s in doc["servers"]] == [s.id for s in expected.cluster.servers]
    exp = Experiment.objects.get(pk=status["id"])
    files = zipfile.ZipFile(io.BytesIO(services.experiment_zip(exp)))
    record = json.loads(files.read("adapt.json"))
    assert record["model"] == "zhou-ps" and record["assumptions"] and record["jobs"]["input"] == 40
    assert json.loads(files.read("experiment.json"))["model"] == "zhou-ps"


def test_asrpt_as_its_model_is_refused_without_a_history_fraction_and_runs_with_one(
    api, philly, django_capture_on_commit_callbacks
):
    refused = post(api, philly, django_capture_on_commit_callbacks, algorithms=["asrpt", "fifo"], model="asrpt")
    assert refused.status_code == 400
    assert "needs a history of past jobs" in json.dumps(refused.json())
    assert not Experiment.objects.exists()
    response = post(api, philly, django_capture_on_commit_callbacks, algorithms=["asrpt", "spjf", "fifo"],
                    model="asrpt", history_fraction="0.3")  # fmt: skip
    assert response.status_code == 201, response.content
    status, docs = results(api, response.json()["id"])
    assert [r["status"] for r in status["runs"]] == ["done"] * 3, status["runs"]
    assert {len(doc["jobs"]) for doc in docs} == {40 - 12}  # floor(0.3 x 40) jobs are the history
    exp = Experiment.objects.get(pk=status["id"])
    assert services.history_notes(exp, list(exp.runs.all())) == []


def test_a_window_repetition_adapts_each_window_with_its_own_seed(api, philly, django_capture_on_commit_callbacks):
    response = post(api, philly, django_capture_on_commit_callbacks, algorithms=["oasis", "fifo"], model="oasis",
                    repeat="windows", repeat_windows="2", seed="5")  # fmt: skip
    assert response.status_code == 201, response.content
    status, docs = results(api, response.json()["id"])
    assert [r["status"] for r in status["runs"]] == ["done"] * 4, status["runs"]
    records = Experiment.objects.get(pk=status["id"]).preset_options["adapt"]["records"]
    assert [r["seed"] for r in records] == [5, 6] and [r["jobs"]["input"] for r in records] == [20, 20]
    by_window: dict[int, list[str]] = {}
    for run, doc in zip(status["runs"], docs, strict=True):
        jobs = sorted(j["job_id"] for j in doc["jobs"])
        assert by_window.setdefault(run["repetition"], jobs) == jobs  # both algorithms ran the window's instance
    assert by_window[0] != by_window[1]


def test_a_model_is_refused_for_a_preset_with_a_separate_history_or_a_fraction_without_a_model(
    api, philly, django_capture_on_commit_callbacks
):
    trace = philly[1]
    history = io.BytesIO(trace.encode())
    history.name = "past.csv"
    cases = [
        ({"model": "oasis", "history_file": history}, "Not with a separate history"),
        ({"history_fraction": "0.3"}, "needs a model"),
        ({"model": "oasis", "history_fraction": "1"}, "between 0 and 1"),
    ]
    for extra, message in cases:
        response = post(api, philly, django_capture_on_commit_callbacks, algorithms=["fifo"], **extra)
        assert response.status_code == 400 and message in json.dumps(response.json()), (extra, response.content)
    preset = api.post("/api/experiments/", {"source": "preset", "preset": "demo", "algorithms": ["fifo"],
                                            "seed": "0", "model": "oasis"})  # fmt: skip
    assert preset.status_code == 400 and "already in its paper's model" in json.dumps(preset.json())
    assert not Experiment.objects.exists()


def test_library_datasets_run_as_a_model_and_a_rerun_reproduces_the_adapted_runs(
    auth_client, philly, django_capture_on_commit_callbacks
):
    from django.urls import reverse

    from webapp.models import Dataset

    cluster, trace = philly
    with django_capture_on_commit_callbacks(execute=True):  # the upload joins the library
        auth_client.post(reverse("experiment-new"), upload_data(cluster, trace, trace_name="philly.csv"))
    data = {
        "source": "library",
        "cluster_dataset": Dataset.objects.get(kind="cluster").pk,
        "trace_dataset": Dataset.objects.get(kind="trace").pk,
        "algorithms": ["edge-cloud", "fifo"],
        "model": "edge-cloud",
        "seed": "2",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(reverse("experiment-new"), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    exp = Experiment.objects.order_by("-id").first()
    assert exp.preset_options["adapt"]["model"] == "edge-cloud" and exp.preset_options["adapt"]["seed"] == 2
    page = auth_client.get(exp.get_absolute_url()).content.decode()
    assert 'id="adaptation"' in page and "Run as the model of <code>edge-cloud</code>" in page
    with django_capture_on_commit_callbacks(execute=True):
        again = services.rerun(exp, exp.owner)
    first = [(r.algorithm, r.status, r.metrics) for r in exp.runs.all()]
    assert first == [(r.algorithm, r.status, r.metrics) for r in again.runs.all()]
    assert [s for _, s, _ in first] == ["done", "done"]
    assert again.preset_options["adapt"] == exp.preset_options["adapt"]


def test_the_page_says_asrpt_refused_without_a_history_and_its_baselines_predicted_zero(
    auth_client, django_capture_on_commit_callbacks
):
    """An uploaded trace without a history: asrpt's run fails with its refusal (no_history=refuse),
    spjf (the same fitted predictor) predicted 0 iterations; the page says each of these."""
    from django.urls import reverse

    from scheduling import presets

    now = presets.build("asrpt", jobs=8, seed=1, size=0.04)
    data = upload_data(now.cluster, now.trace, now.trace_name, algorithms=["asrpt", "spjf"])
    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(reverse("experiment-new"), data)
    assert response.status_code == 302
    exp = Experiment.objects.order_by("-pk").first()
    assert [r.status for r in exp.runs.all()] == ["failed", "done"]
    notes = services.history_notes(exp, list(exp.runs.all()))
    assert len(notes) == 2 and notes[0].startswith("asrpt: ") and "asrpt refused to run" in notes[0]
    assert "predicted 0 iterations" not in notes[0]
    assert notes[1].startswith("spjf: ") and "predicted 0 iterations" in notes[1]
