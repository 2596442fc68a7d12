"""The datasets library through Django's test client: uploads kept for the next experiment, previews,
refusals with the line and field, other users' datasets, and imports of raw production files."""

import json

import pytest
from django.urls import reverse

from scheduling import presets
from scheduling.loaders import parse_cluster, parse_trace
from tests.webhelpers import upload_data
from webapp import datasets
from webapp.models import Dataset, Experiment

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")


@pytest.fixture
def client(auth_client):
    """Pages need a signed-in user (conftest ``auth_client``)."""
    return auth_client


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
    form = client.get(reverse("datasets")).content.decode()  # the only cluster spec is chosen already
    assert f'<option value="{cluster.pk}" selected>' in form
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


def test_an_upload_joins_the_library_once_per_name_and_content(client, tiny_cluster, tiny_trace):
    edited = tiny_trace.replace("j2,1,", "j2,2,")  # the same size, other content
    assert len(edited) == len(tiny_trace) and edited != tiny_trace
    for trace in (tiny_trace, edited, tiny_trace):
        assert client.post(NEW, upload_data(tiny_cluster, trace)).status_code == 302
    traces = Dataset.objects.filter(kind="trace").order_by("id")
    assert [d.text for d in traces] == [tiny_trace, edited]
    assert Dataset.objects.filter(kind="cluster").count() == 1


def test_the_gpu_demand_of_a_job_with_its_own_worker_demand_is_counted():
    """OASiS traces give each job its own worker demand (worker_demand.gpu), which the preview's
    GPU histogram used to ignore (every job at 0 GPUs)."""
    files = presets.build("oasis", jobs=10, seed=2)
    cluster = parse_cluster(files.cluster)
    jobs = parse_trace(files.trace, cluster, files.trace_name)
    assert all(j.worker_demand is not None for j in jobs)
    demands = [datasets.gpu_demand(j, cluster) for j in jobs]
    assert demands == [j.max_workers() * j.worker_demand["gpu"] for j in jobs] and max(demands) > 0
