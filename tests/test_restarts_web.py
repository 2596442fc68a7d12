"""The experiment form and the JSON API take a restart cost, stored in the frozen cluster spec."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tests.webhelpers import upload_data
from webapp.models import Experiment

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")
RIGID = "job_id,arrival,gpus,duration\nr1,0,8,600\nr2,1,8,60\nr3,2,4,300\n"


def test_a_restart_cost_from_the_form_is_charged_to_every_run(
    auth_client, tiny_cluster, django_capture_on_commit_callbacks
):
    data = upload_data(tiny_cluster, RIGID, algorithms=["tiresias"], restart_seconds="120")
    data["tiresias__queue_thresholds"] = "60"
    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(NEW, data)
    assert response.status_code == 302
    exp = Experiment.objects.get()
    assert json.loads(exp.cluster_text)["restart_seconds"] == 120
    (run,) = exp.runs.all()
    assert run.status == "done"
    assert run.metrics["restarts"] > 0


def test_a_negative_restart_cost_is_refused_on_its_field(auth_client, tiny_cluster):
    response = auth_client.post(NEW, upload_data(tiny_cluster, RIGID, restart_seconds="-1"))
    assert response.status_code == 200
    assert "restart_seconds" in response.context["form"].errors
    assert not Experiment.objects.exists()


def test_a_restart_cost_applies_to_library_inputs_whose_trace_was_checked_before(
    auth_client, tiny_cluster, django_capture_on_commit_callbacks
):
    from scheduling.loaders import parse_cluster, parse_trace
    from webapp import tracechecks
    from webapp.models import Dataset
    from workers.checks import summarize

    auth_client.post(NEW, upload_data(tiny_cluster, RIGID, algorithms=["fifo"]))
    cluster, trace = Dataset.objects.get(kind="cluster"), Dataset.objects.get(kind="trace")
    # checked when added to the library: the form then takes the stored check's reasons, not the trace
    spec = parse_cluster(cluster.text, cluster.name)
    tracechecks.record(trace, cluster, summarize(parse_trace(trace.text, spec, trace.name, "csv"), spec))
    data = {"source": "library", "cluster_dataset": cluster.pk, "trace_dataset": trace.pk, "seed": "0"}
    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(NEW, {**data, "algorithms": ["fifo"], "restart_seconds": "120"})
    assert response.status_code == 302
    exp = Experiment.objects.order_by("-id").first()
    assert json.loads(exp.cluster_text)["restart_seconds"] == 120
    assert exp.runs.get().status == "done"
