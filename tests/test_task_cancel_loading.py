"""A run cancelled while its worker loads a large trace stops loading (the cancel is seen by the
heartbeat, and the loader checks every few rows)."""

from __future__ import annotations

import pytest

from scheduling import loaders
from scheduling.errors import InputError
from webapp.models import Experiment, Run
from workers import tasks
from workers.tasks import simulate_run

pytestmark = [pytest.mark.django_db]

ROWS = 5_000


def big_trace() -> str:
    header = "job_id,arrival,epochs,chunks,minibatches,batch_time,ps_update\n"
    return header + "".join(f"j{i},{i},1,2,2,60,30\n" for i in range(ROWS))


def test_parse_trace_calls_its_checkpoint_every_thousand_rows_and_stops_when_it_raises(tiny_cluster):
    cluster = loaders.parse_cluster(tiny_cluster)
    calls = []

    def checkpoint():
        calls.append(1)
        if len(calls) == 3:
            raise InputError("stopped")

    with pytest.raises(InputError, match="stopped"):
        loaders.parse_trace(big_trace(), cluster, "t.csv", "csv", checkpoint)
    assert len(calls) == 3


def test_a_run_cancelled_during_loading_stops_before_reading_the_whole_trace(
    tiny_cluster, settings, tmp_path, monkeypatch
):
    settings.MEDIA_ROOT = tmp_path
    exp = Experiment.objects.create(
        name="t", source="upload", cluster_text=tiny_cluster, trace_name="t.csv", trace_text=big_trace()
    )
    run = Run.objects.create(experiment=exp, algorithm="fifo")
    rows = []
    real = loaders.check_job_fits  # called for every row, on the plain CSV path too

    def counted(job, cluster, feasibility=None):
        rows.append(1)
        if len(rows) == 1500:  # the user cancels; the heartbeat passes the word on
            Run.objects.filter(pk=run.pk).update(cancel_requested=True)
            control.reason = "cancel"
            control.stop.set()
        return real(job, cluster, feasibility)

    control = tasks.Control()
    monkeypatch.setattr(tasks, "Control", lambda: control)
    monkeypatch.setattr(loaders, "check_job_fits", counted)
    assert simulate_run.apply((run.pk,)).get() == "cancelled"
    assert len(rows) <= 2000 < ROWS
    run.refresh_from_db()
    assert run.status == "cancelled"
