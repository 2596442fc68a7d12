"""A trace check (and the raw import it does) never stays "running" for ever: a failure while its
input is read is recorded, its heartbeat shows that a long check is alive, and a check whose worker
died is checked again once, then failed (docs/architecture.md, "Trace checks")."""

from __future__ import annotations

import io
import time
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.utils import timezone

from webapp import tracechecks
from webapp.models import Dataset, InputText, TraceCheck
from workers import checks, tasks


@pytest.fixture
def empty_queue(monkeypatch):
    """The broker's queue holds no message (the inline worker took them, or the broker lost them)."""
    monkeypatch.setattr(tasks, "queued_messages", lambda: 0)


@pytest.fixture
def pair(db, user, tiny_cluster, tiny_trace, empty_queue):
    cluster = Dataset.objects.create(owner=user, kind="cluster", name="c.json", text=tiny_cluster)
    trace = Dataset.objects.create(owner=user, kind="trace", name="t.csv", text=tiny_trace)
    return trace, cluster


def died(check: TraceCheck) -> None:
    """The state a worker killed during the check leaves."""
    TraceCheck.objects.filter(pk=check.pk).update(status="running", updated=timezone.now() - timedelta(hours=1))


@pytest.mark.usefixtures("inline_tasks")
def test_a_raw_import_whose_file_this_worker_cannot_read_ends_failed_not_running(pair):
    trace, cluster = pair
    Dataset.objects.filter(pk=trace.pk).update(input=InputText.intern(""), size=0)
    check = TraceCheck.objects.create(
        trace=trace, cluster=cluster, raw="dataset-imports/missing.raw", import_options={"file": "raw.csv"}
    )  # the upload is on another host's disk, or was deleted
    with pytest.raises(FileNotFoundError):
        tasks.check_trace(check.pk)
    check.refresh_from_db()
    assert check.status == "failed" and check.error.startswith("internal error: FileNotFoundError")


@pytest.mark.usefixtures("inline_tasks")
def test_a_check_whose_worker_died_is_checked_again_and_completes(pair):
    trace, cluster = pair
    check = TraceCheck.objects.create(trace=trace, cluster=cluster)
    died(check)
    assert tracechecks.recover_checks() == {"checks_requeued": 1, "checks_failed": 0, "checks_sent": 1}
    check.refresh_from_db()  # sent again: checked by the (inline) worker
    assert check.status == "done" and check.summary["jobs"] == 3 and check.error == ""
    assert tracechecks.recover_checks() == {"checks_requeued": 0, "checks_failed": 0, "checks_sent": 0}


@pytest.mark.usefixtures("inline_tasks")
def test_a_raw_import_lost_twice_fails_with_the_reason_and_keeps_nothing(pair, monkeypatch):
    trace, cluster = pair
    Dataset.objects.filter(pk=trace.pk).update(input=InputText.intern(""), size=0)
    raw = default_storage.save("dataset-imports/1.raw", io.BytesIO(b"job_id,submit_time\n"))
    check = TraceCheck.objects.create(trace=trace, cluster=cluster, raw=raw, import_options={"file": "raw.csv"})
    monkeypatch.setattr(tasks, "send_check", lambda check_id: None)  # no worker takes it
    died(check)
    assert tracechecks.recover_checks()["checks_requeued"] == 1
    died(check)  # its second worker died too
    assert tracechecks.recover_checks()["checks_failed"] == 1
    check.refresh_from_db()
    assert check.status == "failed" and check.error.startswith("lost: the worker stopped or was killed while checking")
    assert check.raw == "" and not default_storage.exists(raw)


@pytest.mark.usefixtures("inline_tasks")
def test_a_check_whose_message_is_missing_is_sent_again_by_the_recovery_command(pair, settings, monkeypatch):
    trace, cluster = pair
    check = TraceCheck.objects.create(trace=trace, cluster=cluster)  # queued while the broker was down
    old = timezone.now() - timedelta(seconds=settings.MLSCHED_REDISPATCH_AFTER + 1)
    TraceCheck.objects.filter(pk=check.pk).update(updated=old)
    monkeypatch.setattr(tasks, "queued_messages", lambda: 1)  # its message is there: behind a backlog
    call_command("recover_runs", stdout=io.StringIO())
    assert TraceCheck.objects.get(pk=check.pk).status == "queued"
    monkeypatch.setattr(tasks, "queued_messages", lambda: 0)  # lost, or never sent
    call_command("recover_runs", stdout=io.StringIO())
    check.refresh_from_db()
    assert check.status == "done"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("empty_queue")
def test_a_long_check_beats_so_the_recovery_leaves_it_alone(user, tiny_cluster, tiny_trace, settings, monkeypatch):
    settings.MLSCHED_HEARTBEAT = 0.1
    settings.MLSCHED_HEARTBEAT_TIMEOUT = 0.5
    cluster = Dataset.objects.create(owner=user, kind="cluster", name="c.json", text=tiny_cluster)
    trace = Dataset.objects.create(owner=user, kind="trace", name="t.csv", text=tiny_trace)
    check = TraceCheck.objects.create(trace=trace, cluster=cluster)
    inner = checks.check_trace
    seen = {}

    def slow_check(data, report):  # a 200k-row trace takes minutes to load: here, three timeouts
        time.sleep(1.5)
        seen["recovery"] = tracechecks.recover_checks()
        return inner(data, report)

    monkeypatch.setattr(checks, "check_trace", slow_check)
    monkeypatch.setattr(tasks, "send_check", lambda check_id: seen.setdefault("sent", check_id))
    assert tasks.check_trace(check.pk) == "done"
    assert seen["recovery"]["checks_requeued"] == 0 and "sent" not in seen
    check.refresh_from_db()
    assert check.status == "done"
