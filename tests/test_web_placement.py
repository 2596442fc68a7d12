"""The placement option through the JSON API: listed with its choices, run, and recorded."""

import json

import pytest

from tests.scenarios import RIGID_TRACE
from tests.webhelpers import upload_data
from webapp.models import ApiToken

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

RIGID_CLUSTER = json.dumps(
    {"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "s", "count": 2, "capacity": {"gpu": 8}}]}
)


def test_the_api_lists_the_placement_choices_and_runs_fifo_consolidated(user, django_capture_on_commit_callbacks):
    from django.test import Client

    api = Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}")
    listed = {a["name"]: a for a in api.get("/api/algorithms/").json()["algorithms"]}
    for name in ("fifo", "srtf", "tiresias"):
        param = next(p for p in listed[name]["params"] if p["name"] == "placement")
        assert param["default"] == "pool" and param["choices"] == ["pool", "consolidated", "packed"]
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/experiments/",
            upload_data(RIGID_CLUSTER, RIGID_TRACE, algorithms=["fifo"], fifo__placement="consolidated"),
        )
    assert response.status_code == 201, response.content
    run = api.get(f"/api/experiments/{response.json()['id']}/").json()["runs"][0]
    assert run["status"] == "done"
    assert run["params"]["placement"] == "consolidated"
