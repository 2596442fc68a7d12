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
