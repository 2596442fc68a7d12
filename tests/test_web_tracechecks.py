"""Trace checks: a large trace is checked by a background task with progress, and its summary is
stored once and read by the dataset page and the experiment form instead of loading it again."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from scheduling import loaders
from webapp import datasets
from webapp.models import Dataset, Experiment, TraceCheck

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")


@pytest.fixture
def client(auth_client):
    return auth_client


@pytest.fixture
def cluster(client, tiny_cluster):
    client.post(reverse("datasets"), {"kind": "cluster", "file": SimpleUploadedFile("c.json", tiny_cluster.encode())})
    return Dataset.objects.get(kind="cluster")


def upload_trace(client, cluster, text, name="t.csv"):
    return client.post(
        reverse("datasets"), {"kind": "trace", "cluster": cluster.pk, "file": SimpleUploadedFile(name, text.encode())}
    )


def forbid_loading(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the trace was loaded again")

    monkeypatch.setattr(loaders, "parse_trace", refuse)


def test_a_trace_too_large_to_check_in_the_request_is_checked_in_the_background_with_progress(
    client, cluster, tiny_trace, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(datasets, "INLINE_ROWS", 2)
    response = upload_trace(client, cluster, tiny_trace)  # the task is sent after the commit: not yet
    trace = Dataset.objects.get(kind="trace")
    assert response.url == trace.get_absolute_url()
    status = client.get(reverse("dataset-check", args=[trace.pk, cluster.pk])).json()
    assert status["status"] == "queued"
    page = client.get(trace.get_absolute_url()).content.decode()
    assert 'id="trace-check"' in page and "<progress" in page
    with django_capture_on_commit_callbacks(execute=True):
        client.get(trace.get_absolute_url())  # the page sends a queued check again; here it runs
    assert client.get(reverse("dataset-check", args=[trace.pk, cluster.pk])).json()["status"] == "done"
    page = client.get(trace.get_absolute_url()).content.decode()
    assert "3 jobs, arrivals in slots 0–2" in page and 'id="trace-check"' not in page


def test_a_large_trace_that_fails_its_check_shows_the_line_on_its_page_and_in_the_experiment_form(
    client, cluster, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(datasets, "INLINE_ROWS", 1)
    with django_capture_on_commit_callbacks(execute=True):
        upload_trace(client, cluster, "job_id,arrival,gpus,duration\nj1,0,1,60\nj2,soon,1,60\n", "bad.csv")
    trace = Dataset.objects.get(kind="trace")
    page = client.get(trace.get_absolute_url()).content.decode()
    assert "bad.csv, line 3, job &#x27;j2&#x27;, field &#x27;arrival&#x27;" in page
    assert "3: j2,soon,1,60" in page
    response = client.post(
        NEW, {"source": "library", "cluster_dataset": cluster.pk, "trace_dataset": trace.pk, "algorithms": ["fifo"]}
    )
    assert "line 3" in " ".join(response.context["form"].errors["trace_dataset"])


def test_the_dataset_page_reads_the_stored_summary_instead_of_loading_the_trace(
    client, cluster, tiny_trace, monkeypatch
):
    upload_trace(client, cluster, tiny_trace)
    trace = Dataset.objects.get(kind="trace")
    assert TraceCheck.objects.get(trace=trace).status == "done"
    forbid_loading(monkeypatch)
    page = client.get(trace.get_absolute_url()).content.decode()
    assert "3 jobs, arrivals in slots 0–2" in page and "GPU demand" in page


def test_an_experiment_on_a_checked_trace_is_created_without_loading_the_trace_again(
    client, cluster, tiny_trace, monkeypatch
):
    upload_trace(client, cluster, tiny_trace)
    trace = Dataset.objects.get(kind="trace")
    forbid_loading(monkeypatch)
    data = {"source": "library", "cluster_dataset": cluster.pk, "trace_dataset": trace.pk, "seed": 0}
    response = client.post(NEW, {**data, "algorithms": ["fifo", "drf"]})
    assert response.status_code == 302 and Experiment.objects.get().runs.count() == 2
    # The stored reasons still refuse an algorithm the trace cannot run (A-SRPT needs pipeline stages).
    response = client.post(NEW, {**data, "algorithms": ["asrpt"]})
    assert "asrpt needs" in " ".join(response.context["form"].errors["algorithms"])


def test_a_rigid_trace_shows_its_offered_load_and_warns_when_the_cluster_is_nearly_idle(client, cluster):
    upload_trace(client, cluster, "job_id,arrival,gpus,duration\nj1,0,1,60\nj2,10000,1,60\n")
    page = client.get(Dataset.objects.get(kind="trace").get_absolute_url()).content.decode()
    assert 'id="offered-load"' in page and "nearly idle" in page


def test_a_large_raw_trace_is_imported_and_checked_by_the_background_task_not_the_request(
    client, monkeypatch, django_capture_on_commit_callbacks
):
    from pathlib import Path

    fixtures = Path(__file__).resolve().parent / "fixtures"
    nodes_raw = (fixtures / "openb_nodes_head.csv").read_bytes()
    client.post(reverse("datasets"), {"kind": "import-nodes", "file": SimpleUploadedFile("n.csv", nodes_raw)})
    nodes = Dataset.objects.get(kind="cluster")
    monkeypatch.setattr(datasets, "IMPORT_INLINE_BYTES", 100)
    raw = (fixtures / "philly_head.csv").read_bytes()
    data = {"kind": "import-gpu", "cluster": nodes.pk, "limit": "9", "file": SimpleUploadedFile("philly.csv", raw)}
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(reverse("datasets"), data)
    trace = Dataset.objects.get(kind="trace")
    assert response.url == trace.get_absolute_url() and trace.name == "philly-generic-gpu.csv"
    assert trace.text == "" and TraceCheck.objects.get(trace=trace).status == "queued"  # nothing imported yet
    for callback in callbacks:
        callback()  # the task runs
    trace.refresh_from_db()
    assert trace.text.count("\n") == 1 + 9 and trace.size == len(trace.text)
    check = TraceCheck.objects.get(trace=trace)
    assert check.status == "done" and check.raw == "" and check.summary["jobs"] == 9


def test_a_large_raw_trace_that_fails_to_import_shows_the_raw_files_line(
    client, cluster, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(datasets, "IMPORT_INLINE_BYTES", 10)
    raw = b"job_id,submit_time,num_gpus,duration\nj1,0,1,60\nj2,soon,1,60\n"
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("datasets"), {"kind": "import-gpu", "cluster": cluster.pk,
                                          "file": SimpleUploadedFile("raw.csv", raw)})  # fmt: skip
    trace = Dataset.objects.get(kind="trace")
    page = client.get(trace.get_absolute_url()).content.decode()
    assert "raw.csv, line 3" in page and "submit_time" in page
