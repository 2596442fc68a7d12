"""Wide tables on narrow and short screens, in headless Chromium: at 360, 600 and 1000 px the page
never scrolls sideways (tables scroll inside their own wrappers, the top bar wraps); the summary
table's wrapper fits the viewport height, so its horizontal scrollbar is on screen; its header row
and Run column, and the Runs table's, stay in place while the wrapper scrolls; no console error."""

from pathlib import Path

import pytest
from django.core.management import call_command

from tests.webhelpers import CHROMIUM_ARGS, sign_in
from webapp import services
from webapp.models import Dataset, TraceCheck
from workers.tasks import simulate_run

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENSHOTS = Path(__file__).resolve().parent.parent / "var"
WIDTHS = (360, 600, 1000)
HEIGHT = 760


@pytest.fixture
def experiment(live_server, inline_tasks, user, tiny_cluster, tiny_trace, settings):
    """A done experiment of 20 fifo variants whose labels name four parameters each."""
    settings.MLSCHED_HEARTBEAT = 3600
    runs = [
        ("fifo", {"workers_min": 1 + k % 2, "workers_max": 10 + k, "ps": 1 + k % 3, "backfill": k % 2 == 0})
        for k in range(20)
    ]
    inputs = services.Inputs("upload", "cluster.json", tiny_cluster, "a-trace-with-a-long-name.csv", tiny_trace)
    sub = services.Submission(name="twenty variants of fifo with long labels", inputs=inputs, runs=runs, seed=0)
    exp = services.create_experiment(sub, user)
    for run in exp.runs.all():
        if run.status != "done":
            simulate_run(run.pk)
    assert set(exp.runs.values_list("status", flat=True)) == {"done"}
    Dataset.objects.create(owner=user, kind="cluster", name="c.json", text=tiny_cluster, size=len(tiny_cluster))
    Dataset.objects.create(
        owner=user, kind="trace", name="philly-" + "x" * 80 + "-generic-gpu.csv", text=tiny_trace, size=len(tiny_trace)
    )
    failed = Dataset.objects.create(owner=user, kind="trace", name="raw-" + "y" * 80 + "-generic-gpu.csv", text="")
    error = "raw-" + "y" * 80 + ".csv, line 3, field 'submit_time': 'soon' is not a time"
    cluster = Dataset.objects.get(kind="cluster")
    TraceCheck.objects.create(trace=failed, cluster=cluster, status="failed", error=error, import_options={"file": "r"})
    exp.dataset_pks = list(Dataset.objects.order_by("kind").values_list("pk", flat=True))  # read before the browser
    return exp


@pytest.fixture
def repeated(experiment, user, tiny_cluster, tiny_trace):
    """A done experiment of five fifo variants over three seeds."""
    inputs = services.Inputs("upload", "cluster.json", tiny_cluster, "t.csv", tiny_trace)
    runs = [("fifo", {"workers_max": 10 + k, "ps": 1 + k % 3, "backfill": k % 2 == 0}) for k in range(5)]
    repetition = {"over": "seeds", "seeds": [0, 1, 2], "trace_seeds": False}
    sub = services.Submission(name="repeated", inputs=inputs, runs=runs, seed=0, repetition=repetition)
    exp = services.create_experiment(sub, user)
    for run in exp.runs.all():
        if run.status != "done":
            simulate_run(run.pk)
    assert set(exp.runs.values_list("status", flat=True)) == {"done"}
    return exp


@pytest.fixture
def browser(experiment, repeated):
    from playwright.sync_api import sync_playwright

    call_command("vendor_plotly", verbosity=0)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield b
        b.close()


def open_page(browser, live_server, width):
    page = browser.new_page(viewport={"width": width, "height": HEIGHT})
    page.set_default_timeout(30_000)
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    return sign_in(page, live_server), errors


def page_fits(page):
    return page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")


FIRST_COLUMN = """(sel) => {
  const table = document.querySelector(sel), wrap = table.parentElement;
  wrap.scrollIntoView({block: 'start'});
  const view = window.innerHeight;
  const before = wrap.getBoundingClientRect();
  wrap.scrollLeft = wrap.scrollWidth;
  wrap.scrollTop = wrap.scrollHeight;
  const after = wrap.getBoundingClientRect();
  const cell = table.querySelector('tbody tr:last-child > :first-child').getBoundingClientRect();
  const head = table.querySelector('thead th:last-child').getBoundingClientRect();
  return {view, top: before.top, bottom: before.bottom, left: after.left + wrap.clientLeft,
          top_in: after.top + wrap.clientTop, cell: cell.left, head: head.top,
          overflow_x: wrap.scrollWidth > wrap.clientWidth, scrolled: wrap.scrollLeft,
          overflow_y: wrap.scrollHeight > wrap.clientHeight};
}"""


def check_sticky(page, selector, width, overflows):
    box = page.evaluate(FIRST_COLUMN, selector)
    assert box["bottom"] <= box["view"] + 1, (width, selector, box)  # the horizontal scrollbar is on screen
    if overflows:
        assert box["overflow_x"] and box["scrolled"] > 0, (width, selector, box)  # not vacuous
    assert abs(box["cell"] - box["left"]) <= 1, (width, selector, box)  # the first column stays
    if box["overflow_y"]:
        assert abs(box["head"] - box["top_in"]) <= 1, (width, selector, box)  # the header row stays
    return box


@pytest.mark.parametrize("width", WIDTHS)
def test_the_experiment_page_never_scrolls_sideways_and_its_tables_keep_header_and_first_column(
    browser, live_server, experiment, width
):
    page, errors = open_page(browser, live_server, width)
    page.goto(f"{live_server.url}{experiment.get_absolute_url()}?tab=summary")
    page.wait_for_selector("#metrics tbody tr")
    assert page.locator("#metrics tbody tr").count() == 20
    scroll_width, inner = page_fits(page)
    assert scroll_width <= inner, (width, scroll_width, inner)
    summary = check_sticky(page, "#metrics", width, overflows=width < 1000)
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"browser-table-{width}.png"))  # scrolled right and down
    assert summary["overflow_y"] or width >= 1000  # 20 runs are taller than the wrapper on a 760 px screen
    check_sticky(page, "#runs table", width, overflows=width < 600)
    align = page.evaluate(
        """() => [...document.querySelectorAll('#metrics tbody tr:first-child td, #metrics thead th + th')]
                 .map(c => getComputedStyle(c).textAlign)"""
    )
    assert set(align) == {"right"}, align  # numbers and their headers right-aligned
    assert page_fits(page)[0] <= inner
    for tab in ("jct", "gantt", "inputs"):
        page.goto(f"{live_server.url}{experiment.get_absolute_url()}?tab={tab}")
        page.wait_for_load_state("load")
        assert page_fits(page)[0] <= inner, (width, tab, page_fits(page))
    assert errors == []


@pytest.mark.parametrize("width", WIDTHS)
def test_the_repetitions_tables_scroll_in_their_wrappers_with_header_and_first_column(
    browser, live_server, repeated, width
):
    page, errors = open_page(browser, live_server, width)
    page.goto(f"{live_server.url}{repeated.get_absolute_url()}?tab=repetitions")
    page.wait_for_selector("#rep-detail tbody tr")
    assert page_fits(page)[0] <= width, (width, page_fits(page))
    check_sticky(page, "#rep-overview", width, overflows=width < 1000)
    check_sticky(page, "#rep-detail", width, overflows=width < 1000)
    assert page_fits(page)[0] <= width
    assert errors == []


@pytest.mark.parametrize("width", WIDTHS)
def test_the_datasets_and_new_experiment_pages_never_scroll_sideways(browser, live_server, width, experiment):
    page, errors = open_page(browser, live_server, width)
    for path in ("/datasets/", "/experiments/new/", "/", *(f"/datasets/{pk}/" for pk in experiment.dataset_pks)):
        page.goto(f"{live_server.url}{path}")
        scroll_width, inner = page_fits(page)
        assert scroll_width <= inner, (width, path, scroll_width, inner)
    page.goto(f"{live_server.url}/datasets/")
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"browser-datasets-{width}.png"))
    check_sticky(page, "#datasets", width, overflows=width < 600)  # the long name scrolls in its wrapper
    assert errors == []
