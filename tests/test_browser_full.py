"""The whole path in headless Chromium (Debian package): sign in, datasets, a bad upload, a
comparison and a sweep, progress, every result tab, CSV export, a share link opened in a fresh
browser context without login, then revoked and refused."""

import csv
import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from scheduling import registry
from tests.test_browser import SCREENSHOTS, file_payload
from tests.webhelpers import CHROMIUM_ARGS, PRICED

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.slow]


@pytest.fixture
def browser(live_server, redis_worker, user, monkeypatch):
    """Chromium on the live server; ``user`` exists before the browser's event loop starts (no ORM
    calls while it runs). The test algorithm ``priced`` (fifo with a price log) is registered for
    the form and the in-process worker alike."""
    from playwright.sync_api import sync_playwright

    monkeypatch.setitem(registry.REGISTRY, "priced", PRICED)
    call_command("vendor_plotly")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield b
        b.close()


def new_page(browser, dialogs):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))  # a script that ran: XSS
    return page


def legends_clear_of_axis_titles(page):
    """Per drawn comparison chart with a legend: whether the legend's box misses the x-axis title's."""
    return page.locator(".comparison.js-plotly-plot").evaluate_all(
        """charts => charts.filter(c => c.querySelector('.legend') && c.querySelector('.xtitle')).map(c => {
            const a = c.querySelector('.legend').getBoundingClientRect();
            const b = c.querySelector('.xtitle').getBoundingClientRect();
            return a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
        })"""
    )


def test_the_whole_path(browser, live_server, tiny_cluster, tiny_trace):
    dialogs = []
    page = new_page(browser, dialogs)
    url = live_server.url

    # Sign in
    page.goto(f"{url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-password-1")
    page.click("#login-form button[type=submit]")
    expect(page.locator("#account-link")).to_have_text("alice")

    # A bad upload is refused with its line number; nothing is stored
    page.goto(f"{url}/experiments/new/")
    page.set_input_files("#id_cluster_file", file_payload("cluster.json", tiny_cluster))
    page.set_input_files("#id_trace_file", file_payload("bad.csv", "job_id,arrival\nj1,0\nj2,later\n"))
    page.check("input[name=algorithms][value=fifo]")
    page.click("#experiment-form button[type=submit]")
    expect(page.locator(".field.has-error .error")).to_have_text(
        "bad.csv, line 3, job 'j2', field 'arrival': 'later' is not a number"
    )

    # Upload a cluster and a trace; compare three algorithms (and the price-logging test one),
    # drf twice: ticked, and again with other parameters on an "Also run" line
    page.set_input_files("#id_cluster_file", file_payload("cluster.json", tiny_cluster))
    page.set_input_files("#id_trace_file", file_payload("trace.csv", tiny_trace))
    for name in ("fifo", "drf", "srtf", "priced"):
        page.check(f"input[name=algorithms][value={name}]")
    page.fill("#id_extra_runs", "drf workers_max=2")
    page.fill("#id_name", "three <b>algorithms</b>")
    page.click("#experiment-form button[type=submit]")
    page.wait_for_url(re.compile(r"/experiments/\d+/$"))
    comparison_url = page.url
    expect(page.locator("h1")).to_have_text("three <b>algorithms</b>")
    expect(page.locator("#runs progress")).to_have_count(5)  # progress bars while it runs
    page.wait_for_selector("#metrics", timeout=60_000)  # the page reloads itself once all are done
    expect(page.locator("#runs .badge.done")).to_have_count(5)
    expect(page.locator("#metrics tbody th", has_text="drf workers_max=2")).to_have_count(1)

    # Summary: sortable, best marked
    assert page.locator("#metrics td.best").count() > 0
    header = page.locator("#metrics th", has_text="avg JCT")
    header.click()
    expect(header).to_have_attribute("aria-sort", "ascending")
    values = [float(v or "inf") for v in page.locator("#metrics tbody tr").evaluate_all(
        "rows => rows.map(r => r.cells[4].dataset.sort)")]  # fmt: skip
    assert values == sorted(values)

    # JCT tab: bars, CDF, box, scatter (and the timeliness histogram only for utility runs)
    page.click("a.tab[data-tab=jct]")
    expect(page.locator(".comparison[data-ready=true]").first).to_be_visible()
    # the charts below the window are drawn one at a time after the first paint (static/js/app.js)
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.comparison[data-figure]')).every(d => d.dataset.ready === 'true')"
    )
    titles = page.locator(".comparison .gtitle").all_text_contents()
    for title in ("average JCT (slots)", "average wait before the first start (slots)", "total JCT (slots)",
                  "JCT distribution (completed jobs)", "JCT per completed job (box)"):  # fmt: skip
        assert title in titles, titles
    assert any(t.startswith("JCT per job: ") and "completed by both" in t for t in titles), titles
    expect(page.locator(".comparison[data-ready=true]")).to_have_count(page.locator(".comparison").count())
    clear = legends_clear_of_axis_titles(page)
    assert clear and all(clear), clear

    # Gantt tab: bars, a job filter kept in the URL
    page.click("a.tab[data-tab=gantt]")
    chart = page.locator(".gantt.js-plotly-plot")
    expect(chart).to_have_count(1)
    assert chart.locator(".barlayer .point path").count() > 0
    page.fill("input[name=job]", "j2")
    page.click("#gantt-filters button[type=submit]")
    expect(page).to_have_url(re.compile(r"tab=gantt.*job=j2"))
    texts = set(page.locator(".gantt .barlayer .bartext").all_text_contents())
    assert texts <= {"j2"}
    # zooming (as a mouse drag does) writes the window into the URL; reloading keeps it
    page.locator(".gantt").evaluate("(g) => Plotly.relayout(g, {'xaxis.range[0]': 2.4, 'xaxis.range[1]': 9.2})")
    expect(page).to_have_url(re.compile(r"job=j2.*t0=2&t1=10"))
    page.reload()
    expect(page.locator("input[name=t0]")).to_have_value("2")
    assert page.locator(".gantt").evaluate("(g) => g.layout.xaxis.range") == [2, 10]

    # Utilisation tab
    page.click("a.tab[data-tab=time]")
    expect(page.locator(".comparison.js-plotly-plot").first).to_be_visible()
    assert "gpu utilisation" in page.inner_text("#tab-time")
    # legends stay clear of the x-axis titles, also on a narrow screen (where they wrap)
    page.set_viewport_size({"width": 700, "height": 900})
    page.reload()
    expect(page.locator(".comparison[data-ready=true]")).to_have_count(page.locator(".comparison").count())
    clear = legends_clear_of_axis_titles(page)
    assert len(clear) >= 3 and all(clear), clear
    page.set_viewport_size({"width": 1280, "height": 900})

    # Prices tab: the slider rebuilds the server x slot matrix at the chosen decision
    page.click("a.tab[data-tab=prices]")
    expect(page.locator("#price-matrix.js-plotly-plot")).to_have_count(1)
    slider = page.locator("#price-decision")
    last = int(slider.get_attribute("max"))
    slider.evaluate(f"(s) => {{ s.value = {last}; s.dispatchEvent(new Event('input')); }}")
    expect(page.locator("#price-matrix")).to_have_attribute("data-decision", str(last))
    expect(page).to_have_url(re.compile(rf"decision={last}"))
    # the priced log has no "declined" wording: a decision not admitted reads as a rejection
    assert re.fullmatch(rf"#{last} at slot \d+: job j\d+ (admitted|rejected)", page.inner_text("#price-decision-label"))

    # Export a CSV
    page.click("a.tab[data-tab=summary]")
    with page.expect_download() as download:
        page.locator("a.export-jobs").first.click()
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    assert [r["job_id"] for r in rows] == ["j1", "j2", "j3"] and all(r["jct"] for r in rows)

    # Share, open in a fresh context without login, revoke, refused
    page.click("#create-share")  # on the Summary tab: the page comes back there, the link opens there
    share_url = page.locator(".share-url").first.input_value()
    assert re.search(r"/s/[A-Za-z0-9_-]{30,}/\?tab=summary$", share_url), share_url
    share_url = share_url.split("?")[0]
    guest = new_page(browser, dialogs)
    guest.goto(share_url + "?tab=gantt")
    expect(guest.locator("h1")).to_have_text("three <b>algorithms</b>")
    expect(guest.locator(".gantt.js-plotly-plot")).to_have_count(1)
    assert guest.locator("meta[name=robots]").get_attribute("content") == "noindex, nofollow"
    assert guest.locator("#create-share").count() == 0
    page.locator("button.revoke").first.click()
    expect(page.locator(".share-url")).to_have_count(0)
    response = guest.goto(share_url)
    assert response.status == 410  # gone: revoked
    expect(guest.locator("#share-unavailable h1")).to_have_text("Share link revoked")

    # A sweep from the library, its progress and its chart
    page.goto(f"{url}/experiments/new/")
    page.check("input[name=source][value=library]")
    # Options read "name · jobs over span · size · date": chosen by their name
    for select, name in (("#id_cluster_dataset", "cluster.json · "), ("#id_trace_dataset", "trace.csv · ")):
        page.select_option(select, page.locator(f"{select} option", has_text=name).first.get_attribute("value"))
    page.check("input[name=algorithms][value=fifo]")
    page.check("input[name=algorithms][value=drf]")
    page.check("input[name=mode][value=sweep]")
    page.select_option("#id_sweep_param", "workers_max")
    page.fill("#id_sweep_values", "1, 2, 4")
    page.click("#experiment-form button[type=submit]")
    page.wait_for_url(re.compile(r"/experiments/\d+/$"))
    page.wait_for_selector("#metrics", timeout=60_000)
    expect(page.locator("#runs .badge.done")).to_have_count(6)
    expect(page.locator(".comparison.js-plotly-plot").first).to_be_visible()
    assert "average JCT (slots) against workers_max" in page.inner_text("#tab-summary")

    SCREENSHOTS.mkdir(exist_ok=True)
    page.goto(comparison_url + "?tab=gantt")
    page.screenshot(path=str(SCREENSHOTS / "browser-full-gantt.png"), full_page=True)
    assert dialogs == []
