"""A repetition experiment in headless Chromium: 4 algorithms x 10 seeds of a preset from the real
form, run by a Celery worker on Redis; the repetitions tab shows CIs, paired differences and win
counts, the reference can be changed, and the per-repetition table downloads."""

import csv
import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from scheduling import reproduce
from tests.webhelpers import CHROMIUM_ARGS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.slow]

SCREENSHOTS = Path(__file__).resolve().parent.parent / "var"
ALGORITHMS = ["fifo", "srtf", "tiresias", "drf"]


@pytest.fixture
def page(live_server, redis_worker, user):
    """A Chromium page on the live server, signed in as ``user`` (as in test_browser.py)."""
    from playwright.sync_api import sync_playwright

    call_command("vendor_plotly")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        page.set_default_timeout(30_000)
        yield sign_in(page, live_server)
        browser.close()


def test_four_algorithms_over_ten_seeds_show_cis_paired_differences_win_counts_and_export(page, live_server):
    page.goto(f"{live_server.url}/experiments/new/")
    page.check("input[name=source][value=preset]")
    page.select_option("#id_preset", "demo")
    page.fill("#id_jobs", "8")
    for name in ALGORITHMS:
        page.check(f"input[name=algorithms][value={name}]")
    assert not page.is_visible("#id_repeat_seeds")
    page.check("input[name=repeat][value=seeds]")
    assert page.is_visible("#id_repeat_seeds") and not page.is_visible("#id_repeat_windows")
    page.fill("#id_repeat_seeds", "10")
    page.click("#experiment-form button[type=submit]")

    page.wait_for_url(re.compile(r"/experiments/\d+/$"))
    expect(page.locator("#runs tr[data-run]")).to_have_count(40)
    # The tab shows the runs done so far when the page is drawn (some may be done already) and
    # reloads itself once all are done.
    expect(page.locator(".badge.done")).to_have_count(40, timeout=240_000)
    overview_note = page.locator("p.meta", has_text="done runs of")
    expect(overview_note).to_contain_text("40 done runs of 4 variants", timeout=30_000)
    expect(page.locator("#rep-overview tbody th")).to_have_text(ALGORITHMS)
    expect(page.locator("#rep-overview tbody tr").first.locator("td").nth(1)).to_contain_text(re.compile(r"\[.+, .+\]"))

    # the default reference is the first variant; pick drf instead
    page.select_option("#rep-form select[name=reference]", "drf")
    page.click("#rep-form button[type=submit]")
    expect(page.locator("#rep-detail tr.reference th")).to_have_text("drf")
    others = page.locator("#rep-detail tbody tr:not(.reference)")
    expect(others).to_have_count(3)
    for row in others.all():
        counts = [int(row.locator(f"[data-{k}]").inner_text()) for k in ("wins", "ties", "losses")]
        assert sum(counts) == 10, counts
        assert row.locator("[data-verdict]").inner_text() in ("better", "worse", "no clear difference")
        assert re.fullmatch(r"\[.+, .+\]", row.locator("td").nth(6).inner_text())  # CI of the median difference
    expect(page.locator(".tab-body .js-plotly-plot")).to_have_count(2)  # paired differences, pooled CDF
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "browser-repetitions.png"), full_page=True)

    with page.expect_download() as download:
        page.click("#export-per-seed")
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    assert len(rows) == 40 and {r["status"] for r in rows} == {"done"}
    assert sorted({r["trace_seed"] for r in rows}, key=int) == [str(s) for s in range(10)]
    assert {r["variant"] for r in rows} == set(ALGORITHMS)

    # the reproductions page lists every reproducible figure with its buttons
    page.click("text=Reproductions")
    expect(page.locator("section.reproduction")).to_have_count(len(reproduce.FIGURES))
    expect(page.locator("#reproduction-zhou-fig2 button", has_text="Launch as an experiment")).to_have_count(1)
    page.screenshot(path=str(SCREENSHOTS / "browser-reproductions.png"), full_page=True)
