"""Hardening of the web boundary (docs/security.md): names that outgrow their columns, text no
database stores (NUL, unpaired surrogates), overflowing sweep ranges. These failed with a 500 on
PostgreSQL only; `make test` runs this module on PostgreSQL as well as SQLite."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from tests.webhelpers import upload_data
from webapp.models import ApiToken, Dataset, Experiment
from webapp.runspecs import sweep_values

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")
LONG = "n" * 250


@pytest.fixture
def client(auth_client):
    return auth_client


def post_upload(client, cluster, trace, **extra):
    data = upload_data(cluster, trace, **extra)
    data["cluster_file"] = SimpleUploadedFile(f"{LONG}.json", cluster.encode())
    data["trace_file"] = SimpleUploadedFile(f"{LONG}.csv", trace.encode())
    return client.post(NEW, data)


def test_the_default_name_of_long_file_names_is_cut_to_its_column(client, tiny_cluster, tiny_trace):
    response = post_upload(client, tiny_cluster, tiny_trace)
    assert response.status_code == 302
    exp = Experiment.objects.get()
    assert len(exp.name) == 200 and exp.name.endswith("…") and exp.name.startswith("nnnn")


def test_a_rerun_of_a_name_at_its_limit_keeps_a_name_that_fits(client, tiny_cluster, tiny_trace):
    client.post(NEW, upload_data(tiny_cluster, tiny_trace, name="x" * 200))
    exp = Experiment.objects.get()
    response = client.post(reverse("experiment-rerun", args=[exp.pk]))
    assert response.status_code == 302
    rerun = Experiment.objects.exclude(pk=exp.pk).get()
    assert len(rerun.name) == 200 and rerun.name.endswith("…")


def test_an_imported_raw_trace_with_a_long_name_gets_a_name_that_fits(client, user):
    raw = b"job_id,submit_time,num_gpus,duration\nj1,0,1,60\n"
    cluster = Dataset.objects.create(
        owner=user,
        kind="cluster",
        name="c.json",
        text=json.dumps({"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "s", "capacity": {"gpu": 8}}]}),
        size=10,
    )
    name = "r" * 250 + ".csv"
    response = client.post(
        reverse("datasets"), {"kind": "import-gpu", "file": SimpleUploadedFile(name, raw), "cluster": cluster.pk}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    imported = Dataset.objects.get(kind="trace")
    assert len(imported.name) == 255 and imported.name.endswith("-generic-gpu.csv")


@pytest.mark.parametrize(
    "path",
    ["/s/%00/", "/s/%00/export.zip", "/s/%00/status/", "/s/%00/runs/1/jobs.csv", "/experiments/?q=%00"],
)
def test_a_nul_in_a_url_is_a_bad_request(client, path):
    response = Client().get(path)
    assert response.status_code == 400
    assert "NUL character" in response.content.decode()


def test_an_api_token_name_with_a_nul_is_refused_and_nothing_is_stored(client):
    response = client.post(reverse("account"), {"name": "laptop\x00"})
    assert response.status_code == 400
    assert "form field 'name' contains a NUL character" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_the_api_answers_a_nul_with_a_json_error(user, tiny_cluster, tiny_trace):
    key = ApiToken.issue(user)[1]
    api = Client(HTTP_AUTHORIZATION=f"Token {key}")
    response = api.post("/api/experiments/", upload_data(tiny_cluster, tiny_trace, name="a\x00b"))
    assert response.status_code == 400
    assert response.json() == {"error": "the form field 'name' contains a NUL character"}
    assert not Experiment.objects.exists()


def test_a_json_trace_with_a_lone_surrogate_in_a_job_id_is_refused_at_upload(client, tiny_cluster):
    trace = '[{"job_id": "a\\ud800", "arrival": 0, "batch_time": 60, "epochs": 1, "chunks": 1, "minibatches": 1}]'
    response = client.post(NEW, upload_data(tiny_cluster, trace, trace_name="t.json"))
    assert response.status_code == 200
    errors = " ".join(response.context["form"].errors["trace_file"])
    assert "unpaired surrogate" in errors and "t.json" in errors
    assert not Experiment.objects.exists()


def test_a_json_cluster_with_a_nul_in_a_network_key_is_refused(client, tiny_cluster, tiny_trace):
    cluster = json.loads(tiny_cluster)
    cluster["network"] = {"a\x00": 1}
    response = client.post(NEW, upload_data(json.dumps(cluster), tiny_trace))
    assert "NUL character" in " ".join(response.context["form"].errors["cluster_file"])


def test_a_sweep_range_too_long_to_count_is_refused_with_a_message():
    with pytest.raises(ValueError, match="more than 50 values"):
        sweep_values("0:1e308:1e-10")


# ---------------------------------------------------------------------------------------------
# Plotly text


LINK_JOB = '<a href="https://evil.example/">click</a>'


def strings_outside_templates(value, key=None):
    if isinstance(value, str):
        if key not in ("hovertemplate", "texttemplate"):
            yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings_outside_templates(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from strings_outside_templates(v, key)


def test_a_job_id_with_a_link_reaches_plotly_as_text_on_the_share_page(
    client, tiny_cluster, django_capture_on_commit_callbacks
):
    import csv
    import io

    from webapp.models import ShareLink

    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["job_id", "arrival", "epochs", "chunks", "minibatches", "batch_time", "ps_update"])
    writer.writerow([LINK_JOB, 0, 1, 2, 2, 60, 30])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, upload_data(tiny_cluster, out.getvalue()))
    exp = Experiment.objects.get()
    client.post(reverse("experiment-share", args=[exp.pk]))
    run = exp.runs.get()
    page = Client().get(f"/s/{ShareLink.objects.get().token}/?tab=gantt&run={run.pk}")
    html = page.content.decode()
    figure = json.loads(html.split('id="gantt-figure-0" type="application/json">')[1].split("</script>")[0])
    texts = list(strings_outside_templates(figure))
    assert any("&lt;a href=" in t for t in texts)
    assert not any("<" in t for t in texts), [t for t in texts if "<" in t][:3]


def test_the_export_zip_keeps_raw_inputs_apart_with_a_warning_and_escapes_its_own_csvs(
    client, tiny_cluster, django_capture_on_commit_callbacks
):
    import zipfile
    from io import BytesIO

    trace = "job_id,arrival,epochs,chunks,minibatches,batch_time,ps_update\n=HYPERLINK(1),0,1,2,2,60,30\n"
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, upload_data(tiny_cluster, trace))
    exp = Experiment.objects.get()
    z = zipfile.ZipFile(BytesIO(client.get(reverse("experiment-export", args=[exp.pk])).content))
    outside_raw = [n for n in z.namelist() if n.endswith(".csv") and not n.startswith("inputs/raw/")]
    assert outside_raw and "inputs/raw/trace.csv" in z.namelist()
    assert "NOT escaped for spreadsheets" in z.read("inputs/raw/README.txt").decode()
    for name in outside_raw:
        assert "\n=" not in z.read(name).decode() and "'=HYPERLINK(1)" in z.read(name).decode(), name


def test_a_trace_whose_check_outlasts_the_request_budget_is_refused_with_the_limit(
    client, settings, tiny_cluster, tiny_trace
):
    settings.MLSCHED_WEB_PARSE_SECONDS = -1  # every check is over budget
    response = client.post(NEW, upload_data(tiny_cluster, tiny_trace))
    errors = " ".join(response.context["form"].errors["trace_file"])
    assert "trace.csv: checking this trace took more than -1 s on the dashboard" in errors
    assert not Experiment.objects.exists()
