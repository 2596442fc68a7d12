"""The JSON API: creating and polling experiments with a token, field errors, token checks, other
users' experiments, and API keys issued on the account page (shown once, stored as digests)."""

import json

import pytest
from django.urls import reverse

from scheduling import registry
from tests.webhelpers import upload_data
from webapp.models import ApiToken, Experiment

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]


@pytest.fixture
def client(auth_client):
    """Pages need a signed-in user (conftest ``auth_client``)."""
    return auth_client


@pytest.fixture
def token(user):
    return ApiToken.issue(user)[1]


def test_the_api_creates_an_experiment_from_files_polls_it_and_returns_results(
    client, token, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    from django.test import Client

    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/experiments/",
            upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf"], fifo__workers_max="2"),
        )
    assert response.status_code == 201, response.content
    body = response.json()
    exp_id = body["id"]
    status = api.get(f"/api/experiments/{exp_id}/").json()
    assert status["finished"] and [r["status"] for r in status["runs"]] == ["done", "done"]
    fifo = status["runs"][0]
    assert fifo["params"]["workers_max"] == 2 and fifo["metrics"]["completed"] == 3
    doc = json.loads(b"".join(api.get(fifo["links"]["result.json"].replace("http://testserver", "")).streaming_content))
    assert doc["metrics"] == fifo["metrics"]
    assert api.get(fifo["links"]["jobs.csv"].replace("http://testserver", "")).content.startswith(b"job_id,")
    assert [e["id"] for e in api.get("/api/experiments/").json()["experiments"]] == [exp_id]
    names = {a["name"] for a in api.get("/api/algorithms/").json()["algorithms"]}
    assert names == set(registry.all_specs())


def test_the_api_refuses_bad_input_with_field_errors_and_stores_nothing(token, tiny_cluster):
    from django.test import Client

    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    response = api.post("/api/experiments/", upload_data(tiny_cluster, "job_id,arrival\nj1,abc\n"))
    assert response.status_code == 400
    assert response.json()["fields"]["trace_file"] == [
        "trace.csv, line 2, job 'j1', field 'arrival': 'abc' is not a number"
    ]
    assert Experiment.objects.count() == 0


def test_the_api_takes_a_history_of_past_jobs_and_names_its_errors(
    token, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client

    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    bad = SimpleUploadedFile("past.csv", b"job_id,arrival\nj1,abc\n")
    response = api.post("/api/experiments/", upload_data(tiny_cluster, tiny_trace, history_file=bad))
    assert response.status_code == 400
    assert response.json()["fields"]["history_file"] == [
        "past.csv, line 2, job 'j1', field 'arrival': 'abc' is not a number"
    ]
    assert Experiment.objects.count() == 0
    past = SimpleUploadedFile("past.csv", tiny_trace.encode())
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/experiments/", upload_data(tiny_cluster, tiny_trace, history_file=past))
    assert response.status_code == 201, response.content
    exp = Experiment.objects.get()
    assert (exp.history_name, exp.history_text) == ("past.csv", tiny_trace)


def test_the_api_refuses_a_trace_written_in_other_slots_than_the_cluster(token, tiny_cluster):
    from django.test import Client

    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    trace = "job_id,arrival,slot_seconds,gpus,duration\nj1,0,1,1,60\n"
    response = api.post("/api/experiments/", upload_data(tiny_cluster, trace))
    assert response.status_code == 400
    assert (
        "the trace's arrivals are in slots of 1 s, the cluster's slots are 60 s"
        in (response.json()["fields"]["trace_file"][0])
    )
    assert Experiment.objects.count() == 0


@pytest.mark.parametrize("header", ["", "Token nope", "Bearer x", "Token "])
def test_the_api_needs_a_valid_token(header, done_experiment):
    from django.test import Client

    api = Client(HTTP_AUTHORIZATION=header) if header else Client()
    response = api.get(f"/api/experiments/{done_experiment.pk}/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


def test_the_api_hides_other_users_experiments(other_user, tiny_cluster, tiny_trace):
    from django.test import Client

    mine = Experiment.objects.create(
        name="x",
        source="upload",
        cluster_text=tiny_cluster,
        trace_name="t.csv",
        trace_text=tiny_trace,
        owner=other_user,
    )
    key = ApiToken.issue(other_user)[1]
    from django.contrib.auth.models import User

    intruder = ApiToken.issue(User.objects.create_user("eve", password="eve-password-1"))[1]
    assert Client(HTTP_AUTHORIZATION=f"Token {key}").get(f"/api/experiments/{mine.pk}/").status_code == 200
    assert Client(HTTP_AUTHORIZATION=f"Token {intruder}").get(f"/api/experiments/{mine.pk}/").status_code == 404
    assert Client(HTTP_AUTHORIZATION=f"Token {intruder}").post(f"/api/experiments/{mine.pk}/cancel/").status_code == 404


def test_api_keys_are_shown_once_and_stored_only_as_digests(client, user):
    page = client.post(reverse("account"), {"name": "ci"}).content.decode()
    key = page.split('id="new-token">New token (shown once): <code>')[1].split("</code>")[0]
    token = ApiToken.objects.get()
    assert token.name == "ci" and token.key != key and key not in client.get(reverse("account")).content.decode()
    from django.test import Client

    assert Client(HTTP_AUTHORIZATION=f"Token {key}").get("/api/experiments/").status_code == 200
    assert Client(HTTP_AUTHORIZATION=f"Token {token.key}").get("/api/experiments/").status_code == 401
    client.post(reverse("account"), {"revoke": token.pk})
    assert Client(HTTP_AUTHORIZATION=f"Token {key}").get("/api/experiments/").status_code == 401


def test_a_boolean_parameter_the_api_leaves_out_takes_its_default_an_unticked_box_is_false(
    client, token, tiny_cluster, tiny_trace, monkeypatch
):
    from django.test import Client

    fifo = registry.get("fifo")
    spec = registry.AlgorithmSpec(
        "flagged",
        "-",
        "-",
        "-",
        factory=lambda instance, params, rng: fifo.build(instance, fifo.parse_params({}), 0),
        params=(registry.Param("flag", bool, True, "a flag on by default"),),
    )
    monkeypatch.setitem(registry.REGISTRY, "flagged", spec)
    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    for extra, expected in (({}, True), ({"flagged__flag": "0"}, False), ({"flagged__flag": "yes"}, True)):
        response = api.post("/api/experiments/", upload_data(tiny_cluster, tiny_trace, algorithms=["flagged"], **extra))
        assert response.status_code == 201, response.content
        assert Experiment.objects.get(pk=response.json()["id"]).runs.get().params == {"flag": expected}, extra
    page = client.post(reverse("experiment-new"), upload_data(tiny_cluster, tiny_trace, algorithms=["flagged"]))
    assert page.status_code == 302 and Experiment.objects.latest("pk").runs.get().params == {"flag": False}
