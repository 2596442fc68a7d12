"""A running run's estimated time left, as a person sees it on the experiment page in headless
Chromium: shown in the run table from the first paint, and kept current by the page's polling
(webapp/timeleft.py: the CLI's estimate, elapsed x (1 - progress) / progress)."""

import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from tests.webhelpers import CHROMIUM_ARGS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def running(transactional_db, user):
    """An experiment whose one run has been running for 40 s and is half done."""
    from webapp.models import Experiment, Run

    exp = Experiment.objects.create(name="running", source="upload", cluster_text="{}", trace_name="t.csv",
                                    trace_text="job_id,arrival\n", owner=user)  # fmt: skip
    now = timezone.now()
    Run.objects.create(experiment=exp, algorithm="fifo", status="running", progress=0.5, dispatched=True,
                       started=now - timedelta(seconds=40), heartbeat=now)  # fmt: skip
    return exp.pk


def test_a_running_run_shows_its_time_left_and_the_page_keeps_it_current(running, live_server, user):
    from playwright.sync_api import sync_playwright

    call_command("vendor_plotly", verbosity=0)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = sign_in(browser.new_context().new_page(), live_server)
        page.goto(f"{live_server.url}/experiments/{running}/")
        left = page.locator("[data-left]")
        first = left.text_content()
        assert re.fullmatch(r"about \d+ s left", first), first  # 40 s elapsed, half done: about 40 s
        assert 38 <= int(first.split()[1]) <= 50
        # The page polls every second: the estimate grows while the progress stays (no new beat).
        page.wait_for_function("t => document.querySelector('[data-left]').textContent !== t", arg=first)
        assert re.fullmatch(r"about \d+ s left", left.text_content())
        assert int(left.text_content().split()[1]) > int(first.split()[1])
        browser.close()
