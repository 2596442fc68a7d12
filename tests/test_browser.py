"""The real pages in headless Chromium: live server, a Celery worker on Redis, the real form."""

import re
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.slow]

SCREENSHOTS = Path(__file__).resolve().parent.parent / "var"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


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
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", "alice")
        page.fill("#id_password", "alice-password-1")
        page.click("#login-form button[type=submit]")
        page.wait_for_selector("#account-link")
        yield page
        browser.close()


def file_payload(name, text):
    return {"name": name, "mimeType": "text/plain", "buffer": text.encode()}


def test_an_upload_with_two_algorithms_ends_with_metrics_and_gantt_charts(page, live_server, tiny_cluster, tiny_trace):
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
