"""An installed package's entry point in the group mlsched.algorithms: its algorithm is in the
dashboard's experiment form and the API, and runs through the API; a broken entry point is a
notice on the form, not an outage. The package is what pip installs (a .dist-info folder with
METADATA and entry_points.txt beside the module), written in a folder put on sys.path."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from scheduling import plugins, registry
from tests.test_plugins import python_blocks
from tests.webhelpers import upload_data
from webapp.models import ApiToken

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

LABEL = "lab_largest from the entry point 'largest-first' of lab-largest 0.1"


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The docs' example installed as the package lab-largest, with a second, broken entry point."""
    site = tmp_path / "site-packages"
    dist = site / "lab_largest-0.1.dist-info"
    dist.mkdir(parents=True)
    (site / "lab_largest.py").write_text(python_blocks()[0], encoding="utf-8")
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lab-largest\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[mlsched.algorithms]\nlargest-first = lab_largest\nbroken = lab_missing_module\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv(plugins.ENV, raising=False)
    plugins.reset()  # look again, with the package installed
    yield
    plugins.reset()


def test_an_installed_plugin_is_in_the_experiment_form_with_its_parameters(installed, auth_client):
    page = html.unescape(auth_client.get(reverse("experiment-new")).content.decode())
    assert 'data-algorithm="largest-first"' in page
    assert f"Plugin: {LABEL}" in page
    assert 'name="largest-first__workers_max"' in page
    notice = re.search(r'<p class="warning plugin-problem"[^>]*>(.*?)</p>', page, re.S)
    assert notice and "lab_missing_module" in notice.group(1) and "ModuleNotFoundError" in notice.group(1)
    assert 'data-algorithm="fifo"' in page  # the others are all there


def test_an_installed_plugin_is_listed_by_the_api_and_runs_a_valid_schedule_through_it(
    installed, user, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    api = Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}")
    listed = api.get("/api/algorithms/").json()
    entry = next(a for a in listed["algorithms"] if a["name"] == "largest-first")
    assert entry["plugin"] == LABEL and "workers_max" in {p["name"] for p in entry["params"]}
    assert [p for p in listed["plugin_problems"] if "broken" in p and "lab_missing_module" in p]
    with django_capture_on_commit_callbacks(execute=True):
        created = api.post("/api/experiments/", upload_data(tiny_cluster, tiny_trace, algorithms=["largest-first"]))
    assert created.status_code == 201, created.content
    status = api.get(f"/api/experiments/{created.json()['id']}/").json()
    assert [(r["algorithm"], r["status"]) for r in status["runs"]] == [("largest-first", "done")]
    assert "largest-first" in registry.REGISTRY
