"""The dashboard and the API compare metrics over completed jobs only at equal completed counts
(DESIGN section 9): the Repetitions tab, repetitions.json and the runs' summary table."""

import pytest
from django.test import Client

from tests.webhelpers import upload_data
from webapp.charts.tables import METRIC_COLUMNS, summary_table
from webapp.models import ApiToken, Experiment

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]


@pytest.fixture
def dropping(auth_client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks):
    """fifo, srtf and drf on the tiny inputs (3 jobs) over 6 algorithm seeds, every run done; then
    fifo reported as completing 2 of the 3 jobs on every seed, 10 slots below srtf's avg_jct, and
    drf as completing 2 on repetitions 0 and 1 and 1 slot below srtf on the other four."""
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "srtf", "drf"], repeat="seeds", repeat_seeds="6")
    with django_capture_on_commit_callbacks(execute=True):
        auth_client.post("/experiments/new/", data)
    exp = Experiment.objects.get()
    for r in exp.runs.all():
        base = 20.0 + r.repetition
        r.metrics["avg_jct"] = {"fifo": base - 10, "srtf": base, "drf": base - 1}[r.algorithm]
        if r.algorithm == "fifo" or (r.algorithm == "drf" and r.repetition < 2):
            r.metrics["completed"] = 2
        r.save()
    return exp


def test_the_repetitions_tab_says_not_comparable_where_completed_counts_differ(auth_client, dropping):
    response = auth_client.get(dropping.get_absolute_url() + "?metric=avg_jct&reference=srtf")
    detail = {row["variant"]: row for row in response.context["rep_detail"]}
    assert detail["fifo"]["verdict"] == "not comparable: fifo completed 12 of 18, srtf 18 of 18 over 6 pairs"
    assert (detail["fifo"]["wins"], detail["fifo"]["losses"], detail["fifo"]["not_comparable"]) == (0, 0, 6)
    assert (detail["drf"]["wins"], detail["drf"]["not_comparable"]) == (4, 2)
    assert detail["drf"]["note"].startswith("2 of 6 pairs not comparable (0, 1: drf completed 4 of 6, srtf 6 of 6")
    page = response.content.decode()
    assert "data-verdict>not comparable: fifo completed 12 of 18, srtf 18 of 18 over 6 pairs<" in page
    assert '<p class="meta" data-not-comparable="drf">drf: 2 of 6 pairs not comparable' in page
    best, note = response.context["rep_best"]["avg_jct"]
    assert best is None and "not separated from srtf (not comparable: fifo completed 12 of 18" in note
    # the censored average counts every job (the results' own values): compared on every pair
    assert "avg_jct_censored" in dict(response.context["rep_metrics"])
    censored = auth_client.get(dropping.get_absolute_url() + "?metric=avg_jct_censored&reference=srtf")
    rows = {row["variant"]: row for row in censored.context["rep_detail"]}
    assert rows["fifo"]["not_comparable"] == 0 and not rows["fifo"]["verdict"].startswith("not comparable")


def test_the_api_statistics_count_and_name_the_pairs_that_are_not_comparable(user, dropping):
    api = Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}")
    body = api.get(f"/api/experiments/{dropping.pk}/repetitions.json?reference=srtf").json()
    fifo = body["metrics"]["avg_jct"]["paired"]["fifo"]
    assert fifo["verdict"] == "not comparable: fifo completed 12 of 18, srtf 18 of 18 over 6 pairs"
    assert (fifo["n"], fifo["not_comparable"]) == (0, 6)
    drf = body["metrics"]["avg_jct"]["paired"]["drf"]
    assert (drf["n"], drf["not_comparable"]) == (4, 2) and "2 of 6 pairs not comparable" in drf["note"]
    assert body["metrics"]["completed"]["paired"]["fifo"]["not_comparable"] == 0  # counts compare as they are


def test_the_summary_table_marks_no_best_on_sums_over_completed_jobs_when_counts_differ():
    column = [key for key, _ in METRIC_COLUMNS]
    rows = [
        (1, "fifo", {}, {"completed": 2, "avg_jct": 5.0, "total_utility": 2.0}),
        (2, "srtf", {}, {"completed": 3, "avg_jct": 9.0, "total_utility": 3.0}),
    ]
    best = {r["algorithm"]: [column[i] for i, c in enumerate(r["cells"]) if c["best"]] for r in summary_table(rows)}
    assert best == {"fifo": [], "srtf": ["completed", "total_utility"]}
    rows[0][3]["completed"] = 3
    best = {r["algorithm"]: [column[i] for i, c in enumerate(r["cells"]) if c["best"]] for r in summary_table(rows)}
    assert best == {"fifo": ["avg_jct"], "srtf": ["total_utility"]}
