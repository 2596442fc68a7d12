"""A Philly window on an Alibaba node list, in headless Chromium, run as the model of each paper:
the algorithm cards the model enables, asrpt greyed out until a history fraction is given, the
paper algorithm and baselines run (inline, by the task body), their Gantt and price pages."""

import re
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from tests.test_web_models import philly  # noqa: F401 (the fixture)
from tests.webhelpers import CHROMIUM_ARGS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.usefixtures("inline_tasks")]

# model -> (algorithms run: the paper's, a baseline of its paper, fifo; one the model cannot run)
FLOWS = {
    "zhou-ps": (["zhou", "jain-greedy", "fifo"], "oasis"),
    "oasis": (["oasis", "dorm", "fifo"], "zhou"),
    "edge-cloud": (["edge-cloud", "tiresias-l", "fifo"], "zhou"),
    "asrpt": (["asrpt", "spjf", "fifo"], "edge-cloud"),
}
PRICED = {"zhou", "oasis"}
SCREENSHOTS = Path(__file__).resolve().parent.parent / "var"


@pytest.fixture
def page(live_server, user):
    from playwright.sync_api import sync_playwright

    call_command("vendor_plotly", verbosity=0)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(60_000)
        errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.console_errors = errors
        yield sign_in(page, live_server)
        browser.close()


def files(name, text):
    return {"name": name, "mimeType": "text/plain", "buffer": text.encode()}


@pytest.mark.parametrize("model", list(FLOWS))
def test_a_philly_window_runs_as_the_model_of_each_paper_with_gantt_and_price_pages(
    page,
    live_server,
    philly,  # noqa: F811 (the imported fixture)
    model,
):
    algorithms, cannot = FLOWS[model]
    cluster, trace = philly
    page.goto(f"{live_server.url}/experiments/new/")
    page.set_input_files("#id_cluster_file", files("nodes.json", cluster))
    page.set_input_files("#id_trace_file", files("philly.csv", trace))
    card = page.locator(f".algorithm[data-algorithm='{cannot}']")
    expect(card).not_to_have_class(re.compile("unsupported"))
    page.select_option("#id_model", model)
    expect(card).to_have_class(re.compile("unsupported"))  # greyed out, with the reason under it
    expect(card.locator("[data-unsupported-reason]")).to_contain_text(f"{cannot} needs")
    paper = page.locator(f"input[name=algorithms][value='{algorithms[0]}']")
    if model == "asrpt":  # no history at all: refused with the reason until a fraction is given
        expect(paper).to_be_disabled()
        reason = page.locator(".algorithm[data-algorithm='asrpt'] [data-unsupported-reason]")
        expect(reason).to_contain_text("give a history fraction")
        page.fill("#id_history_fraction", "0.3")
    expect(paper).to_be_enabled()
    for name in algorithms:
        page.check(f"input[name=algorithms][value='{name}']")
    page.click("#experiment-form button[type=submit]")

    page.wait_for_url(re.compile(r"/experiments/\d+/$"))
    page.wait_for_selector("#metrics")
    expect(page.locator(".badge.done")).to_have_count(len(algorithms))
    adaptation = page.locator("#adaptation")
    expect(adaptation.locator("h2")).to_contain_text(model)
    assert adaptation.locator(".assumptions tbody tr").count() > 3
    SCREENSHOTS.mkdir(exist_ok=True)
    adaptation.screenshot(path=str(SCREENSHOTS / f"browser-model-{model}.png"))
    experiment = page.url
    runs = page.locator("#runs tr[data-run]").evaluate_all("rows => rows.map(r => r.dataset.run)")
    for run in runs:
        page.goto(f"{experiment}?tab=gantt&run={run}")
        chart = page.locator(".gantt.js-plotly-plot")
        expect(chart).to_have_count(1)
        assert chart.locator(".barlayer .point path").count() > 0
    priced = [r for r, name in zip(runs, algorithms, strict=True) if name in PRICED]
    for run in priced:
        page.goto(f"{experiment}?tab=prices&run={run}")
        expect(page.locator("#price-matrix-block")).to_be_visible()
        expect(page.locator("#price-matrix-block .js-plotly-plot").first).to_be_visible()
    assert page.console_errors == [], page.console_errors
