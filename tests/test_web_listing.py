"""Listing pages never load the experiments' input texts (a production trace is megabytes): the
experiment list and GET /api/experiments read nothing of the input files' table (``InputText``)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from webapp import services
from webapp.models import ApiToken, Experiment, InputText

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


INPUTS = InputText._meta.db_table


def selected_columns(queries):
    return " ".join(q["sql"].split(" FROM ")[0] for q in queries if "webapp_experiment" in q["sql"])


def read_inputs(queries):
    return [q["sql"] for q in queries if INPUTS in q["sql"]]


def test_the_experiment_list_page_loads_no_input_text(auth_client, experiments):
    with CaptureQueriesContext(connection) as queries:
        page = auth_client.get(reverse("home"))
    assert page.status_code == 200 and page.content.decode().count('href="/experiments/') >= 3
    columns = selected_columns(queries.captured_queries)
    assert "cluster_name" in columns  # the list's own columns are read
    assert not read_inputs(queries.captured_queries)


def test_the_api_listing_loads_no_input_text(client, user, experiments):
    _, key = ApiToken.issue(user, "t")
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("api-experiments"), HTTP_AUTHORIZATION=f"Token {key}")
    assert sorted(e["name"] for e in response.json()["experiments"]) == ["e0", "e1", "e2"]
    columns = selected_columns(queries.captured_queries)
    assert "trace_name" in columns
    assert not read_inputs(queries.captured_queries)


def test_listed_experiments_load_their_texts_only_when_read(user, experiments):
    with CaptureQueriesContext(connection) as queries:
        (first, *_) = services.list_experiments(user)
    assert not read_inputs(queries.captured_queries)
    with CaptureQueriesContext(connection) as queries:
        assert first.trace_text == BIG
    assert read_inputs(queries.captured_queries)  # the test sees the table's reads
