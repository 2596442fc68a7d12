"""Benchmark: the result tabs of a comparison at 2,000 and 82,000 jobs in headless Chromium, figure
exports, the experiment list with 20 large experiments, the submit of a 16-run window repetition and
the dataset preview of an 82,000-job raw trace; this code and an earlier version side by side.

Usage (one command; every number is printed with the load average at the time):

    nice .venv/bin/python bench/dashboard_tabs.py [--before main] [--jobs 2000,82247] [--loads 3]
        [--var DIR] [--list 20]

``--before REF`` exports git revision REF (``git archive``) into a temporary folder and serves it
with its own gunicorn beside this tree's, on the same database and storage: every page is loaded
from both servers in turn (before, after, before, after, ...), so that both see the same load.
Without it only this tree is measured. ``--var DIR`` keeps the database and the simulated runs in
DIR for a later run (the 82,000-job runs take minutes to simulate); a run with the same DIR reuses
them.

Per tab: the HTML response and size; ``plotly.js ready`` (the page's chart script started: the
browser fetched, compiled and ran plotly.js); the first chart drawn (``data-ready`` set when
``Plotly.newPlot`` resolves: the page is interactive there) and every chart drawn, read as
``performance.now()`` in the page, cold browser context per load (a first visit). The first load
of a tab on a fresh server is reported alone ("first view": figures not cached yet), the median of
the others beside it ("again"). Exports: the SVG, PNG and PDF buttons under the first JCT chart and
the Gantt chart (click to file, recorded by the page as ``data-exported-*``). List: ``/`` and
``GET /api/experiments`` with ``--list`` experiments whose trace and history texts are ~190 KB each
(HTTP, median of 5). Submit: the new-experiment form posted with the 82,000-job library trace,
fifo and srtf over 8 windows (16 runs), median of 3, and what a worker then does before the runs
can start (after only). Preview: the Datasets form's Preview of the raw Philly trace
(../shared/traces/philly/philly.csv, 82,247 jobs), median of 3. Runs are real simulations of
Philly-shaped rigid jobs stored as the workers store them; gunicorn 1 worker each, SQLite.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from dashboard_common import ROOT, free_port, rigid_inputs

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic"]  # fmt: skip
TABS = ("summary", "jct", "gantt", "time", "inputs")
PHILLY = ROOT.parent.parent / "shared" / "traces" / "philly" / "philly.csv"
if not PHILLY.exists():
    PHILLY = ROOT.parent / "shared" / "traces" / "philly" / "philly.csv"
CSRF = "b" * 32  # a CSRF secret sent as the cookie and as the form field (plain HTTP: no Referer check)

DRAWN = """() => { const all = document.querySelectorAll('[data-figure]');
  return all.length > 0 && Array.from(all).every(d => d.dataset.ready === 'true'); }"""
FIRST = "() => document.querySelector('[data-figure][data-ready=true]') !== null"
PLOTLY_READY = """(() => { const m = performance.getEntriesByName('charts-start');
  return m.length ? m[0].startTime : null; })()"""


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


# ---------------------------------------------------------------------------------------------
# Set-up: database, runs, library datasets (reused from --var)


def configure(var: Path) -> None:
    os.environ.update(DJANGO_SETTINGS_MODULE="webapp.settings", MLSCHED_VAR_DIR=str(var), MEDIA_ROOT=str(var / "media"))
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key")
    for name in ("REDIS_URL", "DATABASE_URL"):
        os.environ.pop(name, None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("vendor_plotly", verbosity=0)


def prepare(sizes: list[int], servers: dict[int, int], algorithms: list[str], n_list: int):  # type: ignore[no-untyped-def]
    """The bench user, one comparison per size (simulated here unless found), the library pair of the
    largest size (checked), ``n_list`` large experiments for the list pages."""
    from dashboard_common import experiment
    from django.contrib.auth.models import User

    from webapp import tracechecks
    from webapp.models import Dataset, Experiment, TraceCheck
    from workers.tasks import check_trace

    user, _ = User.objects.get_or_create(username="bench")
    exps = {}
    for n in sizes:
        name = f"{n} jobs"
        exp = Experiment.objects.filter(name=name, owner=user).first()
        if exp is None or exp.runs.exclude(status="done").exists():
            t = time.perf_counter()
            exp = experiment(user, name, *rigid_inputs(n, servers[n]), algorithms)
            print(f"{name}: simulated in {time.perf_counter() - t:.0f} s (load {load()})", flush=True)
        exps[n] = exp
    big = max(sizes)
    trace = Dataset.objects.filter(owner=user, kind="trace", name=f"rigid-{big}.csv").first()
    if trace is None:
        cluster_text, trace_text = rigid_inputs(big, servers[big])
        cluster = Dataset.objects.create(owner=user, kind="cluster", name=f"cluster-{big}.json", text=cluster_text,
                                         size=len(cluster_text))  # fmt: skip
        trace = Dataset.objects.create(owner=user, kind="trace", name=f"rigid-{big}.csv", text=trace_text,
                                       size=len(trace_text))  # fmt: skip
        check = tracechecks.start(trace, cluster)
        check_trace(check.pk)
        assert TraceCheck.objects.get(pk=check.pk).status == "done"
    cluster = Dataset.objects.get(owner=user, kind="cluster", name=f"cluster-{big}.json")
    nodes = Dataset.objects.filter(owner=user, kind="cluster", name="philly-nodes.json").first()
    if nodes is None:
        text = json.dumps({"slot_seconds": 60, "resources": ["gpu"],
                           "servers": [{"id": "n", "count": 550, "capacity": {"gpu": 8}}]})  # fmt: skip
        nodes = Dataset.objects.create(owner=user, kind="cluster", name="philly-nodes.json", text=text, size=len(text))
    have = Experiment.objects.filter(owner=user, name__startswith="large ").count()
    text = "job_id,arrival,gpus,duration\n" + "".join(f"job-{i:06d},{i},1,60\n" for i in range(8000))  # ~190 KB
    for k in range(have, n_list):
        Experiment.objects.create(name=f"large {k}", source="upload", cluster_text="{}", trace_name="t.csv",
                                  trace_text=text, history_text=text, owner=user)  # fmt: skip
    return user, exps, (trace, cluster), nodes, 2 * len(text) * n_list


# ---------------------------------------------------------------------------------------------
# Servers


class Server:
    """gunicorn serving the code in ``tree`` on the shared database and storage."""

    def __init__(self, label: str, tree: Path, log: Path) -> None:
        self.label, self.tree = label, tree
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(tree)}
        cmd = [sys.executable, "-m", "gunicorn", "webapp.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1",
               "--timeout", "600", "--log-level", "warning"]  # fmt: skip
        self.proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{port}"
        for _ in range(150):
            try:
                urllib.request.urlopen(f"{self.url}/healthz", timeout=2).read()
                return
            except OSError:
                time.sleep(0.2)
        self.proc.kill()
        raise RuntimeError(f"gunicorn ({label}) did not start: {log.read_text()}")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)

    def request(self, path: str, cookie: str, data: dict[str, object] | None = None, headers=None):  # type: ignore[no-untyped-def]
        """(seconds, status, body) of a GET, or a form POST when ``data`` is given."""
        body = None
        h = {"Cookie": f"{cookie}; csrftoken={CSRF}", **(headers or {})}
        if data is not None:
            pairs = [(k, x) for k, v in data.items() for x in (v if isinstance(v, list) else [v])]
            body = urllib.parse.urlencode([*pairs, ("csrfmiddlewaretoken", CSRF)]).encode()
            h["Content-Type"] = "application/x-www-form-urlencoded"
        req = urllib.request.Request(self.url + path, data=body, headers=h)
        t = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=600) as r:
                content, status = r.read(), r.status
        except urllib.error.HTTPError as exc:
            content, status = exc.read(), exc.code
        return time.perf_counter() - t, status, content


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return None


urllib.request.install_opener(urllib.request.build_opener(NoRedirect))


def before_tree(ref: str) -> Path:
    """Revision ``ref`` of this repository exported to a temporary folder, with this tree's plotly.js copies."""
    out = Path(tempfile.mkdtemp(prefix="mlsched-before-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    shutil.copytree(ROOT / "static" / "vendor", out / "static" / "vendor", dirs_exist_ok=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", ref], capture_output=True, text=True,
                            check=True)  # fmt: skip
    print(f"before: {ref} ({commit.stdout.strip()}) exported to {out}", flush=True)
    return out


# ---------------------------------------------------------------------------------------------
# Browser measurements


def tab_load(browser, url: str, cookie: tuple[str, str], path: str):  # type: ignore[no-untyped-def]
    """One cold load: (response end, HTML bytes, charts, plotly.js ready, first chart, every chart)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.add_cookies([{"name": cookie[0], "value": cookie[1], "url": url}])
    page = ctx.new_page()
    page.goto(url + path, timeout=600_000)
    charts = page.locator("[data-figure]").count()
    ready = first = every = None
    if charts:
        page.wait_for_function(FIRST, timeout=600_000, polling=20)
        first = page.evaluate("performance.now()") / 1000
        page.wait_for_function(DRAWN, timeout=600_000, polling=20)
        every = page.evaluate("performance.now()") / 1000
        mark = page.evaluate(PLOTLY_READY)
        ready = None if mark is None else mark / 1000
    nav = page.evaluate("(() => { const n = performance.getEntriesByType('navigation')[0];"
                        " return [n.responseEnd, n.decodedBodySize]; })()")  # fmt: skip
    ctx.close()
    return (nav[0] / 1000, nav[1], charts, ready, first, every)


def exports(browser, url: str, cookie: tuple[str, str], path: str, selector: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    ctx.add_cookies([{"name": cookie[0], "value": cookie[1], "url": url}])
    page = ctx.new_page()
    page.goto(url + path, timeout=600_000)
    chart = page.locator(selector).first
    chart.wait_for(timeout=600_000)
    chart.scroll_into_view_if_needed()
    page.wait_for_function("d => d.dataset.ready === 'true'", arg=chart.element_handle(), timeout=600_000)
    out = {}
    for fmt in ("svg", "png", "pdf"):
        button = chart.locator(f"xpath=following-sibling::p//button[@data-export='{fmt}']")
        if not button.count():
            continue
        with page.expect_download(timeout=120_000):
            button.click()
        attr = f"data-exported-{fmt}"
        page.wait_for_function(f"d => d.getAttribute('{attr}') !== null", arg=chart.element_handle())
        out[fmt] = int(chart.get_attribute(attr)) / 1000
    ctx.close()
    return out


def s(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f} s"


def med(xs: list[float | None]) -> float | None:
    xs2 = [x for x in xs if x is not None]
    return statistics.median(xs2) if xs2 else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default=None, help="git revision to measure beside this tree (e.g. main)")
    ap.add_argument("--jobs", default="2000,82247")
    ap.add_argument("--algorithms", default="fifo,srtf,tiresias")
    ap.add_argument("--loads", type=int, default=3, help="loads per tab and server (the first is the first view)")
    ap.add_argument("--list", type=int, default=20)
    ap.add_argument("--var", type=Path, default=None, help="keep (and reuse) the database and runs here")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: tabs,exports,list,submit,preview")
    a = ap.parse_args()
    skip = set(filter(None, a.skip.split(",")))
    var = a.var or Path(tempfile.mkdtemp(prefix="mlsched-bench-"))
    var.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores; date {time.strftime('%Y-%m-%d %H:%M')} UTC; load {load()}; var {var}")
    configure(var)
    sizes = [int(n) for n in a.jobs.split(",")]
    servers = {n: 16 if n <= 5000 else max(16, n // 500) for n in sizes}
    user, exps, (trace, cluster), nodes, list_bytes = prepare(sizes, servers, a.algorithms.split(","), a.list)
    from dashboard_common import session_cookie

    cookie = session_cookie(user)
    views = {
        n: (e.get_absolute_url(), e.runs.order_by("pk").first().pk) for n, e in exps.items()
    }  # (no ORM in playwright)
    name, value = cookie.split("=", 1)
    warm(exps)
    trees = ([("before", before_tree(a.before))] if a.before else []) + [("after", ROOT)]
    live = [Server(label, tree, var / f"gunicorn-{label}.log") for label, tree in trees]
    for srv in live:  # a first request in each server process: its imports, not a tab's cost
        for base, _ in views.values():
            srv.request(f"{base}?tab=summary", cookie)
    print(f"servers up (load {load()})", flush=True)
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            if "tabs" not in skip:
                for n in sizes:
                    base, run_pk = views[n]
                    print(f"\n### {n:,}-job comparison of {a.algorithms} ({servers[n]} servers), cold browser, "
                          f"first view then median of {a.loads - 1} more\n")  # fmt: skip
                    print("| tab | server | load | HTML | charts | response (first, again) | plotly.js ready | "
                          "first chart drawn (first view, again) | every chart drawn (again) |")  # fmt: skip
                    print("|---|---|---|---|---|---|---|---|---|")
                    for tab in TABS:
                        path = f"{base}?tab={tab}"  # (the Gantt tab shows the first run)
                        rows: dict[str, list] = {srv.label: [] for srv in live}  # type: ignore[type-arg]
                        for _ in range(a.loads):
                            for srv in live:
                                rows[srv.label].append(tab_load(browser, srv.url, (name, value), path))
                        for srv in live:
                            r = rows[srv.label]
                            again = r[1:] or r
                            print(f"| {tab} | {srv.label} | {load()} | {r[0][1] / 1024:.0f} KiB | {r[0][2]} | "
                                  f"{s(r[0][0])}, {s(med([x[0] for x in again]))} | {s(med([x[3] for x in again]))} | "
                                  f"{s(r[0][4])}, {s(med([x[4] for x in again]))} | {s(med([x[5] for x in again]))} |",
                                  flush=True)  # fmt: skip
            if "exports" not in skip:
                print("\n### Figure export (click to file)\n")
                print("| chart | server | load | SVG | PNG | PDF |")
                print("|---|---|---|---|---|---|")
                for n in sizes:
                    base, run_pk = views[n]
                    charts = (
                        (f"JCT first chart, {n:,} jobs", f"{base}?tab=jct", ".comparison.js-plotly-plot"),
                        (f"Gantt, {n:,} jobs", f"{base}?tab=gantt&run={run_pk}", ".gantt.js-plotly-plot"),
                    )
                    for label, path, selector in charts:
                        for srv in live:
                            got = exports(browser, srv.url, (name, value), path, selector)
                            cells = " | ".join(
                                s(got.get(f)) if f in got else "no button" for f in ("svg", "png", "pdf")
                            )
                            print(f"| {label} | {srv.label} | {load()} | {cells} |", flush=True)
            browser.close()
        if "list" not in skip:
            from webapp.models import ApiToken

            _, key = ApiToken.issue(user, "bench")
            mb = list_bytes / 1e6
            print(f"\n### List pages, {a.list} experiments of {mb:.1f} MB of input texts (HTTP, median of 5)\n")
            print("| page | server | load | time |")
            print("|---|---|---|---|")
            for label, path, headers in (("/", "/", {}), ("GET /api/experiments", "/api/experiments/",
                                                             {"Authorization": f"Token {key}"})):  # fmt: skip
                for srv in live:
                    times = []
                    for _ in range(5):
                        t, status, _body = srv.request(path, cookie, headers=headers)
                        assert status == 200, (srv.label, path, status)
                        times.append(t)
                    print(f"| {label} | {srv.label} | {load()} | {s(statistics.median(times))} |", flush=True)
        if "submit" not in skip:
            submit(live, cookie, trace, cluster, max(sizes))
        if "preview" not in skip:
            preview(live, cookie, nodes)
    finally:
        for srv in live:
            srv.stop()
    print(f"\n(date {time.strftime('%Y-%m-%d %H:%M')} UTC; load average at the end {load()} on {os.cpu_count()} cores)")


def warm(exps) -> None:  # type: ignore[no-untyped-def]
    """What the worker finishing each experiment's last run does in this tree: draw its tabs' default
    views into the figure cache (webapp/figurecache.py), timed; an earlier tree has no such step."""
    from django.core.cache import cache

    from webapp import figurecache

    if not hasattr(figurecache, "warm"):
        return
    for n, exp in exps.items():
        figurecache.forget(exp.pk)  # (drawn when its runs were simulated here: drawn again, timed)
        cache.clear()
        t = time.perf_counter()
        figurecache.warm(exp.pk)
        print(f"after: the worker draws the {n:,}-job comparison's figures in {time.perf_counter() - t:.2f} s "
              f"(load {load()})", flush=True)  # fmt: skip


def submit(live, cookie: str, trace, cluster, jobs: int) -> None:  # type: ignore[no-untyped-def]
    """The new-experiment form posted: the library pair, fifo and srtf over 8 windows (16 runs)."""
    from webapp.models import Experiment

    print(f"\n### Submit: fifo and srtf over 8 windows of the {jobs:,}-job library trace (16 runs), median of 3\n")
    print("| server | load | form POST | runs stored | then on a worker before the runs start |")
    print("|---|---|---|---|---|")
    for srv in live:
        times, made, prep = [], 0, []
        for k in range(3):
            data = {"source": "library", "cluster_dataset": cluster.pk, "trace_dataset": trace.pk, "seed": 0,
                    "name": f"submit-{srv.label}-{k}", "algorithms": ["fifo", "srtf"], "repeat": "windows",
                    "repeat_windows": "8", "mode": "comparison"}  # fmt: skip
            t, status, body = srv.request("/experiments/new/", cookie, data)
            assert status == 302, (srv.label, status, re.sub(r"\s+", " ", body.decode()[:3000]))
            times.append(t)
            exp = Experiment.objects.filter(name=f"submit-{srv.label}-{k}").latest("pk")
            made = exp.runs.count()
            if srv.label == "after":
                prep.append(worker_side(exp))
        done = f"{s(statistics.median(prep))} (task body)" if prep and prep[0] is not None else "nothing"
        print(f"| {srv.label} | {load()} | {s(statistics.median(times))} | {made} | {done} |", flush=True)


def worker_side(exp) -> float | None:  # type: ignore[no-untyped-def]
    """Seconds the worker-side preparation of ``exp`` takes (its task body), None when there is none."""
    from webapp import submit_worker
    from workers.submissions import prepare_submission

    exp.refresh_from_db()
    if not submit_worker.pending(exp):
        return None
    t = time.perf_counter()
    assert prepare_submission(exp.pk) == "done"
    return time.perf_counter() - t


def preview(live, cookie: str, nodes) -> None:  # type: ignore[no-untyped-def]
    """The Datasets form's Preview of the raw Philly trace against a 550-server cluster."""
    if not PHILLY.exists():
        print(f"\n(preview skipped: {PHILLY} not found)")
        return
    boundary = "----mlschedbench"
    raw = PHILLY.read_bytes()

    def part(name: str, value: str) -> bytes:
        return f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()

    body = (part("csrfmiddlewaretoken", CSRF) + part("kind", "import-gpu") + part("cluster", str(nodes.pk))
            + part("action", "preview")
            + f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="philly.csv"\r\n'
              "Content-Type: text/csv\r\n\r\n".encode() + raw + f"\r\n--{boundary}--\r\n".encode())  # fmt: skip
    print(
        f"\n### Dataset preview: the raw Philly trace ({PHILLY.stat().st_size / 1e6:.1f} MB, import-gpu), median of 3\n"
    )
    print("| server | load | time | offered-load line |")
    print("|---|---|---|---|")
    for srv in live:
        times, shown = [], False
        for _ in range(3):
            headers = {
                "Cookie": f"{cookie}; csrftoken={CSRF}",
                "Content-Type": f"multipart/form-data; boundary={boundary}",
            }
            req = urllib.request.Request(srv.url + "/datasets/", data=body, headers=headers)
            t = time.perf_counter()
            with urllib.request.urlopen(req, timeout=600) as r:
                html = r.read().decode()
            times.append(time.perf_counter() - t)
            assert 'id="dataset-preview"' in html, re.sub(r"\s+", " ", html)[:3000]
            shown = "offered load" in html.split('id="dataset-preview"', 1)[1].split("</div>", 1)[0]
        print(f"| {srv.label} | {load()} | {s(statistics.median(times))} | {'yes' if shown else 'no'} |", flush=True)


if __name__ == "__main__":
    main()
