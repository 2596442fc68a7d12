"""Share links that reach teammates: built on the public URL, friendly pages for unknown (404),
revoked and expired (410) links in every mode, optional expiry."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from webapp.models import Experiment, ShareLink

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]


@pytest.fixture
def exp(user, tiny_cluster, tiny_trace):
    return Experiment.objects.create(name="x", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                     trace_text=tiny_trace, owner=user)  # fmt: skip


@pytest.mark.parametrize("debug", [True, False])
def test_an_unknown_link_gets_a_friendly_404_page_even_in_debug(settings, debug, exp):
    settings.DEBUG = debug
    response = Client().get(reverse("shared", args=["no-such-token-at-all-here"]))
    page = response.content.decode()
    assert response.status_code == 404 and 'data-reason="unknown"' in page
    assert "URLconf" not in page and "Share link not found" in page


@pytest.mark.parametrize("tail", ["extra", "x", "runs/1/nothing.csv"])
def test_a_link_with_a_trailing_part_or_no_token_gets_the_share_404_page_in_debug(settings, exp, tail):
    settings.DEBUG = True
    token = ShareLink.objects.create(experiment=exp).token
    for url in (f"/s/{token}/{tail}", "/s/", f"/s/{token}{tail}/more"):
        response = Client().get(url)
        page = response.content.decode()
        assert response.status_code == 404 and 'data-reason="unknown"' in page, url
        assert "URLconf" not in page and "shared-status" not in page, url
    # Text no column stores is still refused first, with a 400 (webapp/security.py).
    assert Client().get(f"/s/{token}/%00").status_code == 400


def test_a_revoked_link_gets_a_410_page_saying_so(auth_client, settings, exp):
    settings.DEBUG = True
    link = ShareLink.objects.create(experiment=exp)
    auth_client.post(reverse("experiment-share", args=[exp.pk]), {"revoke": link.pk})
    response = Client().get(reverse("shared", args=[link.token]))
    assert response.status_code == 410 and "Share link revoked" in response.content.decode()
    assert Client().get(reverse("shared-status", args=[link.token])).json()["reason"] == "revoked"


def test_a_link_created_to_expire_stops_opening_after_its_expiry(auth_client, exp):
    auth_client.post(reverse("experiment-share", args=[exp.pk]), {"expires_days": "7"})
    link = ShareLink.objects.get()
    assert timedelta(days=6.9) < link.expires - timezone.now() <= timedelta(days=7)
    assert Client().get(reverse("shared", args=[link.token])).status_code == 200
    ShareLink.objects.filter(pk=link.pk).update(expires=timezone.now() - timedelta(seconds=1))
    response = Client().get(reverse("shared", args=[link.token]))
    assert response.status_code == 410 and "expired" in response.content.decode()
    assert link.token not in auth_client.get(exp.get_absolute_url()).content.decode()  # no longer listed


def test_share_links_are_built_on_the_public_url_when_one_is_set(auth_client, settings, exp):
    link = ShareLink.objects.create(experiment=exp)
    page = auth_client.get(exp.get_absolute_url()).content.decode()
    assert f'value="http://testserver/s/{link.token}/"' in page
    settings.MLSCHED_PUBLIC_URL = "http://lab-box.example:8000/"
    page = auth_client.get(exp.get_absolute_url()).content.decode()
    assert f'value="http://lab-box.example:8000/s/{link.token}/"' in page


ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent


def network_env(env, tmp_path, addresses="192.0.2.7 fd00::7"):
    """bin/network-env's DJANGO_ALLOWED_HOSTS and MLSCHED_NETWORK_URL, on a machine named lab-box
    with ``addresses`` (a fake ``hostname`` first on PATH)."""
    import subprocess

    fake = tmp_path / "hostname"
    fake.write_text(f'#!/bin/sh\nif [ "$1" = -I ]; then echo "{addresses} "; else echo lab-box; fi\n')
    fake.chmod(0o755)
    script = '. bin/network-env; echo "$DJANGO_ALLOWED_HOSTS"; echo "$MLSCHED_NETWORK_URL"; echo "$MLSCHED_PUBLIC_URL"'
    out = subprocess.run(["bash", "-c", script], cwd=ROOT, env={"PATH": f"{tmp_path}:/usr/bin:/bin", **env},
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return out.split("\n")[:3]


def test_serving_on_the_network_allows_this_machines_addresses_and_sets_the_network_url(tmp_path):
    hosts, url, public = network_env({"HOST": "0.0.0.0", "PORT": "8123"}, tmp_path)
    assert hosts.split(",") == ["lab-box", "192.0.2.7", "[fd00::7]"] and url == "http://192.0.2.7:8123"
    assert public == ""  # never set: links made from a request to a host name keep that name
    assert network_env({"HOST": "127.0.0.1"}, tmp_path) == ["", "", ""]  # local only: nothing changes


def test_an_ipv6_first_address_is_written_in_brackets(tmp_path):
    hosts, url, _ = network_env({"HOST": "0.0.0.0", "PORT": "8000"}, tmp_path, "fd00::9 192.0.2.9")
    assert url == "http://[fd00::9]:8000" and "[fd00::9]" in hosts.split(",")
    hosts, url, _ = network_env({"HOST": "fd00::1", "PORT": "8000"}, tmp_path)
    assert url == "http://[fd00::1]:8000" and "[fd00::1]" in hosts.split(",")


def test_a_link_keeps_the_requests_host_and_only_a_loopback_request_gets_the_network_url(settings, user, exp):
    settings.MLSCHED_NETWORK_URL = "http://192.0.2.7:8000"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "myhost", "[::1]"]
    link = ShareLink.objects.create(experiment=exp)
    client = Client()
    client.force_login(user)
    cases = [("myhost:8000", "http://myhost:8000")] + [
        (local, "http://192.0.2.7:8000") for local in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000")
    ]
    for host, expected in cases:
        page = client.get(exp.get_absolute_url(), HTTP_HOST=host).content.decode()
        assert f'value="{expected}/s/{link.token}/"' in page, host
    settings.MLSCHED_PUBLIC_URL = "https://lab.example.org"  # a proxy's public URL wins everywhere
    page = client.get(exp.get_absolute_url(), HTTP_HOST="myhost:8000").content.decode()
    assert f'value="https://lab.example.org/s/{link.token}/"' in page


def test_the_public_urls_host_is_an_allowed_host():
    import subprocess
    import sys

    code = "import django.conf as c, os; os.environ['DJANGO_SETTINGS_MODULE']='webapp.settings'; " \
           "from django.conf import settings; print(','.join(settings.ALLOWED_HOSTS))"  # fmt: skip
    env = {"PATH": "/usr/bin:/bin", "MLSCHED_PUBLIC_URL": "https://lab.example.org/dash", "DJANGO_DEBUG": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert "lab.example.org" in out.stdout.strip().split(",")


def test_a_queued_run_shows_its_place_in_the_line_of_every_queued_run(auth_client, user, exp):
    from webapp.models import Run

    other = Experiment.objects.create(name="earlier", source="upload", cluster_text=exp.cluster_text,
                                      trace_name="t.csv", trace_text=exp.trace_text, owner=user)  # fmt: skip
    Run.objects.create(experiment=other, algorithm="fifo")  # queued before ours
    Run.objects.create(experiment=other, algorithm="drf", status="running")
    mine = [Run.objects.create(experiment=exp, algorithm=a) for a in ("fifo", "srtf")]
    status = auth_client.get(reverse("experiment-status", args=[exp.pk])).json()
    assert [r["queue_position"] for r in status["runs"]] == [2, 3]
    page = auth_client.get(exp.get_absolute_url()).content.decode()
    assert "#2 in the queue" in page and "#3 in the queue" in page
    Run.objects.filter(pk=mine[0].pk).update(status="running")
    assert [r["queue_position"] for r in auth_client.get(reverse("experiment-status", args=[exp.pk])).json()["runs"]] \
        == [None, 2]  # fmt: skip


def test_a_link_created_on_the_gantt_tab_comes_back_to_the_gantt_tab(auth_client, exp):
    page = auth_client.get(reverse("experiment", args=[exp.pk]), {"tab": "gantt", "run": "7", "t0": "2"})
    assert 'name="view" value="tab=gantt&amp;run=7&amp;t0=2"' in page.content.decode()  # the view, without JS
    response = auth_client.post(reverse("experiment-share", args=[exp.pk]), {"view": "tab=gantt&run=7&t0=2"})
    assert response.status_code == 302 and response.url == f"/experiments/{exp.pk}/?tab=gantt&run=7&t0=2"
    response = auth_client.post(reverse("experiment-share", args=[exp.pk]), {"view": "//evil.example/?x=<1>"})
    assert response.url.startswith(f"/experiments/{exp.pk}/?")  # a query of this page, never another address
    assert auth_client.post(reverse("experiment-share", args=[exp.pk])).url == f"/experiments/{exp.pk}/"
