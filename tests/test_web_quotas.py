"""Per-user quotas (docs/security.md, "Quotas"): each refused with a message saying which limit
and what to do; nothing is stored."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.webhelpers import upload_data
from webapp.models import ApiToken, Experiment

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")


@pytest.fixture
def client(auth_client):
    return auth_client


def test_experiments_past_the_hourly_limit_are_refused(client, settings, tiny_cluster, tiny_trace):
    settings.MLSCHED_QUOTA_EXPERIMENTS_PER_HOUR = 2
    for _ in range(2):
        assert client.post(NEW, upload_data(tiny_cluster, tiny_trace)).status_code == 302
    refused = client.post(NEW, upload_data(tiny_cluster, tiny_trace))
    assert refused.status_code == 429
    assert "You created 2 experiments in the last hour" in refused.content.decode()
    assert Experiment.objects.count() == 2


def test_runs_past_the_active_limit_are_refused_on_the_page_and_the_api(
    client, user, settings, tiny_cluster, tiny_trace, monkeypatch
):
    from workers import tasks

    monkeypatch.setattr(tasks, "send_runs", lambda ids: None)  # the runs stay queued
    settings.MLSCHED_QUOTA_ACTIVE_RUNS = 4
    assert client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf", "srtf"])).status_code
    refused = client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf"]))
    assert refused.status_code == 429
    assert "You have 3 runs queued or running and this experiment adds 2" in refused.content.decode()
    api = Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}")
    response = api.post("/api/experiments/", upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf"]))
    assert response.status_code == 429 and "at most 4 at once" in response.json()["error"]
    exp = Experiment.objects.get()
    rerun = client.post(reverse("experiment-rerun", args=[exp.pk]), follow=True)
    assert "at most 4 at once" in rerun.content.decode()
    assert Experiment.objects.count() == 1


def test_repeated_runs_count_each_repetition_against_the_active_limit(client, settings, tiny_cluster, tiny_trace):
    settings.MLSCHED_QUOTA_ACTIVE_RUNS = 3  # 2 algorithms x 2 seeds = 4 runs
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf"], repeat="seeds", repeat_seeds="1, 7")
    refused = client.post(NEW, data)
    assert refused.status_code == 429 and "this experiment adds 4" in refused.content.decode()
    assert not Experiment.objects.exists()


def test_a_preset_larger_than_the_web_limit_is_not_generated_in_the_request(client, settings):
    settings.MLSCHED_QUOTA_WEB_PRESET_JOBS = 50
    response = client.post(NEW, {"source": "preset", "preset": "demo", "jobs": "51", "algorithms": ["fifo"]})
    errors = response.context["form"].errors["jobs"]
    assert "at most 50 jobs are generated here" in errors[0]
    assert not Experiment.objects.exists()
