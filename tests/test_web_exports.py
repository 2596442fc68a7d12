"""Getting results out of the dashboard: CSV exports, the experiment zip, and share links that open
without a login until revoked."""

import csv
import io
import json
import zipfile

import pytest
from django.urls import reverse

from scheduling.validator import validate
from webapp import services
from webapp.models import ShareLink
from workers.runs import load_instance

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]


@pytest.fixture
def client(auth_client):
    """Pages need a signed-in user (conftest ``auth_client``)."""
    return auth_client


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
    assert {"inputs/raw/cluster.json", "inputs/raw/trace.csv", "experiment.json"} <= names
    assert z.read("inputs/raw/cluster.json").decode() == tiny_cluster
    described = json.loads(z.read("experiment.json"))
    assert described["seed"] == 0 and len(described["runs"]) == 3
    instance = load_instance(tiny_cluster, "c.json", z.read("inputs/raw/trace.csv").decode(), "t.csv")
    for run in done_experiment.runs.all():
        doc = json.loads(z.read(f"runs/{run.pk}-{run.algorithm}/result.json"))
        assert validate(instance, doc) == []
        assert f"runs/{run.pk}-{run.algorithm}/jobs.csv" in names


def test_csv_cells_that_look_like_formulas_are_defused():
    doc = {"jobs": [{"job_id": "=HYPERLINK(1)", "arrival": 0, "completion": None}], "placements": []}
    assert "'=HYPERLINK(1)" in services.jobs_csv(doc)


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
    assert anon.get(url).status_code == 410  # gone: revoked
    assert anon.get(f"{url}runs/{run.pk}/jobs.csv").status_code == 410
