"""Listing pages never load the experiments' input texts (a production trace is megabytes): the
experiment list and GET /api/experiments select no input text column."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from webapp import services
from webapp.models import ApiToken, Experiment

pytestmark = [pytest.mark.django_db]

BIG = "job_id,arrival\n" + "".join(f"j{i},{i}\n" for i in range(50_000))  # ~0.6 MB


@pytest.fixture
def experiments(user, tiny_cluster):
    return [
        Experiment.objects.create(
            name=f"e{k}",
            source="upload",
            cluster_text=tiny_cluster,
            trace_name="t.csv",
            trace_text=BIG,
            history_text=BIG,
            owner=user,
        )
        for k in range(3)
    ]


def selected_columns(queries):
    return " ".join(q["sql"].split(" FROM ")[0] for q in queries if "webapp_experiment" in q["sql"])


def test_the_experiment_list_page_loads_no_input_text(auth_client, experiments):
    with CaptureQueriesContext(connection) as queries:
        page = auth_client.get(reverse("home"))
    assert page.status_code == 200 and page.content.decode().count('href="/experiments/') >= 3
    columns = selected_columns(queries.captured_queries)
    assert "cluster_name" in columns  # the list's own columns are read
    assert not any(f'"{name}"' in columns or f".{name}" in columns for name in services.INPUT_TEXTS), columns


def test_the_api_listing_loads_no_input_text(client, user, experiments):
    _, key = ApiToken.issue(user, "t")
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("api-experiments"), HTTP_AUTHORIZATION=f"Token {key}")
    assert sorted(e["name"] for e in response.json()["experiments"]) == ["e0", "e1", "e2"]
    columns = selected_columns(queries.captured_queries)
    assert "trace_name" in columns
    assert not any(f'"{name}"' in columns or f".{name}" in columns for name in services.INPUT_TEXTS), columns


def test_listed_experiments_have_their_texts_deferred(user, experiments):
    (first, *_) = services.list_experiments(user)
    assert set(services.INPUT_TEXTS) <= first.get_deferred_fields()
