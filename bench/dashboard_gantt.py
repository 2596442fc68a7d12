"""Benchmark: time to interactive of the Gantt page in headless Chromium (issue 7 targets: under
2 s for a 1,000-job run, under 5 s for a 100,000-segment run).

Usage: .venv/bin/python bench/dashboard_gantt.py [--big-jobs 100000] [--servers 150] [--loads 5]

Time to interactive = from navigation start until Plotly has drawn the chart (the page sets
``data-ready`` on the chart when ``Plotly.newPlot`` resolves), read as ``performance.now()`` in the
page; the HTML response time and size are reported beside it. Each page is loaded ``--loads``
times in fresh browser contexts (cold: no HTTP or code cache, as a first visit) and ``--loads``
times more in one context after a first visit (warm: plotly.js from the browser cache, as a
returning user); median and worst are printed. Runs are real
simulations (fifo on Philly-shaped rigid jobs; one placement segment per job), validated and
stored as the workers store them; the server is gunicorn with SQLite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from dashboard_common import configure, experiment, gunicorn, rigid_inputs, session_cookie

# Reference: a page holding only plotly.js and a two-bar chart (the floor any chart page pays), with
# the partial bundle the pages load (FLOOR_PATH) and with the full bundle (FULL_FLOOR_PATH).
FLOOR_HTML = """<!doctype html><html><head><script defer src="/static/vendor/plotly-cartesian.min.js"></script>
<script>document.addEventListener("DOMContentLoaded", () => { performance.mark("charts-start");
const c = document.querySelector(".gantt"); c.layout = {meta: {view: "reference"}};
Plotly.newPlot(c, [{type: "bar", x: [1, 2], y: [3, 4]}], {meta: {view: "reference"}})
  .then(() => { c.dataset.ready = "true"; }); });</script></head><body><div class="gantt"></div></body></html>"""
FLOOR_PATH = "/bench-reference-page"
FULL_FLOOR_PATH = "/bench-reference-page-full"
FULL_FLOOR_HTML = FLOOR_HTML.replace("plotly-cartesian.min.js", "plotly.min.js")

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic"]  # fmt: skip


def reference(html: str):  # type: ignore[no-untyped-def]
    """A route handler answering with ``html``."""
    return lambda route: route.fulfill(status=200, content_type="text/html", body=html)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small-jobs", type=int, default=1000)
    ap.add_argument("--big-jobs", type=int, default=100_000)
    ap.add_argument("--servers", type=int, default=150)
    ap.add_argument("--loads", type=int, default=5)
    ap.add_argument("--small-only", action="store_true", help="only the 1,000-job page")
    a = ap.parse_args()
    var = configure()
    from django.contrib.auth.models import User

    user = User.objects.create_user("bench", password="bench")
    cases = []
    small = experiment(user, "1k", *rigid_inputs(a.small_jobs, 16), ["fifo"])
    run = small.runs.get()
    cases.append((f"{a.small_jobs:,}-job run, 16 servers (bars)", f"{small.get_absolute_url()}?tab=gantt&run={run.pk}"))
    big = experiment(user, "big", *rigid_inputs(a.small_jobs if a.small_only else a.big_jobs, a.servers), ["fifo"])
    brun = big.runs.get()
    from webapp import services

    doc = services.load_result(brun)
    segments = len(doc["placements"])
    t_mid = sorted(p["start"] for p in doc["placements"])[segments // 2]
    base = f"{big.get_absolute_url()}?tab=gantt&run={brun.pk}"
    cases.append((f"{segments:,}-segment run, {a.servers} servers (aggregate view)", base))
    from webapp import charts

    window = [p for p in doc["placements"] if p["end"] > t_mid and p["start"] < t_mid + 40]
    cases.append((f"same run, window of 40 slots ({len(window):,} bars)", f"{base}&t0={t_mid}&t1={t_mid + 40}"))
    assert len(window) <= charts.MAX_BARS
    if a.small_only:
        cases = cases[:1]
    cases.insert(0, ("reference: partial plotly.js (cartesian) and a 2-bar chart only", FLOOR_PATH))
    cases.insert(1, ("reference: full plotly.js and a 2-bar chart only", FULL_FLOOR_PATH))
    cookie = session_cookie(user).split("=", 1)

    server, url = gunicorn(2, var / "gunicorn.log")
    print(f"load average before the page loads: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            print("\n| page | cache | TTI median | TTI worst | HTML response | plotly.js ready | HTML size | view |")
            print("|---|---|---|---|---|---|---|---|")
            for label, path in cases:
                for mode in ("cold", "warm"):
                    ttis, responses, starts = [], [], []
                    ctx = None
                    for i in range(a.loads + (1 if mode == "warm" else 0)):
                        if ctx is None or mode == "cold":
                            if ctx is not None:
                                ctx.close()
                            ctx = browser.new_context(viewport={"width": 1280, "height": 900})
                            ctx.add_cookies([{"name": cookie[0], "value": cookie[1], "url": url}])
                        page = ctx.new_page()
                        for route, html in ((FLOOR_PATH, FLOOR_HTML), (FULL_FLOOR_PATH, FULL_FLOOR_HTML)):
                            page.route(url + route, reference(html))
                        page.goto(url + path, timeout=120_000)
                        page.wait_for_selector(".gantt[data-ready=true]", timeout=120_000)
                        tti = page.evaluate("performance.now()") / 1000
                        nav = json.loads(page.evaluate("JSON.stringify(performance.getEntriesByType('navigation')[0])"))
                        start = page.evaluate("performance.getEntriesByName('charts-start')[0].startTime") / 1000
                        view = page.evaluate("document.querySelector('.gantt').layout.meta.view")
                        page.close()
                        if mode == "warm" and i == 0:
                            continue  # the first visit fills the cache
                        ttis.append(tti)
                        responses.append(nav["responseEnd"] / 1000)
                        starts.append(start)
                        size = nav["decodedBodySize"]
                    ctx.close()
                    print(f"| {label} | {mode} | {statistics.median(ttis):.2f} s | {max(ttis):.2f} s | "
                          f"{statistics.median(responses):.2f} s | {statistics.median(starts):.2f} s | "
                          f"{size / 1024:.0f} KiB | {view} |", flush=True)  # fmt: skip
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(
        f"\n(date {time.strftime('%Y-%m-%d %H:%M')}, gunicorn 2 workers, SQLite; load average at the end "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    main()
