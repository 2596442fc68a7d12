"""A status replay's recorded failures and kills on the dashboard (docs/formats.md, "Status replay"):
a marker with its own legend entry where the job's bars end on the Gantt chart, the counts in the
summary table, `outcome` and `ended` in the jobs CSV.

The instance of tests/test_status_replay.py: one 2-GPU server, fifo; a completes at 3, b (Failed)
ends at 5, c (Killed) at 6.
"""

import csv
import io
import json

import pytest
from django.urls import reverse

from tests.test_status_replay import TRACE
from tests.webhelpers import upload_data
from webapp import charts, services
from webapp.models import Experiment

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

CLUSTER = {"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "s0", "capacity": {"gpu": 2}}]}


@pytest.fixture
def client(auth_client):
    return auth_client


def experiment(client, capture, replay: bool, **extra) -> Experiment:
    spec = {**CLUSTER, **extra, **({"replay_status": True} if replay else {})}
    with capture(execute=True):
        client.post(reverse("experiment-new"), upload_data(json.dumps(spec), TRACE, algorithms=["fifo"]))
    exp = Experiment.objects.get()
    assert {r.status for r in exp.runs.all()} == {"done"}
    return exp


def test_recorded_failures_are_marked_on_the_gantt_counted_and_exported(client, django_capture_on_commit_callbacks):
    exp = experiment(client, django_capture_on_commit_callbacks, replay=True)
    run = exp.runs.get()
    page = client.get(exp.get_absolute_url(), {"tab": "gantt"})
    figure = page.context["figures"][0]["figure"]
    marks = {t["name"]: t for t in figure["data"] if t["type"] == "scatter"}
    assert set(marks) == {"failed (recorded in the trace)", "killed (recorded in the trace)"}
    failed, killed = marks["failed (recorded in the trace)"], marks["killed (recorded in the trace)"]
    assert (failed["x"], [c[:2] for c in failed["customdata"]]) == ([5], [["b", 5]])
    assert (killed["x"], [c[:2] for c in killed["customdata"]]) == ([6], [["c", 6]])
    assert "failed at slot %{customdata[1]} (recorded in the trace)" in failed["hovertemplate"]
    assert failed["marker"]["symbol"] != killed["marker"]["symbol"]
    bars = [t for t in figure["data"] if t["type"] == "bar" and t.get("showlegend") is False]
    (b,) = [y for t in bars for y, text in zip(t["y"], t["text"], strict=True) if text == "b"]
    assert failed["y"] == [b]  # on the failed job's own bar
    # the chart drawn from the stored index is the one drawn from the whole result
    assert figure == charts.gantt(services.load_result(run), figure["layout"]["title"]["text"])

    summary = client.get(exp.get_absolute_url(), {"tab": "summary"})
    columns = [k for k, _ in summary.context["metric_columns"]]
    assert columns[columns.index("completed") :][:3] == ["completed", "failed", "killed"]
    (row,) = summary.context["metric_rows"]
    cells = {k: c["text"] for k, c in zip(columns, row["cells"], strict=True)}
    assert (cells["completed"], cells["failed"], cells["killed"]) == ("1", "1", "1")
    assert "failed (trace)" in summary.content.decode()

    text = client.get(f"{exp.get_absolute_url()}runs/{run.pk}/jobs.csv").content.decode()
    jobs = {r["job_id"]: r for r in csv.DictReader(io.StringIO(text))}
    assert {k: (r["completion"], r["outcome"], r["ended"]) for k, r in jobs.items()} == {
        "a": ("3", "", ""),
        "b": ("", "failed", "5"),
        "c": ("", "killed", "6"),
    }


def test_without_a_replay_nothing_changes(client, django_capture_on_commit_callbacks):
    exp = experiment(client, django_capture_on_commit_callbacks, replay=False)
    run = exp.runs.get()
    figure = client.get(exp.get_absolute_url(), {"tab": "gantt"}).context["figures"][0]["figure"]
    assert not [t for t in figure["data"] if t["type"] == "scatter"]
    summary = client.get(exp.get_absolute_url(), {"tab": "summary"})
    assert tuple(summary.context["metric_columns"]) == charts.METRIC_COLUMNS
    header = client.get(f"{exp.get_absolute_url()}runs/{run.pk}/jobs.csv").content.decode().splitlines()[0]
    assert header.split(",") == list(services.JOB_COLUMNS)


def test_server_failures_keep_their_shading_on_the_gantt_tab(client, django_capture_on_commit_callbacks):
    """The stored index carries the failure trace too (scheduling.failures): the tab draws it as the
    chart of the whole result does."""
    exp = experiment(
        client, django_capture_on_commit_callbacks, replay=True, failures=[{"server": "s0", "start": 1, "end": 2}]
    )
    figure = client.get(exp.get_absolute_url(), {"tab": "gantt"}).context["figures"][0]["figure"]
    (down,) = [t for t in figure["data"] if t["name"] == "server down (failure)"]
    assert (down["base"], down["x"]) == ([1], [1])
    assert figure == charts.gantt(services.load_result(exp.runs.get()), figure["layout"]["title"]["text"])
