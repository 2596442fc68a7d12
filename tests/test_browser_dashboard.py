"""The dashboard with production traces, in headless Chromium: imports with options and a
background check with progress, the Alibaba pod list, share links opened from another host name and
after revocation, more than ten runs in distinct colours, and greyed-out algorithms."""

import re
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from scheduling import registry
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance
from tests.test_browser import file_payload
from tests.webhelpers import CHROMIUM_ARGS, sign_in
from webapp import datasets, services
from workers.tasks import simulate_run

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.slow]

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BROWSER_ARGS = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP lab-box.test 127.0.0.1"]
OTHER_HOST = "lab-box.test"  # a name for this machine as a teammate's browser would know it


@pytest.fixture
def browser(live_server, redis_worker, user):
    """Chromium; no ORM calls once it runs (its event loop runs in this thread): fixtures that write
    to the database come before it in a test's arguments."""
    from playwright.sync_api import sync_playwright

    call_command("vendor_plotly", verbosity=0)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=BROWSER_ARGS)
        yield b
        b.close()


def signed_in(browser, live_server):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(60_000)
    return sign_in(page, live_server)


def add_nodes(page, live_server):
    page.goto(f"{live_server.url}/datasets/")
    page.check("input[name=kind][value=import-nodes]")
    page.set_input_files("#id_file", str(FIXTURES / "openb_nodes_head.csv"))
    page.click("button[value=add]")
    page.wait_for_url(re.compile(r"/datasets/\d+/$"))


def test_an_import_with_a_window_is_imported_and_checked_in_the_background_with_a_progress_bar(
    browser, live_server, monkeypatch
):
    # The live server runs in this process: the raw file is imported and checked by the worker.
    monkeypatch.setattr(datasets, "IMPORT_INLINE_BYTES", 100)
    page = signed_in(browser, live_server)
    add_nodes(page, live_server)
    page.goto(f"{live_server.url}/datasets/")
    page.check("input[name=kind][value=import-gpu]")
    page.set_input_files("#id_file", str(FIXTURES / "philly_head.csv"))
    page.click("#import-options summary")
    page.fill("#id_start", "2017-10-09 06:00")
    page.fill("#id_limit", "12")
    page.click("button[value=add]")
    page.wait_for_url(re.compile(r"/datasets/\d+/$"))
    # The page shows the check's bar and reloads itself when the worker has finished it.
    expect(page.locator("#trace-preview h2")).to_contain_text("12 jobs", timeout=60_000)
    expect(page.locator("#trace-check")).to_have_count(0)
    expect(page.locator("#ds-0.js-plotly-plot")).to_have_count(1)


def test_the_alibaba_pod_list_is_previewed_then_imported_with_a_duration_from_two_timestamps(browser, live_server):
    page = signed_in(browser, live_server)
    add_nodes(page, live_server)
    page.goto(f"{live_server.url}/datasets/")
    page.check("input[name=kind][value=import-gpu]")
    page.set_input_files("#id_file", str(FIXTURES / "openb_pods_head.csv"))
    page.click("#import-options summary")
    page.fill("#id_mapping", "duration=deletion_time-creation_time")
    page.fill("#id_name", "alibaba-pods")
    page.click("button[value=preview]")
    expect(page.locator("#dataset-preview h3")).to_contain_text("alibaba-pods.csv")
    expect(page.locator("#dataset-preview pre")).to_contain_text("openb-pod-0000,0,60,1,12537496")
    page.click("button[value=add]")  # no new upload: the previewed file is added
    page.wait_for_url(re.compile(r"/datasets/\d+/$"))
    expect(page.locator("h1")).to_have_text("alibaba-pods.csv")
    expect(page.locator("#trace-preview h2")).to_contain_text("jobs, arrivals in slots")


@pytest.fixture
def experiment(redis_broker, user, tiny_cluster, tiny_trace, settings):
    """A done experiment of more than ten runs (every algorithm the tiny inputs support, then fifo
    variants), simulated here by the task body."""
    settings.MLSCHED_HEARTBEAT = 3600
    cluster = parse_cluster(tiny_cluster)
    instance = Instance(cluster, parse_trace(tiny_trace, cluster))
    names = [n for n, spec in registry.all_specs().items() if not spec.unsupported(instance)]
    runs = [(n, {}) for n in names] + [("fifo", {"workers_max": k}) for k in (1, 2, 3)]
    sub = services.Submission(name="many", inputs=services.Inputs("upload", "cluster.json", tiny_cluster, "t.csv",
                                                                   tiny_trace), runs=runs[:14], seed=0)  # fmt: skip
    exp = services.create_experiment(sub, user)
    for run in exp.runs.all():
        simulate_run(run.pk)
    assert set(exp.runs.values_list("status", flat=True)) == {"done"}
    return exp


def test_more_than_ten_runs_are_drawn_in_distinct_colours(experiment, live_server, browser):
    page = signed_in(browser, live_server)
    page.goto(f"{live_server.url}{experiment.get_absolute_url()}?tab=jct")
    # every chart drawn: those below the window are drawn one at a time after the first paint
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.comparison[data-figure]')).every(d => d.dataset.ready === 'true')"
    )
    colours = page.evaluate(
        """() => [...document.querySelectorAll('.comparison.js-plotly-plot')]
                 .find(d => d.layout.title.text.startsWith('JCT distribution')).data.map(t => t.line.color)"""
    )
    assert len(colours) > 10 and len(set(colours)) == len(colours)


def test_a_share_link_opens_from_another_host_name_and_a_revoked_one_says_so(
    experiment, settings, live_server, browser
):
    port = live_server.url.rsplit(":", 1)[1]
    settings.MLSCHED_PUBLIC_URL = f"http://{OTHER_HOST}:{port}"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, OTHER_HOST]
    page = signed_in(browser, live_server)
    page.goto(f"{live_server.url}{experiment.get_absolute_url()}")
    page.select_option("#share-expiry", "7")
    page.click("#create-share")
    url = page.locator(".share-url").first.input_value()
    assert url.startswith(f"http://{OTHER_HOST}:{port}/s/")
    teammate = browser.new_context().new_page()  # not signed in, another host name
    teammate.goto(url)
    expect(teammate.locator("h1")).to_have_text("many")
    page.click("button.revoke")
    page.wait_for_selector(".message")
    response = teammate.goto(url)
    assert response.status == 410
    expect(teammate.locator("#share-unavailable h1")).to_have_text("Share link revoked")


def test_algorithms_the_chosen_preset_cannot_run_are_greyed_out_with_the_reason(browser, live_server):
    page = signed_in(browser, live_server)
    page.goto(f"{live_server.url}/experiments/new/")
    page.check("input[name=source][value=preset]")
    page.select_option("#id_preset", "demo")
    asrpt = page.locator(".algorithm[data-algorithm=asrpt]")
    expect(asrpt).to_have_class(re.compile(r"\bunsupported\b"))
    expect(asrpt.locator("input[name=algorithms]")).to_be_disabled()
    expect(asrpt.locator("[data-unsupported-reason]")).to_contain_text("asrpt needs")
    expect(page.locator(".algorithm[data-algorithm=fifo] input[name=algorithms]")).to_be_enabled()
    page.select_option("#id_preset", "asrpt")
    expect(asrpt.locator("input[name=algorithms]")).to_be_enabled()
    page.check("input[name=source][value=upload]")  # files are known only at submit
    expect(page.locator(".algorithm.unsupported")).to_have_count(0)


def test_a_library_pair_shows_its_offered_load_with_a_warning_before_submit(browser, live_server):
    page = signed_in(browser, live_server)
    add_nodes(page, live_server)
    page.goto(f"{live_server.url}/datasets/")
    page.check("input[name=kind][value=import-gpu]")
    page.set_input_files("#id_file", str(FIXTURES / "philly_head.csv"))
    page.click("button[value=add]")
    page.wait_for_url(re.compile(r"/datasets/\d+/$"))
    expect(page.locator("#offered-load")).to_have_count(1)
    page.goto(f"{live_server.url}/experiments/new/")
    page.check("input[name=source][value=library]")
    page.select_option("#id_cluster_dataset", index=1)
    page.select_option("#id_trace_dataset", index=1)
    note = page.locator("#preflight-load")
    expect(note).to_contain_text("Offered load")
    expect(note).to_contain_text("nearly idle")  # 40 Philly jobs on 20 nodes over 10 days


def test_the_form_warns_before_submit_when_a_learner_has_no_history(browser, live_server):
    """The same rule as the experiment page's note (services.history_notes): a checked algorithm or
    "Also run" line whose predictor learns from a history, with an uploaded or library trace and no
    history given."""
    page = signed_in(browser, live_server)
    page.goto(f"{live_server.url}/experiments/new/")
    warning = page.locator("#history-warning")
    page.check("input[name=source][value=upload]")
    page.check("input[name=algorithms][value=fifo]")
    expect(warning).to_be_hidden()  # fifo learns from nothing
    page.check("input[name=algorithms][value=asrpt]")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text("asrpt: no history of past jobs")
    expect(warning).to_contain_text("Add a history file")
    page.select_option("#id_asrpt__predictor", "perfect")  # reads the true iterations: needs no history
    expect(warning).to_be_hidden()
    page.select_option("#id_asrpt__predictor", "mean")
    expect(warning).to_be_visible()
    page.set_input_files("#id_history_file", file_payload("past.csv", "job_id,arrival,gpus,duration\np1,0,1,60\n"))
    expect(warning).to_be_hidden()
    page.set_input_files("#id_history_file", [])
    expect(warning).to_be_visible()
    page.check("input[name=source][value=preset]")  # a preset gives its own history
    expect(warning).to_be_hidden()
    page.check("input[name=source][value=library]")
    page.check("input[name=algorithms][value=asrpt]")  # the demo preset cannot run it: unticked there
    expect(warning).to_contain_text("Add a history trace from the library")

    page.check("input[name=source][value=upload]")
    page.uncheck("input[name=algorithms][value=asrpt]")
    expect(warning).to_be_hidden()
    page.fill("#id_extra_runs", "drf fixed=false\nspjf predictor=trace\nconstructor\n")  # no learner named so
    expect(warning).to_be_hidden()
    page.fill("#id_extra_runs", "drf fixed=false\nspjf predictor=trace\nwcs-subtime")  # default: random-forest
    expect(warning).to_contain_text("wcs-subtime: no history")
    page.fill("#id_extra_runs", "spjf predictor=median\nwcs-subtime predictor=perfect")
    expect(warning).to_contain_text("spjf: no history")
