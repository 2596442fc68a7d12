"""Share links in headless Chromium, reached under another host name than the server's own (a
teammate's machine resolving the lab box's name): the link says that name and opens there, for a
guest without login, on the tab, run and Gantt window the owner was looking at."""

import re
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from tests.webhelpers import CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.usefixtures("inline_tasks")]

TEAM_HOST = "lab-box"  # resolved to the live server's address by Chromium itself


@pytest.fixture
def client(auth_client):
    return auth_client


@pytest.fixture
def team_url(live_server, settings):
    """The live server's URL under TEAM_HOST, an allowed host."""
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, TEAM_HOST]
    return f"http://{TEAM_HOST}:{urlsplit(live_server.url).port}"


@pytest.fixture
def browser(live_server):
    """Chromium resolving TEAM_HOST to this machine."""
    from playwright.sync_api import sync_playwright

    call_command("vendor_plotly")
    with sync_playwright() as p:
        resolve = f"--host-resolver-rules=MAP {TEAM_HOST} 127.0.0.1"
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=[*CHROMIUM_ARGS, resolve])
        yield b
        b.close()


@pytest.fixture
def experiment(transactional_db, done_experiment):
    """The done experiment's id and its last run's, read before the browser's event loop starts
    (Django refuses database access from an async context)."""
    return done_experiment.pk, done_experiment.runs.order_by("pk").last().pk


def new_page(browser):
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(30_000)
    return page


def test_a_link_shared_from_another_host_name_opens_there_on_the_owners_view(experiment, team_url, browser):
    exp_pk, run = experiment
    exp_url = f"{team_url}/experiments/{exp_pk}/"
    owner = new_page(browser)
    owner.goto(f"{team_url}/accounts/login/")
    owner.fill("#id_username", "alice")
    owner.fill("#id_password", "alice-password-1")
    owner.click("#login-form button[type=submit]")
    owner.wait_for_selector("#account-link")

    owner.goto(exp_url)
    owner.click("#create-share")
    box = owner.locator(".share-url").first
    expect(box).to_have_value(re.compile(rf"^{re.escape(team_url)}/s/[A-Za-z0-9_-]{{30,}}/$"))

    # Another tab and run, then a zoom: the link follows the view
    owner.goto(f"{exp_url}?tab=gantt&run={run}")
    chart = owner.locator(".gantt.js-plotly-plot")
    expect(chart).to_have_attribute("data-ready", "true")
    chart.evaluate("d => Plotly.relayout(d, {'xaxis.range[0]': 1.2, 'xaxis.range[1]': 3.5})")
    expect(box).to_have_value(re.compile(rf"^{re.escape(team_url)}/s/[^/?]+/\?tab=gantt&run={run}&t0=1&t1=4$"))
    link = box.input_value()

    guest = new_page(browser)
    response = guest.goto(link)
    assert response is not None and response.status == 200
    assert urlsplit(guest.url).hostname == TEAM_HOST
    expect(guest.locator("a.tab.active")).to_have_attribute("data-tab", "gantt")
    gantt = guest.locator(".gantt.js-plotly-plot")
    expect(gantt).to_have_attribute("data-ready", "true")
    assert gantt.evaluate("d => d.layout.xaxis.range") == [1, 4]
    assert guest.locator("#create-share").count() == 0
