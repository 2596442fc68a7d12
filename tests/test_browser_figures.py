"""Figures as a person sees and takes them, in headless Chromium: a reproduction's figure drawn in
the page, framed and standalone; SVG, PNG and PDF exports of the JCT and Gantt charts that are valid
files, in under 2 s; a share link made on the Gantt tab that opens there; a status replay's failure
and kill marked on the Gantt chart."""

import re
import time
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from scheduling import reproduce
from tests.test_web_reproductions import SMALL
from tests.test_web_status_replay import experiment as replay_experiment
from tests.webhelpers import CHROMIUM_ARGS, sign_in
from workers import reproductions as task

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.usefixtures("inline_tasks")]

EXPORTS = Path(__file__).resolve().parent.parent / "var" / "exports"  # the files, to look at


@pytest.fixture
def client(auth_client):
    return auth_client


@pytest.fixture
def experiment(transactional_db, done_experiment):
    """The done experiment's id and its last run's, read before the browser's event loop starts."""
    return done_experiment.pk, done_experiment.runs.order_by("pk").last().pk


@pytest.fixture
def reproduced(transactional_db, settings, monkeypatch):
    """The small demo figure reproduced over 3 seeds, its cases run here by the task body."""
    from webapp import reproductions

    monkeypatch.setitem(reproduce.FIGURES, SMALL.name, SMALL)

    def send(name, seeds, out):  # out: the reproduction's folder name in the storage (webapp/reproductions.py)
        for point, seed, algorithm in task.cases_of(reproduce.FIGURES[name], seeds):
            task.reproduce_case.apply((name, seeds, point, seed, algorithm, out))

    monkeypatch.setattr(task, "send", send)
    reproductions.start(SMALL.name, "3")
    assert reproductions.state(SMALL.name)["status"] == "done"
    return SMALL.name


@pytest.fixture
def page(live_server, user):
    from playwright.sync_api import sync_playwright

    call_command("vendor_plotly", verbosity=0)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True).new_page()
        page.set_default_timeout(30_000)
        errors = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.console_errors = errors
        yield sign_in(page, live_server)
        browser.close()


def drawn_bars(frame, selector):
    """The number of bar paths plotly.js drew in the chart ``selector`` of ``frame``."""
    return frame.locator(f"{selector} .barlayer .point path").count()


def test_a_reproduction_figure_is_drawn_in_the_page_framed_and_standalone(reproduced, page, live_server):
    page.goto(f"{live_server.url}/reproductions/")
    section = page.locator(f"#reproduction-{reproduced}")
    chart = section.locator(".js-plotly-plot")
    expect(chart).to_have_attribute("data-ready", "true")
    assert drawn_bars(section, ".js-plotly-plot") == 2  # fifo and srtf at one point
    expect(section.locator(".reproduction-table tbody th").first).to_have_text(re.compile(r"fifo|srtf"))
    EXPORTS.parent.mkdir(exist_ok=True)
    section.screenshot(path=str(EXPORTS.parent / "browser-reproduction.png"))

    figure_url = f"{live_server.url}/reproductions/{reproduced}/figure.html"
    page.evaluate(  # framed by a page of the site
        """url => { const f = document.createElement('iframe'); f.id = 'framed'; f.src = url;
                    f.width = 900; f.height = 500; document.querySelector('main').appendChild(f); }""",
        figure_url,
    )
    framed = page.frame_locator("#framed")
    expect(framed.locator(".plotly-graph-div .barlayer .point path")).to_have_count(2, timeout=60_000)  # full plotly.js

    standalone = page.context.new_page()
    standalone.goto(figure_url)
    expect(standalone.locator(".plotly-graph-div .barlayer .point path")).to_have_count(2, timeout=60_000)
    assert page.console_errors == [], page.console_errors


def export(page, chart, fmt):
    """Click ``chart``'s export button for ``fmt``; the downloaded bytes and the seconds it took."""
    button = chart.locator(f"xpath=following-sibling::p[contains(@class,'chart-export')]//button[@data-export='{fmt}']")
    start = time.monotonic()
    with page.expect_download() as info:
        button.click()
    data = info.value.path().read_bytes()
    EXPORTS.mkdir(parents=True, exist_ok=True)
    (EXPORTS / info.value.suggested_filename).write_bytes(data)
    return info.value.suggested_filename, data, time.monotonic() - start


def check_files(page, chart, marks):
    name, svg, seconds = export(page, chart, "svg")
    assert name.endswith(".svg") and seconds < 2, (name, seconds)
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("width") == "960"
    text = svg.decode()
    assert all(mark in text for mark in marks), marks
    assert "fill: rgb(255, 255, 255)" in text or "fill:#ffffff" in text.replace(" ", "").lower()  # white paper

    name, png, seconds = export(page, chart, "png")
    assert name.endswith(".png") and png.startswith(b"\x89PNG\r\n\x1a\n") and seconds < 2, seconds
    assert int.from_bytes(png[16:20], "big") == 1920  # 960 px at 2x

    name, pdf, seconds = export(page, chart, "pdf")
    assert name.endswith(".pdf") and pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF"), name
    assert seconds < 2, seconds
    start = int(pdf.rsplit(b"startxref\n", 1)[1].split(b"\n")[0])
    assert pdf[start:].startswith(b"xref\n0 6\n")  # the cross-reference table is where the file says
    for n, line in enumerate(pdf[start:].split(b"\n")[3:8], start=1):
        offset = int(line.split()[0])
        assert pdf[offset:].startswith(f"{n} 0 obj".encode()), n
    assert b"/Width 2880" in pdf and b"/MediaBox [0 0 720 " in pdf
    head, rest = pdf.split(b"4 0 obj\n", 1)[1].split(b"\nstream\n", 1)
    height = int(re.search(rb"/Height (\d+)", head).group(1))
    pixels = zlib.decompress(rest[: int(re.search(rb"/Length (\d+)", head).group(1))])
    assert len(pixels) == 2880 * height * 3 and pixels[:3] == b"\xff\xff\xff"  # RGB, white paper


def test_jct_and_gantt_charts_export_as_valid_svg_png_and_pdf_files_in_paper_style(experiment, page, live_server):
    exp_pk, run = experiment
    page.goto(f"{live_server.url}/experiments/{exp_pk}/?tab=jct")
    bars = page.locator(".comparison.js-plotly-plot").first
    expect(bars).to_have_attribute("data-exportable", "true")
    check_files(page, bars, ["fifo", "drf", "srtf"])

    page.goto(f"{live_server.url}/experiments/{exp_pk}/?tab=gantt&run={run}")
    gantt = page.locator(".gantt.js-plotly-plot")
    expect(gantt).to_have_attribute("data-exportable", "true")
    check_files(page, gantt, ["node-0", "node-1"])
    assert page.console_errors == [], page.console_errors


@pytest.fixture
def replayed(transactional_db, client, django_capture_on_commit_callbacks):
    """A done fifo run of a status replay (tests/test_web_status_replay.py), before the browser starts."""
    return replay_experiment(client, django_capture_on_commit_callbacks, replay=True).pk


def test_a_status_replays_failure_and_kill_are_drawn_on_the_gantt(replayed, page, live_server):
    """The markers of docs/formats.md "Status replay" as plotly.js draws them: two points and their
    two legend entries, no error."""
    page.goto(f"{live_server.url}/experiments/{replayed}/?tab=gantt")
    gantt = page.locator(".gantt.js-plotly-plot")
    expect(gantt).to_have_attribute("data-ready", "true")
    expect(gantt.locator(".scatterlayer .point")).to_have_count(2)
    legend = gantt.locator(".legendtext").all_text_contents()
    assert "failed (recorded in the trace)" in legend and "killed (recorded in the trace)" in legend
    assert page.console_errors == [], page.console_errors


def test_a_share_link_made_on_the_gantt_tab_opens_on_the_gantt_tab(experiment, page, live_server):
    exp_pk, run = experiment
    page.goto(f"{live_server.url}/experiments/{exp_pk}/?tab=gantt&run={run}")
    expect(page.locator(".gantt.js-plotly-plot")).to_have_attribute("data-ready", "true")
    page.click("#create-share")
    page.wait_for_selector(".message")
    assert page.url.endswith(f"/experiments/{exp_pk}/?tab=gantt&run={run}")
    link = page.locator(".share-url").first.input_value()
    assert link.endswith(f"?tab=gantt&run={run}")
    guest = page.context.browser.new_context().new_page()
    guest.goto(link)
    expect(guest.locator("a.tab.active")).to_have_attribute("data-tab", "gantt")
    expect(guest.locator(".gantt.js-plotly-plot")).to_have_attribute("data-ready", "true")


@pytest.fixture
def large(transactional_db, user):
    """A done comparison of fifo and srtf on 2,000 Philly-shaped rigid jobs (16 servers of 8 GPUs)."""
    import json

    import numpy as np

    from webapp import services
    from workers.tasks import simulate_run

    rng = np.random.default_rng(7)
    arrivals = np.sort(rng.integers(0, 4000, 2000))
    rows = ["job_id,arrival,gpus,duration"] + [
        f"j{i:04d},{t},{g},{60 * d}"
        for i, (t, g, d) in enumerate(
            zip(arrivals, rng.choice([1, 1, 1, 2, 4, 8], 2000), rng.integers(1, 40, 2000), strict=True)
        )
    ]
    cluster = {"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "n", "count": 16, "capacity": {"gpu": 8}}]}
    inputs = services.Inputs("upload", "cluster.json", json.dumps(cluster), "trace.csv", "\n".join(rows) + "\n")
    exp = services.create_experiment(services.Submission("2,000 jobs", inputs, [("fifo", {}), ("srtf", {})], 0), user)
    for run in exp.runs.all():
        if run.status != "done":
            simulate_run(run.pk)
    assert set(exp.runs.values_list("status", flat=True)) == {"done"}
    return exp.pk, exp.runs.order_by("pk").first().pk


def test_every_tab_of_a_2000_job_comparison_draws_its_charts(large, page, live_server):
    exp_pk, run = large
    expected = {"jct": 5, "gantt": 1, "time": 3}  # at least: metric bars, CDF, box, scatter; Gantt; utilisation, events
    for tab in ("summary", "jct", "gantt", "time", "inputs"):
        page.goto(f"{live_server.url}/experiments/{exp_pk}/?tab={tab}" + (f"&run={run}" if tab == "gantt" else ""))
        charts = page.locator("[data-figure]")
        if tab not in expected:
            expect(page.locator(f"#tab-{tab}")).to_be_visible()
            continue
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('[data-figure]')).every(d => d.dataset.ready === 'true')"
        )
        assert charts.count() >= expected[tab], (tab, charts.count())
        for k in range(charts.count()):  # each drew traces (bars, lines, boxes, points, heat-map cells)
            chart = charts.nth(k)
            if chart.locator("g.trace, image").count() == 0:  # else it says why it has none
                assert chart.locator(".annotation-text").text_content() == "no suspension in any run", (tab, k)
    assert page.console_errors == [], page.console_errors
