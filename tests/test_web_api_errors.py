"""Every API path answers errors in JSON, 500 included; pages keep HTML error pages; and a web
process whose database connection was dropped (a PostgreSQL restart) answers its next request
normally (``CONN_HEALTH_CHECKS``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from django.test import Client

from tests.test_recover_command import drop_connections
from tests.test_tasks import ROOT, django_env, free_port
from webapp import runstatus, services
from webapp.models import ApiToken, Experiment


@pytest.fixture
def api(user):
    return Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}", raise_request_exception=False)


@pytest.mark.django_db
def test_an_api_call_that_fails_inside_the_server_answers_a_json_500(api, user, monkeypatch, caplog):
    exp = Experiment.objects.create(owner=user, name="t", source="upload", cluster_text="{}", trace_name="t.csv")

    def broken(exp):
        raise RuntimeError("a bug in the status")

    monkeypatch.setattr(runstatus, "status", broken)
    response = api.get(f"/api/experiments/{exp.pk}/")
    assert response.status_code == 500 and response["Content-Type"] == "application/json"
    assert response.json() == {"error": "internal error: the server could not answer this request; it was logged"}
    assert "RuntimeError: a bug in the status" in caplog.text  # the traceback is logged


@pytest.mark.django_db
def test_an_unknown_api_path_answers_json_and_an_unknown_page_html(api, auth_client):
    response = api.get("/api/no-such-thing/")
    assert response.status_code == 404 and response.json() == {"error": "not found"}
    page = auth_client.get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_a_page_that_fails_keeps_an_html_500(auth_client, user, monkeypatch):
    exp = Experiment.objects.create(owner=user, name="t", source="upload", cluster_text="{}", trace_name="t.csv")
    monkeypatch.setattr(services, "experiment_page", lambda *a, **k: 1 / 0)
    auth_client.raise_request_exception = False
    response = auth_client.get(f"/experiments/{exp.pk}/")
    assert response.status_code == 500 and response["Content-Type"].startswith("text/html")


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.mark.postgres
@pytest.mark.slow
def test_after_the_database_drops_its_connection_the_web_process_answers_its_next_request(tmp_path, postgres_db):
    port = free_port()
    env = django_env(DATABASE_URL=postgres_db, DJANGO_SECRET_KEY="x" * 50, DJANGO_DEBUG="0",
                     MLSCHED_VAR_DIR=str(tmp_path / "var"), MEDIA_ROOT=str(tmp_path / "media"))  # fmt: skip
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
                   capture_output=True)  # fmt: skip
    log = open(tmp_path / "gunicorn.log", "w")  # noqa: SIM115
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "webapp.wsgi", "--bind", f"127.0.0.1:{port}",
                               "--workers", "1"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                assert get(f"{base}/healthz")[0] == 200
                break
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "gunicorn.log").read_text()
                time.sleep(0.3)
        assert drop_connections(postgres_db) >= 1  # the worker process's kept connection (CONN_MAX_AGE)
        answers = [get(f"{base}/healthz")[0] for _ in range(3)]
        status, body = get(f"{base}/api/experiments/")
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    assert answers == [200, 200, 200]
    assert status == 401 and "error" in json.loads(body)
