"""The JCT and utilisation tabs read the chart index written beside each result, never the full
result document, and draw from it the same figures as from the result."""

import pytest
from django.core.files.storage import default_storage

from webapp import charts, results_io, services
from webapp.chartindex import chart_doc, chart_index, chart_index_name

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]


@pytest.fixture
def client(auth_client):
    return auth_client


def test_figures_drawn_from_the_chart_index_equal_those_drawn_from_the_result(done_experiment):
    docs = [(r.algorithm, services.load_result(r)) for r in done_experiment.runs.all()]
    light = [(label, chart_doc(chart_index(doc))) for label, doc in docs]
    for draw in (charts.utilization, charts.events_over_time, charts.metric_bars):
        assert draw(light) == draw(docs)
    assert charts.jct_cdf(light) == charts.jct_cdf(docs) and charts.jct_box(light) == charts.jct_box(docs)
    assert charts.jct_scatter(light[0], light[1]) == charts.jct_scatter(docs[0], docs[1])


def test_the_jct_and_utilisation_tabs_never_open_the_result_document(client, done_experiment, monkeypatch):
    def refuse(run):
        raise AssertionError("the full result was read")

    monkeypatch.setattr(results_io, "load_result", refuse)
    for tab in ("jct", "time"):
        response = client.get(done_experiment.get_absolute_url(), {"tab": tab})
        assert response.status_code == 200 and response.context["figures"]


def test_a_run_stored_before_chart_indexes_gets_one_on_its_first_view(client, done_experiment):
    run = done_experiment.runs.first()
    default_storage.delete(chart_index_name(run.result.name))
    assert client.get(done_experiment.get_absolute_url(), {"tab": "jct"}).status_code == 200
    assert default_storage.exists(chart_index_name(run.result.name))
