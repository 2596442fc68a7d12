"""Imports in the browser with the CLI's options: time window, limit, slot length, column mapping
(a duration from two timestamps, for the Alibaba pod list), a preview before saving, unique names,
and a pointer to the import when a raw file is uploaded as a trace or cluster spec."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from webapp.models import Dataset

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DATASETS = reverse("datasets")


@pytest.fixture
def client(auth_client):
    return auth_client


@pytest.fixture
def nodes(client):
    raw = (FIXTURES / "openb_nodes_head.csv").read_bytes()
    client.post(DATASETS, {"kind": "import-nodes", "file": SimpleUploadedFile("openb.csv", raw)})
    return Dataset.objects.get(kind="cluster")


def post_import(client, cluster, fixture, **options):
    raw = (FIXTURES / fixture).read_bytes()
    data = {"kind": "import-gpu", "cluster": cluster.pk, "file": SimpleUploadedFile(fixture, raw), **options}
    return client.post(DATASETS, data)


def test_an_import_keeps_the_jobs_of_its_time_window_up_to_its_limit(client, nodes):
    response = post_import(client, nodes, "philly_head.csv", start="2017-10-09 06:00", end="2017-10-10", limit="3")
    trace = Dataset.objects.get(kind="trace")
    assert response.url == trace.get_absolute_url()
    assert trace.text.count("\n") == 1 + 3


def test_the_alibaba_pod_list_imports_with_a_duration_from_two_timestamps(client, nodes):
    response = post_import(client, nodes, "openb_pods_head.csv", mapping="duration=deletion_time-creation_time")
    trace = Dataset.objects.get(kind="trace")
    assert response.status_code == 302 and trace.text.startswith("job_id,arrival,slot_seconds,gpus,duration")
    assert "openb-pod-0000,0,60,1,12537496" in trace.text


def test_a_bad_mapping_is_shown_on_the_mapping_field(client, nodes):
    response = post_import(client, nodes, "openb_pods_head.csv", mapping="duration=gone-creation_time")
    assert "names neither a column" in " ".join(response.context["form"].errors["mapping"])
    assert not Dataset.objects.filter(kind="trace").exists()


def test_a_preview_stores_nothing_and_add_keeps_the_previewed_file(client, nodes):
    response = post_import(client, nodes, "philly_head.csv", action="preview", limit="5", name="philly-5")
    page = response.content.decode()
    assert 'id="dataset-preview"' in page and "philly-5.csv" in page and "5 jobs" in page
    assert not Dataset.objects.filter(kind="trace").exists()
    token = response.context["form"].data["draft"]
    response = client.post(DATASETS, {"kind": "import-gpu", "cluster": nodes.pk, "draft": token, "action": "add"})
    trace = Dataset.objects.get(kind="trace")
    assert response.url == trace.get_absolute_url() and trace.name == "philly-5.csv"
    assert trace.text.count("\n") == 1 + 5
    response = client.post(DATASETS, {"kind": "import-gpu", "cluster": nodes.pk, "draft": token, "action": "add"})
    assert "Choose a file." in " ".join(response.context["form"].errors["file"])  # a draft is added once


def test_a_draft_of_another_user_is_not_found(client, nodes, django_user_model):
    token = post_import(client, nodes, "philly_head.csv", action="preview").context["form"].data["draft"]
    other = django_user_model.objects.create_user("bob", password="bob-password-1")
    client.force_login(other)
    response = client.post(DATASETS, {"kind": "trace", "draft": token})
    assert "Choose a file." in " ".join(response.context["form"].errors["file"])


def test_two_imports_of_one_file_get_distinct_names(client, nodes):
    post_import(client, nodes, "philly_head.csv")
    post_import(client, nodes, "philly_head.csv", limit="10")
    names = sorted(Dataset.objects.filter(kind="trace").values_list("name", flat=True))
    assert names == ["philly_head-generic-gpu-2.csv", "philly_head-generic-gpu.csv"]


def test_a_raw_trace_uploaded_as_a_trace_links_to_its_import(client, nodes):
    raw = (FIXTURES / "philly_head.csv").read_bytes()
    response = client.post(DATASETS, {"kind": "trace", "cluster": nodes.pk, "file": SimpleUploadedFile("p.csv", raw)})
    page = response.content.decode()
    assert 'id="kind-hint"' in page and f"{DATASETS}?kind=import-gpu" in page
    form = client.get(DATASETS + "?kind=import-gpu").content.decode()
    assert 'value="import-gpu" required id="id_kind_2" checked' in form or (
        'value="import-gpu"' in form and "checked" in form.split('value="import-gpu"')[1].split(">")[0]
    )


def test_a_dataset_is_renamed_keeping_its_extension_and_a_unique_name(client, nodes):
    post_import(client, nodes, "philly_head.csv")
    post_import(client, nodes, "philly_head.csv", limit="4")
    first, second = Dataset.objects.filter(kind="trace").order_by("id")
    client.post(reverse("dataset-rename", args=[first.pk]), {"name": "philly-day-one"})
    client.post(reverse("dataset-rename", args=[second.pk]), {"name": "philly-day-one.csv"})
    first.refresh_from_db(), second.refresh_from_db()
    assert (first.name, second.name) == ("philly-day-one.csv", "philly-day-one-2.csv")


def test_the_experiment_forms_dropdowns_show_job_count_span_size_and_date(client, nodes):
    post_import(client, nodes, "philly_head.csv", limit="7")
    trace = Dataset.objects.get(kind="trace")
    page = client.get(reverse("experiment-new")).content.decode()
    option = page.split(f'<option value="{trace.pk}"')[1].split("</option>")[0]
    assert "7 jobs over" in option and " h)" in option and "bytes" in option and trace.created.strftime("%Y-") in option
