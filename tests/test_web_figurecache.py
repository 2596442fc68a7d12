"""A finished result's figures are built once per view: the same tab and query again come from the
cache, another query, another finished run or another code version draw it again."""

import pytest
from django.urls import reverse

from scheduling import provenance
from webapp import figurecache, results_io, services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]


@pytest.fixture
def client(auth_client):
    return auth_client


@pytest.fixture
def opened(monkeypatch):
    """The chart indexes and Gantt indexes the pages open, by run id."""
    seen = []
    chart_doc, gantt_index = services.load_chart_doc, services.load_gantt_index
    monkeypatch.setattr(results_io, "load_chart_doc", lambda r: (seen.append(("charts", r.pk)), chart_doc(r))[1])
    monkeypatch.setattr(results_io, "load_gantt_index", lambda r: (seen.append(("gantt", r.pk)), gantt_index(r))[1])
    return seen


def test_a_tab_seen_again_is_not_built_again(client, done_experiment, opened):
    url = reverse("experiment", args=[done_experiment.pk])
    first = client.get(url, {"tab": "jct"}).context["figures"]
    assert len(opened) == 3  # one chart index per done run
    again = client.get(url, {"tab": "jct"}).context["figures"]
    assert len(opened) == 3 and again == first
    runs = sorted(done_experiment.runs.values_list("pk", flat=True))
    client.get(url, {"tab": "jct", "a": runs[2], "b": runs[0]})  # another scatter: drawn
    assert len(opened) == 6
    client.get(url, {"tab": "jct", "a": runs[2], "b": runs[0], "unrelated": "x"})  # a query the tab does not read
    assert len(opened) == 6
    client.get(url, {"tab": "gantt", "run": runs[1]})
    client.get(url, {"tab": "gantt", "run": runs[1]})
    assert opened[6:] == [("gantt", runs[1])]


def test_another_code_version_or_a_newly_finished_run_draws_the_tab_again(done_experiment, monkeypatch):
    runs = list(done_experiment.runs.order_by("pk"))
    before = figurecache.key(done_experiment.pk, "time", {}, runs)
    assert figurecache.key(done_experiment.pk, "time", {}, runs[:2]) != before  # a run finishing later
    code = provenance.code()
    monkeypatch.setattr(provenance, "code", lambda: {**code, "commit": "another"})
    assert figurecache.key(done_experiment.pk, "time", {}, runs) != before


def test_figures_drawn_once_are_read_from_the_storage_by_another_process(client, done_experiment, opened):
    from django.core.cache import cache
    from django.core.files.storage import default_storage

    url = reverse("experiment", args=[done_experiment.pk])
    first = client.get(url, {"tab": "time"}).context["figures"]
    assert len(opened) == 3
    cache.clear()  # as in another web process, on another host or after a restart
    assert client.get(url, {"tab": "time"}).context["figures"] == first and len(opened) == 3
    folder = f"results/{done_experiment.pk}"
    assert any(f.startswith("figures-") for f in default_storage.listdir(folder)[1])
    services.delete_experiment(done_experiment)
    assert not any(f.startswith("figures-") for f in default_storage.listdir(folder)[1])


def test_the_worker_finishing_the_last_run_draws_the_tabs_in_advance(
    user, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from django.core.cache import cache
    from django.test import Client

    from tests.webhelpers import upload_data

    settings.MLSCHED_WARM_FIGURES = True
    c = Client()
    c.force_login(user)
    cluster = '{"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "n", "count": 2, "capacity": {"gpu": 8}}]}'
    trace = "job_id,arrival,gpus,duration\n" + "".join(f"j{i},{i},1,{60 * (1 + i % 5)}\n" for i in range(30))
    with django_capture_on_commit_callbacks(execute=True):  # the runs, simulated as a worker does
        response = c.post(reverse("experiment-new"), upload_data(cluster, trace, algorithms=["fifo", "srtf"]))
    exp_id = int(response.url.rstrip("/").rsplit("/", 1)[-1])
    cache.clear()
    seen = []
    monkeypatch.setattr(services, "load_chart_doc", lambda r: seen.append(r.pk))
    monkeypatch.setattr(services, "load_gantt_index", lambda r: seen.append(r.pk))
    for tab in ("jct", "time", "gantt"):
        assert c.get(reverse("experiment", args=[exp_id]), {"tab": tab}).context["figures"]
    assert seen == []  # every figure was read, none drawn on the visit
