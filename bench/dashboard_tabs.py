"""Benchmark: every result tab of a 2,000-job comparison in headless Chromium, figure exports, and
the experiment list with 20 large experiments.

Usage: nice .venv/bin/python bench/dashboard_tabs.py [--jobs 2000] [--loads 3] [--list 20]

Server time per tab (Django test client): the first view with nothing cached, then the same view
again (finished results' figures are cached: webapp/figurecache.py).

Per tab (cold: a fresh browser context per load, as a first visit): the HTML response time and
size, the time until the first chart is drawn (``data-ready`` set when ``Plotly.newPlot``
resolves: the page is interactive there) and until every chart of the tab is drawn, read as
``performance.now()`` in the page; medians over ``--loads``. Exports: the SVG, PNG and PDF buttons
under the first JCT chart and the Gantt chart, the time the page records from click to file
(``data-exported-*``; skipped where the page has no such buttons). List: server time of ``/`` and
``GET /api/experiments`` with ``--list`` experiments whose trace and history texts are ~190 KB
each (Django test client, median of 5). Runs are real simulations of Philly-shaped rigid jobs,
stored as the workers store them; the server is gunicorn (2 workers) with SQLite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from dashboard_common import configure, experiment, gunicorn, rigid_inputs, session_cookie

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic"]  # fmt: skip
TABS = ("summary", "jct", "gantt", "time", "inputs")

DRAWN = """() => { const all = document.querySelectorAll('[data-figure]');
  return all.length > 0 && Array.from(all).every(d => d.dataset.ready === 'true'); }"""
FIRST = "() => document.querySelector('[data-figure][data-ready=true]') !== null"


def tab_times(browser, url, cookie, path, loads):  # type: ignore[no-untyped-def]
    rows = []
    for _ in range(loads):
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        ctx.add_cookies([{"name": cookie[0], "value": cookie[1], "url": url}])
        page = ctx.new_page()
        page.goto(url + path, timeout=180_000)
        charts = page.locator("[data-figure]").count()
        first = every = None
        if charts:
            page.wait_for_function(FIRST, timeout=180_000, polling=20)
            first = page.evaluate("performance.now()") / 1000
            page.wait_for_function(DRAWN, timeout=180_000, polling=20)
            every = page.evaluate("performance.now()") / 1000
        nav = page.evaluate("(() => { const n = performance.getEntriesByType('navigation')[0];"
                            " return [n.responseEnd, n.decodedBodySize]; })()")  # fmt: skip
        rows.append((nav[0] / 1000, nav[1], charts, first, every))
        ctx.close()
    return rows


def exports(browser, url, cookie, path, selector):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    ctx.add_cookies([{"name": cookie[0], "value": cookie[1], "url": url}])
    page = ctx.new_page()
    page.goto(url + path, timeout=180_000)
    chart = page.locator(selector).first
    chart.wait_for(timeout=180_000)
    page.wait_for_function(DRAWN, timeout=180_000, polling=50)
    out = {}
    if page.locator("[data-export]").count():
        for fmt in ("svg", "png", "pdf"):
            button = chart.locator(f"xpath=following-sibling::p//button[@data-export='{fmt}']")
            with page.expect_download(timeout=60_000):
                button.click()
            attr = f"data-exported-{fmt}"
            page.wait_for_function(f"d => d.getAttribute('{attr}') !== null", arg=chart.element_handle())
            out[fmt] = int(chart.get_attribute(attr)) / 1000
    ctx.close()
    return out


def median_s(values):  # type: ignore[no-untyped-def]
    """The median of ``values`` as "1.23 s", or "-" when the page had nothing to time."""
    return "-" if values[0] is None else f"{statistics.median(values):.2f} s"


def server_times(user, base, run):  # type: ignore[no-untyped-def]
    """Server time of each tab, first view (nothing cached) and the same view again (test client)."""
    from django.core.cache import cache
    from django.test import Client

    cache.clear()
    c = Client(HTTP_HOST="127.0.0.1")
    c.force_login(user)
    out = {}
    for tab in TABS:
        path = f"{base}?tab={tab}" + (f"&run={run}" if tab == "gantt" else "")
        times = []
        for _ in range(2):
            t = time.perf_counter()
            assert c.get(path).status_code == 200
            times.append(time.perf_counter() - t)
        out[tab] = times
    return out


def list_times(user, n):  # type: ignore[no-untyped-def]
    from django.test import Client
    from django.urls import reverse

    from webapp.models import ApiToken, Experiment

    text = "job_id,arrival,gpus,duration\n" + "".join(f"job-{i:06d},{i},1,60\n" for i in range(8000))  # ~190 KB
    for k in range(n):
        Experiment.objects.create(name=f"large {k}", source="upload", cluster_text="{}", trace_name="t.csv",
                                  trace_text=text, history_text=text, owner=user)  # fmt: skip
    c = Client(HTTP_HOST="127.0.0.1")  # an allowed host (not the test client's "testserver")
    c.force_login(user)
    _, key = ApiToken.issue(user, "bench")
    out = {}
    calls = (
        ("/", lambda: c.get(reverse("home"))),
        ("GET /api/experiments", lambda: c.get("/api/experiments/", HTTP_AUTHORIZATION=f"Token {key}")),
    )
    for label, call in calls:
        times = []
        for _ in range(5):
            t = time.perf_counter()
            assert call().status_code == 200
            times.append(time.perf_counter() - t)
        out[label] = statistics.median(times)
    return out, 2 * len(text) * n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--servers", type=int, default=16)
    ap.add_argument("--algorithms", default="fifo,srtf,tiresias")
    ap.add_argument("--loads", type=int, default=3)
    ap.add_argument("--list", type=int, default=20)
    a = ap.parse_args()
    var = configure()
    from django.contrib.auth.models import User

    user = User.objects.create_user("bench", password="bench")
    exp = experiment(user, f"{a.jobs} jobs", *rigid_inputs(a.jobs, a.servers), a.algorithms.split(","))
    run = exp.runs.order_by("pk").first()
    server_times(user, exp.get_absolute_url(), run.pk)  # warm-up: imports, first queries
    served = server_times(user, exp.get_absolute_url(), run.pk)
    listed, size = list_times(user, a.list)
    cookie = session_cookie(user).split("=", 1)
    server, url = gunicorn(2, var / "gunicorn.log")
    print(f"load average before the page loads: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    from playwright.sync_api import sync_playwright

    base = exp.get_absolute_url()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            for path in (f"{base}?tab=summary", f"{base}?tab=jct"):  # warm the server (imports, chart indexes)
                tab_times(browser, url, cookie, path, 1)
            print(f"\n{a.jobs:,}-job comparison of {a.algorithms} ({a.servers} servers), cold loads, "
                  f"median of {a.loads}")  # fmt: skip
            print("\n| tab | HTML response | HTML size | charts | first chart drawn | every chart drawn |")
            print("|---|---|---|---|---|---|")
            for tab in TABS:
                path = f"{base}?tab={tab}" + (f"&run={run.pk}" if tab == "gantt" else "")
                rows = tab_times(browser, url, cookie, path, a.loads)
                cells = [median_s([r[i] for r in rows]) for i in (0, 3, 4)]
                print(f"| {tab} | {cells[0]} | {rows[0][1] / 1024:.0f} KiB | {rows[0][2]} | {cells[1]} | {cells[2]} |",
                      flush=True)  # fmt: skip
            print("\n| export | SVG | PNG | PDF |")
            print("|---|---|---|---|")
            charts = (
                ("JCT: first chart", f"{base}?tab=jct", ".comparison.js-plotly-plot"),
                ("Gantt", f"{base}?tab=gantt&run={run.pk}", ".gantt.js-plotly-plot"),
            )
            for label, path, selector in charts:
                got = exports(browser, url, cookie, path, selector)
                cells = " | ".join(f"{got[f]:.2f} s" if f in got else "no button" for f in ("svg", "png", "pdf"))
                print(f"| {label} | {cells} |", flush=True)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    print("\nServer time per tab (test client): first view, then the same view again")
    for tab, (first, again) in served.items():
        print(f"- {tab}: {first:.3f} s, then {again:.3f} s")
    print(f"\nList pages with {a.list} experiments of {size / 1e6:.1f} MB of input texts (server time, median of 5):")
    for label, seconds in listed.items():
        print(f"- {label}: {seconds:.3f} s")
    print(f"\n(date {time.strftime('%Y-%m-%d %H:%M')}; load average at the end {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores)")  # fmt: skip


if __name__ == "__main__":
    main()
