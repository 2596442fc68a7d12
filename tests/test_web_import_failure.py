"""No half of an upload stays usable: a large raw trace imported in the background whose import or
check fails in the worker keeps a failed record only: empty, its raw file deleted, not offered by
the experiment form, its error (file, line, field) shown on the datasets list and its page, and a
button to delete it."""

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from webapp import datasets
from webapp.models import Dataset, TraceCheck

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

DATASETS = reverse("datasets")
NEW = reverse("experiment-new")
BAD_RAW = b"job_id,submit_time,num_gpus,duration\nj1,0,1,60\nj2,soon,1,60\n"


@pytest.fixture
def client(auth_client):
    return auth_client


@pytest.fixture
def cluster(client, tiny_cluster):
    client.post(DATASETS, {"kind": "cluster", "file": SimpleUploadedFile("c.json", tiny_cluster.encode())})
    return Dataset.objects.get(kind="cluster")


def trace_choices(client):
    return [str(pk) for pk, _ in client.get(NEW).context["form"].fields["trace_dataset"].choices if pk]


def add_raw(client, cluster, raw, monkeypatch, name="raw.csv"):
    monkeypatch.setattr(datasets, "IMPORT_INLINE_BYTES", 10)  # imported by the worker
    data = {"kind": "import-gpu", "cluster": cluster.pk, "file": SimpleUploadedFile(name, raw)}
    return client.post(DATASETS, data)


def test_a_raw_import_that_fails_in_the_worker_leaves_a_failed_record_only(
    client, cluster, monkeypatch, django_capture_on_commit_callbacks, settings
):
    with django_capture_on_commit_callbacks(execute=True):
        add_raw(client, cluster, BAD_RAW, monkeypatch)
    trace = Dataset.objects.get(kind="trace")
    check = TraceCheck.objects.get(trace=trace)
    assert check.status == "failed" and "raw.csv, line 3" in check.error
    assert trace.text == "" and trace.size == 0
    assert check.raw == "" and not default_storage.listdir("dataset-imports")[1]  # the raw upload is gone

    assert str(trace.pk) not in trace_choices(client)  # not offered
    response = client.post(NEW, {"source": "library", "cluster_dataset": cluster.pk, "trace_dataset": trace.pk,
                                 "algorithms": ["fifo"], "seed": "0"})  # fmt: skip
    assert response.status_code == 200 and "trace_dataset" in response.context["form"].errors

    listing = client.get(DATASETS).content.decode()
    assert 'class="badge failed"' in listing and "raw.csv, line 3" in listing and "submit_time" in listing
    page = client.get(trace.get_absolute_url()).content.decode()
    assert 'id="failed-upload"' in page and "raw.csv, line 3" in page and "submit_time" in page
    assert reverse("dataset-delete", args=[trace.pk]) in page

    client.post(reverse("dataset-delete", args=[trace.pk]))
    assert not Dataset.objects.filter(kind="trace").exists()


def test_an_import_still_running_is_not_offered_and_shows_as_importing(
    client, cluster, monkeypatch, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):  # the worker has not taken it yet
        add_raw(client, cluster, BAD_RAW, monkeypatch)
    trace = Dataset.objects.get(kind="trace")
    assert str(trace.pk) not in trace_choices(client)
    assert 'class="badge queued">importing' in client.get(DATASETS).content.decode()


def test_a_raw_import_that_imports_but_fails_its_check_keeps_no_text(
    client, cluster, monkeypatch, django_capture_on_commit_callbacks
):
    raw = b"job_id,submit_time,num_gpus,duration\nj1,0,1,60\nj2,60,64,60\n"  # 64 GPUs: more than the cluster has
    with django_capture_on_commit_callbacks(execute=True):
        add_raw(client, cluster, raw, monkeypatch, name="big.csv")
    trace = Dataset.objects.get(kind="trace")
    check = TraceCheck.objects.get(trace=trace)
    assert check.status == "failed" and "line 3" in check.error, check.error
    assert trace.size == 0 and trace.text == ""
    assert str(trace.pk) not in trace_choices(client)
    page = client.get(trace.get_absolute_url()).content.decode()
    assert 'id="failed-upload"' in page and "line 3" in page


def test_a_later_check_against_another_cluster_that_fails_keeps_the_trace(
    client, cluster, tiny_trace, django_capture_on_commit_callbacks
):
    client.post(
        DATASETS, {"kind": "trace", "cluster": cluster.pk, "file": SimpleUploadedFile("t.csv", tiny_trace.encode())}
    )
    trace = Dataset.objects.get(kind="trace")
    no_ps = (
        '{"slot_seconds": 60, "resources": [{"name": "gpu"}], "servers": [{"id": "n", "capacity": {"gpu": 1}}], '
        '"worker_types": [{"id": "w", "demand": {"gpu": 1}}], "ps_types": [{"id": "p", "demand": {"gpu": 9}}]}'
    )
    client.post(DATASETS, {"kind": "cluster", "file": SimpleUploadedFile("small.json", no_ps.encode())})
    small = Dataset.objects.get(name="small.json")
    with django_capture_on_commit_callbacks(execute=True):
        client.get(trace.get_absolute_url(), {"cluster": small.pk})
    assert TraceCheck.objects.get(trace=trace, cluster=small).status == "failed"
    trace.refresh_from_db()
    assert trace.size > 0 and str(trace.pk) in trace_choices(client)  # usable with the cluster it fits
