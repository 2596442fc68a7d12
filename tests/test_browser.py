"""The real pages in headless Chromium: live server, a Celery worker on Redis, the real form."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from scheduling import registry
from scheduling.prices import PriceLog, matrix_at
from tests.webhelpers import CHROMIUM_ARGS, SLOW, sign_in, single_entries

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.slow]

SCREENSHOTS = Path(__file__).resolve().parent.parent / "var"


@pytest.fixture
def page(live_server, redis_worker, user):
    """A Chromium page on the live server, signed in as ``user``. No ORM calls while it is open:
    Playwright's event loop runs in this thread, and Django refuses database access from an async
    context."""
    from playwright.sync_api import sync_playwright

    call_command("vendor_plotly")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)
        yield sign_in(page, live_server)
        browser.close()


def file_payload(name, text):
    return {"name": name, "mimeType": "text/plain", "buffer": text.encode()}


def test_an_upload_with_two_algorithms_ends_with_metrics_and_gantt_charts(page, live_server, tiny_cluster, tiny_trace):
    errors = []  # the Content-Security-Policy refuses nothing the pages (plotly.js included) do
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(f"{live_server.url}/experiments/new/")
    page.set_input_files("#id_cluster_file", file_payload("cluster.json", tiny_cluster))
    page.set_input_files("#id_trace_file", file_payload("trace.csv", tiny_trace))
    page.check("input[name=algorithms][value=fifo]")
    page.check("input[name=algorithms][value=drf]")
    assert page.is_visible("[data-params-for=fifo]") and not page.is_visible("[data-params-for=srtf]")
    page.click("#experiment-form button[type=submit]")

    page.wait_for_url(re.compile(r"/experiments/\d+/$"))
    page.wait_for_selector("#metrics")  # the page reloads itself once every run is done
    expect(page.locator("#metrics tbody th")).to_have_text(["fifo", "drf"])
    expect(page.locator(".badge.done")).to_have_count(2)
    experiment = page.url
    for run in page.locator("#runs tr[data-run]").evaluate_all("rows => rows.map(r => r.dataset.run)"):
        page.goto(f"{experiment}?tab=gantt&run={run}")
        chart = page.locator(".gantt.js-plotly-plot")
        expect(chart).to_have_count(1)
        assert chart.locator(".barlayer .point path").count() > 0
        assert chart.locator(".legend .legendtext").all_text_contents() == ["worker", "parameter server (PS)"]
    page.goto(f"{experiment}?tab=jct")
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    assert "Content-Security-Policy" not in " ".join(errors) and errors == [], errors
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "browser-experiment.png"), full_page=True)


def test_a_bad_upload_shows_the_error_and_creates_nothing(page, live_server, tiny_cluster):
    page.goto(f"{live_server.url}/experiments/new/")
    page.set_input_files("#id_cluster_file", file_payload("cluster.json", tiny_cluster))
    page.set_input_files("#id_trace_file", file_payload("bad.csv", "job_id,arrival\nj1,abc\n"))
    page.check("input[name=algorithms][value=fifo]")
    page.click("#experiment-form button[type=submit]")

    expect(page.locator(".field.has-error .error")).to_have_text(
        "bad.csv, line 2, job 'j1', field 'arrival': 'abc' is not a number"
    )
    expect(page.locator(".error.banner")).to_be_visible()
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "browser-bad-upload.png"), full_page=True)
    page.goto(f"{live_server.url}/")
    assert "No experiments yet" in page.inner_text("main")


@pytest.fixture
def blank_page(live_server):
    """A Chromium page with nothing loaded; the live server serves plotly.js and app.js."""
    from playwright.sync_api import sync_playwright

    call_command("vendor_plotly")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)
        yield page
        browser.close()


@pytest.mark.parametrize("schema", ["mlsched.prices/3", "mlsched.prices/2", "mlsched.prices/1"])
def test_the_price_matrix_is_rebuilt_as_matrix_at_does_on_a_fixed_colour_scale(blank_page, live_server, schema):
    """The prices block of app.js alone, on a log with pools (OASiS' initial_by_pool) and the
    optional declined wording, against ``matrix_at``; in every schema (runs of slots with a rebase
    from the decision's slot on; the same changes with a rebase of every slot, /2; and the single
    entries of results stored before the runs, /1)."""
    log = PriceLog(["gpu", "cpu"], ["w0", "w1", "ps-with-a-long-name"], slots=4, label="p/q",
                   pools=["worker", "worker", "ps"], initial_by_pool={"worker": 0.5, "ps": 0.25},
                   declined="not scheduled in this sub-round")  # fmt: skip
    prices = np.full(log.shape, 0.5)  # the pools' initial prices
    prices[:, 2, :] = 0.25
    for t, (h, value) in enumerate([(0, 2.0), (2, 7.5), (1, 3.0)]):
        prices[0, h, t:] = value
        log.record(t, f"j{t}", admitted=t != 1, prices=prices)
    # oasis bounds=arrived: L moved, every worker server's entry re-based before the changes
    prices[:, :2, :] = np.where(prices[:, :2, :] == 0.5, 0.75, prices[:, :2, :] * 1.5)
    log.record(3, "j3", admitted=True, prices=prices, rebase={"worker": 0.75})
    doc = log.to_dict()
    assert doc["decisions"][3]["rebase"] == {"worker": 0.75}
    assert any(c[3] > 1 for d in doc["decisions"] for c in d["changes"])  # runs of several slots
    if schema == "mlsched.prices/2":
        doc = {**doc, "schema": schema}
    elif schema == "mlsched.prices/1":
        doc = single_entries(doc)
    assert doc["schema"] == schema
    static = f"{live_server.url}/static"
    blank_page.set_content(f"""<select id="price-resource"><option value="0">gpu</option><option value="1">cpu</option>
      </select><input type="range" id="price-decision" min="0" max="3" value="0"><output id="price-decision-label">
      </output><div id="price-matrix"></div><script type="application/json" id="prices-data">{json.dumps(doc)}</script>
      <script src="{static}/vendor/plotly.min.js"></script><script src="{static}/js/app.js"></script>""")
    matrix = blank_page.locator("#price-matrix")
    for resource in ("gpu", "cpu"):
        blank_page.select_option("#price-resource", label=resource)
        for k in range(4):
            blank_page.locator("#price-decision").evaluate(
                f"s => {{ s.value = {k}; s.dispatchEvent(new Event('input')); }}"
            )
            expect(matrix).to_have_attribute("data-decision", str(k))
            trace = matrix.evaluate("m => m.data[0]")
            assert np.array_equal(np.array(trace["z"]), matrix_at(doc, k, resource)), (resource, k)
            # 0 pale, one scale for every decision: 0 to the highest price of the resource
            assert trace["reversescale"] is True and trace["zmin"] == 0
            assert trace["zmax"] == (7.5 if resource == "gpu" else 0.75)
            assert trace["colorbar"]["title"]["text"] == "p/q"
    assert blank_page.inner_text("#price-decision-label") == "#3 at slot 3: job j3 admitted"
    blank_page.locator("#price-decision").evaluate("s => { s.value = 1; s.dispatchEvent(new Event('input')); }")
    assert blank_page.inner_text("#price-decision-label") == "#1 at slot 1: job j1 not scheduled in this sub-round"
    # server names are not clipped: the y axis widens the left margin to fit them
    lefts = matrix.evaluate("""m => Array.from(m.querySelectorAll('.ytick text'),
        t => t.getBoundingClientRect().left - m.getBoundingClientRect().left)""")
    assert len(lefts) == 3 and min(lefts) >= 0, lefts


def test_pages_ask_for_no_missing_file(blank_page, live_server, transactional_db):
    """The icon: linked from our pages, /favicon.ico (which the admin site's pages make browsers
    ask for) sends to it; no console error (a 404 is one)."""
    errors = []
    blank_page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    for path in ("/accounts/login/", "/admin/login/"):
        blank_page.goto(live_server.url + path)
        blank_page.wait_for_load_state("networkidle")
    assert errors == []
    assert blank_page.goto(live_server.url + "/accounts/login/").ok
    href = blank_page.locator("link[rel=icon]").get_attribute("href")
    for url in (live_server.url + href, live_server.url + "/favicon.ico"):
        icon = blank_page.goto(url)
        assert icon.ok and icon.url.endswith("/static/favicon.svg") and icon.headers["content-type"] == "image/svg+xml"


def test_a_run_that_finishes_first_shows_its_links_and_loses_its_cancel_button(page, live_server, tiny_cluster,
                                                                                tiny_trace, monkeypatch):  # fmt: skip
    """The live view while another run still simulates: no reload, yet the finished run's row is as
    the page would render it (result links, no Cancel)."""
    monkeypatch.setitem(registry.REGISTRY, "slow", SLOW)
    page.goto(f"{live_server.url}/experiments/new/")
    page.set_input_files("#id_cluster_file", file_payload("cluster.json", tiny_cluster))
    page.set_input_files("#id_trace_file", file_payload("trace.csv", tiny_trace))
    page.check("input[name=algorithms][value=slow]")
    page.fill("[data-params-for=slow] input[name$=delay]", "0.5")  # 16 decisions: 8 s
    page.fill("#id_extra_runs", "slow delay=2")  # 32 s unless cancelled; runs after the first
    page.click("#experiment-form button[type=submit]")
    page.wait_for_url(re.compile(r"/experiments/\d+/$"))
    first, second = page.locator("#runs tr[data-run]").all()
    expect(first.locator("button.cancel")).to_have_count(1)
    expect(first.locator("[data-links]")).to_be_hidden()
    page.evaluate("window.notReloaded = true")

    expect(first.locator("[data-status]")).to_have_text("done", timeout=30_000)
    expect(first.locator("button.cancel")).to_have_count(0)
    expect(first.locator("a.export-jobs")).to_be_visible()
    run = first.get_attribute("data-run")
    assert first.locator("a.export-jobs").get_attribute("href").endswith(f"/runs/{run}/jobs.csv")
    expect(second.locator("button.cancel")).to_have_count(1)
    expect(second.locator("[data-links]")).to_be_hidden()
    assert page.evaluate("window.notReloaded") is True and page.locator("#metrics").count() == 0
    expect(page.locator("#no-results")).to_contain_text("1 of 2 runs done: show their results")

    page.click("#cancel-all")  # the second run stops at its next decision; then the page reloads
    page.wait_for_selector("#metrics", timeout=30_000)
    expect(page.locator("#runs .badge")).to_have_text(["done", "cancelled"])
