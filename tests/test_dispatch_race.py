"""Each run is sent once even when a recovery runs while a submission (or another recovery) is
sending: the messages are counted in the real Redis queue (docs/architecture.md, "A run's life")."""

from __future__ import annotations

from datetime import timedelta

import pytest
import redis
from django.utils import timezone

from tests.conftest import TEST_QUEUE, TEST_REDIS_URL
from webapp import services
from webapp.models import Experiment, Run
from workers import tasks

pytestmark = [pytest.mark.redis]


@pytest.fixture
def queue(redis_broker):
    client = redis.Redis.from_url(TEST_REDIS_URL)
    client.delete(TEST_QUEUE)
    yield client
    client.delete(TEST_QUEUE)


def messages_per_run(queue) -> dict[int, int]:
    import base64
    import json

    counts: dict[int, int] = {}
    for raw in queue.lrange(TEST_QUEUE, 0, -1):
        body = json.loads(base64.b64decode(json.loads(raw)["body"]))
        run_id = body[0][0]
        counts[run_id] = counts.get(run_id, 0) + 1
    return counts


def recovery_while_sending(monkeypatch, calls=1):
    """A recovery (``manage.py recover_runs``) runs right after the first group's messages reached
    the broker, before the sender records anything more: the window of the race."""
    send = tasks.send_runs
    recoveries = []

    def send_then_recover(run_ids):
        send(run_ids)
        if len(recoveries) < calls:
            recoveries.append({})
            recoveries[-1].update(services.recover_runs())

    monkeypatch.setattr(tasks, "send_runs", send_then_recover)
    return recoveries


def sweep(tiny_cluster, tiny_trace, n):
    exp = Experiment.objects.create(
        name="t", source="upload", cluster_text=tiny_cluster, trace_name="t.csv", trace_text=tiny_trace
    )
    return exp, [Run.objects.create(experiment=exp, algorithm="fifo", dispatched=False).pk for _ in range(n)]


def test_a_recovery_during_a_submissions_sending_sends_none_of_its_runs_again(
    queue, monkeypatch, tiny_cluster, tiny_trace
):
    exp, ids = sweep(tiny_cluster, tiny_trace, 40)
    recoveries = recovery_while_sending(monkeypatch)
    sent = services.dispatch(exp.pk, ids)  # what create_experiment does once committed
    assert messages_per_run(queue) == dict.fromkeys(ids, 1)
    assert sent == 40 and recoveries[0]["dispatched"] == 0 and recoveries[0]["resent"] == 0
    assert not Run.objects.filter(dispatched=False).exists()


def test_two_recoveries_resending_lost_messages_send_each_run_once(
    queue, monkeypatch, settings, tiny_cluster, tiny_trace
):
    _, ids = sweep(tiny_cluster, tiny_trace, 12)
    long_ago = timezone.now() - timedelta(seconds=settings.MLSCHED_REDISPATCH_AFTER + 60)
    Run.objects.filter(pk__in=ids).update(dispatched=True, dispatched_at=long_ago)  # sent, messages lost
    recoveries = recovery_while_sending(monkeypatch)
    resent = services.recover_runs()["resent"]
    assert messages_per_run(queue) == dict.fromkeys(ids, 1)
    assert resent == 12 and recoveries[0]["resent"] == 0  # the second recovery found every message queued


def test_runs_the_broker_refused_wait_unsent_and_are_sent_once_when_it_is_back(
    queue, monkeypatch, tiny_cluster, tiny_trace
):
    from kombu.exceptions import OperationalError

    exp, ids = sweep(tiny_cluster, tiny_trace, 3)
    send = tasks.send_runs

    def down(run_ids):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks, "send_runs", down)
    assert services.dispatch(exp.pk, ids) is None
    assert Run.objects.filter(dispatched=False).count() == 3 and Experiment.objects.get().pending_dispatch
    monkeypatch.setattr(tasks, "send_runs", send)
    assert services.recover_runs()["dispatched"] == 3
    assert messages_per_run(queue) == dict.fromkeys(ids, 1) and not Experiment.objects.get().pending_dispatch
