"""Experiments of more than one plain run, through Django's test client: parameter sweeps (the runs,
the chart of a metric against the swept value, the refusals) and one-click presets."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from scheduling import registry
from tests.webhelpers import upload_data
from webapp import charts
from webapp.models import ApiToken, Experiment
from webapp.runspecs import sweep_values

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")


@pytest.fixture
def client(auth_client):
    """Pages need a signed-in user (conftest ``auth_client``)."""
    return auth_client


def test_a_sweep_runs_each_algorithm_once_per_value_and_charts_the_metric_against_it(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    data = upload_data(
        tiny_cluster,
        tiny_trace,
        algorithms=["fifo", "drf"],
        mode="sweep",
        sweep_param="workers_max",
        sweep_values="1:3:1",
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, data)
    exp = Experiment.objects.get()
    assert response.status_code == 302
    assert exp.kind == "sweep" and exp.sweep == {"param": "workers_max", "values": [1, 2, 3]}
    assert sorted((r.algorithm, r.params["workers_max"]) for r in exp.runs.all()) == [
        ("drf", 1),
        ("drf", 2),
        ("drf", 3),
        ("fifo", 1),
        ("fifo", 2),
        ("fifo", 3),
    ]
    assert {r.status for r in exp.runs.all()} == {"done"}
    page = client.get(exp.get_absolute_url()).content.decode()
    assert "average JCT (slots) against workers_max" in page
    figure = json.loads(page.split('id="sweep-figure-0" type="application/json">')[1].split("</script>")[0])
    assert [t["name"] for t in figure["data"]] == ["fifo", "drf"]
    assert figure["data"][0]["x"] == [1, 2, 3]
    fifo = {r.params["workers_max"]: r.metrics["avg_jct"] for r in exp.runs.filter(algorithm="fifo")}
    assert figure["data"][0]["y"] == [fifo[1], fifo[2], fifo[3]]
    assert "total utility against" not in page  # the trace has no utility columns


def test_a_sweep_on_a_trace_with_utilities_charts_total_utility():
    with_utilities = {"avg_jct": 3.0, "total_utility": 40.0, "timeliness": {}}
    titles = [f["layout"]["title"]["text"] for f in charts.sweep_charts("x", [("fifo", 1, with_utilities)])]
    assert "total utility against x" in titles
    without = {k: v for k, v in with_utilities.items() if k != "timeliness"}
    assert "total utility against x" not in [
        f["layout"]["title"]["text"] for f in charts.sweep_charts("x", [("fifo", 1, without)])
    ]


@pytest.mark.parametrize(
    "values, message",
    [
        ("", "Give the values"),
        ("1:100:1", "more than 50"),
        ("1, x", "'x' is not a number"),
        ("0", "below the minimum"),
        ("3:1:1", "stop at least start"),
        ("1, inf", "'inf' is not a finite number"),
        ("1, nan", "'nan' is not a finite number"),
        ("1:inf:1", "'1:inf:1': start, stop and step must be finite numbers"),
    ],
)
def test_a_bad_sweep_is_refused_and_nothing_is_stored(client, tiny_cluster, tiny_trace, values, message):
    data = upload_data(tiny_cluster, tiny_trace, mode="sweep", sweep_param="workers_max", sweep_values=values)
    response = client.post(NEW, data)
    assert response.status_code == 200
    assert message in " ".join(response.context["form"].errors.get("sweep_values", []))
    assert Experiment.objects.count() == 0


def test_sweeping_a_parameter_an_algorithm_lacks_is_refused(client, tiny_cluster, tiny_trace):
    name = next(p.name for p in registry.get("drf").params if p.type in (int, float))
    lacking = next(n for n, s in registry.all_specs().items() if name not in {p.name for p in s.params})
    data = upload_data(
        tiny_cluster, tiny_trace, algorithms=[lacking], mode="sweep", sweep_param=name, sweep_values="1,2"
    )
    response = client.post(NEW, data)
    assert f"{lacking} has no parameter {name}" in " ".join(response.context["form"].errors["sweep_param"])


def test_one_click_presets_run_every_algorithm_that_supports_them(client, user, django_capture_on_commit_callbacks):
    from webapp.management.commands.load_examples import example

    assert 'value="demo"' in client.get(NEW).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("experiment-preset"), {"preset": "demo"})
    exp = Experiment.objects.get()
    assert response.url == exp.get_absolute_url() and exp.owner == user and exp.preset == "demo"
    assert [r.algorithm for r in exp.runs.all()] == [name for name, _ in example("demo").runs]
    assert {r.status for r in exp.runs.all()} == {"done"}
    assert client.post(reverse("experiment-preset"), {"preset": "nope"}).status_code == 404


def test_sweep_values_equal_as_numbers_are_one_value():
    assert sweep_values("1, 1.0, 01, 2") == ["1", "2"]


@pytest.mark.parametrize("value", ["inf", "1e400", "nan"])
def test_a_non_finite_parameter_is_refused_by_the_form_and_the_api(client, user, tiny_cluster, tiny_trace, value):
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["fifo"], fifo__workers_max=value)
    response = client.post(NEW, data)
    assert response.status_code == 200
    assert f"fifo: {value!r} is not a finite number" in response.context["form"].errors["fifo__workers_max"]
    api = Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}")
    response = api.post(
        "/api/experiments/", upload_data(tiny_cluster, tiny_trace, algorithms=["antman"], antman__quota=value)
    )
    assert response.status_code == 400
    assert response.json()["fields"]["antman__quota"] == [f"antman: {value!r} is not a finite number"]
    assert Experiment.objects.count() == 0
