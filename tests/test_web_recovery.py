"""Lost-run recovery stays off the request path, and re-sends lost messages behind a backlog
(docs/architecture.md, "A run's life"; docs/security.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from webapp import recovery, services
from webapp.models import ApiToken, Experiment, Run, ShareLink
from workers import tasks

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def experiment(user, tiny_cluster, tiny_trace):
    return Experiment.objects.create(
        owner=user, name="t", source="upload", cluster_text=tiny_cluster, trace_name="t.csv", trace_text=tiny_trace
    )


def test_no_page_or_api_call_runs_the_recovery(auth_client, user, experiment, settings, monkeypatch):
    settings.MLSCHED_RECOVER_EVERY = 0  # were pages to recover, each of them would
    calls = []
    monkeypatch.setattr(recovery, "recover_runs", lambda *a, **k: calls.append(1) or {})
    monkeypatch.setattr(tasks, "queued_messages", lambda: calls.append(1) or 0)
    Run.objects.create(experiment=experiment, algorithm="fifo")
    token = ShareLink.objects.create(experiment=experiment).token
    api = Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}")
    for response in (
        auth_client.get(reverse("home")),
        auth_client.get(reverse("experiment", args=[experiment.pk])),
        auth_client.get(reverse("experiment-status", args=[experiment.pk])),
        Client().get(f"/s/{token}/"),
        api.get("/api/experiments/"),
        api.get(f"/api/experiments/{experiment.pk}/"),
    ):
        assert response.status_code == 200
    assert calls == []


def test_lost_messages_behind_a_backlog_are_sent_again_oldest_first(experiment, settings, monkeypatch):
    sent = []
    monkeypatch.setattr(tasks, "send_runs", sent.extend)
    monkeypatch.setattr(tasks, "queued_messages", lambda: 3)  # a backlog: the queue is not empty
    now = timezone.now()
    runs = [Run.objects.create(experiment=experiment, algorithm="fifo") for _ in range(5)]
    for age, run in zip((500, 400, 300, 200, 100), runs, strict=True):
        Run.objects.filter(pk=run.pk).update(dispatched_at=now - timedelta(seconds=age))
    settings.MLSCHED_REDISPATCH_AFTER = 60
    assert services.recover_runs()["resent"] == 2  # 5 runs wait, 3 messages: 2 were lost
    assert sent == [runs[0].pk, runs[1].pk]
    monkeypatch.setattr(tasks, "queued_messages", lambda: 5)
    assert services.recover_runs()["resent"] == 0  # every waiting run has its message


def test_the_page_notes_runs_that_wait_long_for_a_worker(auth_client, experiment, settings):
    run = Run.objects.create(experiment=experiment, algorithm="fifo")
    page = auth_client.get(reverse("experiment", args=[experiment.pk])).content.decode()
    assert 'id="queue-note"' not in page
    long_ago = timezone.now() - timedelta(seconds=settings.MLSCHED_REDISPATCH_AFTER + 1)
    Run.objects.filter(pk=run.pk).update(dispatched_at=long_ago)
    page = auth_client.get(reverse("experiment", args=[experiment.pk])).content.decode()
    assert "1 run has waited more than 60 s for a worker" in page
