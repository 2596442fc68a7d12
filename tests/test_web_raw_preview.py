"""The Preview of a large raw GPU-job trace (over ``datasets.IMPORT_INLINE_BYTES``) is computed
without importing it whole (webapp/rawpreview.py) and says what the whole import and its check
say: the jobs, the first converted rows, the span and the offered load; "Add" then imports the
previewed file in the background."""

import re

import pytest

from tests.test_web_dataset_import import DATASETS, nodes, post_import  # noqa: F401 (fixture)
from webapp import datasets
from webapp.models import Dataset, TraceCheck

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]


@pytest.fixture
def client(auth_client):
    return auth_client


def shown(page):
    preview = page.split('id="dataset-preview"', 1)[1].split("</div>", 1)[0]
    load = re.search(r"offered load ([0-9.]+)", preview)
    span = re.search(r"Arrivals in slots (\d+)–(\d+)", preview)
    jobs = re.search(r"([\d,]+) jobs\)", preview)
    head = preview.split("<pre>", 1)[1].split("</pre>", 1)[0]
    return load and load.group(1), span and span.groups(), jobs and jobs.group(1), head


@pytest.mark.parametrize("options", [{}, {"start": "2017-10-09 06:00", "limit": "7"}])
def test_the_quick_preview_shows_what_the_whole_import_shows(client, nodes, monkeypatch, options):  # noqa: F811
    whole = shown(post_import(client, nodes, "philly_head.csv", action="preview", **options).content.decode())
    assert whole[0] is not None  # a trace imported whole in the request has its offered load
    monkeypatch.setattr(datasets, "IMPORT_INLINE_BYTES", 100)  # the fixture counts as large
    quick = shown(post_import(client, nodes, "philly_head.csv", action="preview", **options).content.decode())
    assert quick == whole
    assert not Dataset.objects.filter(kind="trace").exists()


def test_add_after_a_quick_preview_imports_the_file_in_the_background(
    client,
    nodes,  # noqa: F811
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    monkeypatch.setattr(datasets, "IMPORT_INLINE_BYTES", 100)
    response = post_import(client, nodes, "philly_head.csv", action="preview", limit="5")
    token, page = response.context["form"].data["draft"], response.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(DATASETS, {"kind": "import-gpu", "cluster": nodes.pk, "draft": token,
                                          "action": "add", "limit": "5"})  # fmt: skip
    trace = Dataset.objects.get(kind="trace")
    assert response.status_code == 302 and f"Preview: {trace.name} (trace" in page  # the name the preview gave
    assert TraceCheck.objects.get(trace=trace).status == "done"  # imported and checked by the task
    trace.refresh_from_db()
    assert trace.text.count("\n") == 1 + 5
