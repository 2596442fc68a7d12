"""Hosts that share nothing but PostgreSQL and Redis (DESIGN section 8): a web server and two Celery
workers, each started from its own copy of the code in its own folder (so each has its own
``var/`` and ``var/media``), on a fresh PostgreSQL database and Redis database 15 with a queue of
its own. A sweep submitted to the web host completes on the two workers, and every page, export
and API file of it answers 200 from the web host; a trace too large to check in a web request is
checked by a worker before its run starts; a raw dataset import the web host receives is imported
by a worker; a reproduction started on the web host is run and assembled by the workers. Nothing
of it is written under any host's own folder.
"""

import http.cookiejar
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zipfile
from io import BytesIO

import pytest

from tests.conftest import TINY_CLUSTER
from tests.test_tasks import ROOT, django_env, free_port

pytestmark = [pytest.mark.redis, pytest.mark.postgres, pytest.mark.slow]

CODE = ("manage.py", "webapp", "workers", "scheduling", "templates", "static")

SETUP = """
from django.core.management import call_command
call_command("migrate", interactive=False, verbosity=0)
from django.contrib.auth.models import User
from webapp.models import ApiToken
user = User.objects.create_user("host", password="host-password-1")
print(ApiToken.issue(user, "multihost")[1])
"""

PK = """
from webapp.models import Dataset
print(Dataset.objects.get(name="{name}").pk)
"""


def host_copy(tmp_path, name):
    """A folder holding its own copy of the code: a host that shares no folder with the others."""
    folder = tmp_path / name
    for item in CODE:
        source = ROOT / item
        if source.is_dir():
            shutil.copytree(source, folder / item, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, folder / item)
    return folder


def multipart(fields, files):
    """``multipart/form-data`` of ``fields`` (name -> value or list of values) and ``files``
    (name -> (file name, bytes)): (body, content type)."""
    boundary = uuid.uuid4().hex
    out = BytesIO()
    for name, values in fields.items():
        for value in values if isinstance(values, list) else [values]:
            out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for name, (filename, data) in files.items():
        out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'.encode())
        out.write(b"Content-Type: application/octet-stream\r\n\r\n" + data + b"\r\n")
    out.write(f"--{boundary}--\r\n".encode())
    return out.getvalue(), f"multipart/form-data; boundary={boundary}"


class Hosts:
    def __init__(self, tmp_path, database_url):
        self.tmp = tmp_path
        self.queue = f"mlsched-multihost-{os.getpid()}-{time.monotonic_ns()}"
        self.database_url = database_url
        self.procs = []
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"

    def env(self, folder):
        env = django_env(
            DATABASE_URL=self.database_url,
            REDIS_URL="redis://127.0.0.1:6379/15",
            MLSCHED_QUEUE=self.queue,
            PYTHONPATH=str(folder),
            MLSCHED_HEARTBEAT="0.5",
        )
        for name in ("MEDIA_ROOT", "MLSCHED_VAR_DIR", "MLSCHED_STORAGE", "MLSCHED_STORAGE_OPTIONS"):
            env.pop(name, None)  # each host keeps its var/ in its own folder, and the default storage
        return env

    def run(self, folder, *args):
        out = subprocess.run([sys.executable, *args], cwd=folder, env=self.env(folder), capture_output=True,
                             text=True, timeout=120, check=False)  # fmt: skip
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout

    def start(self, folder, name, *args):
        log = open(self.tmp / f"{name}.log", "w")  # noqa: SIM115
        proc = subprocess.Popen([sys.executable, *args], cwd=folder, env=self.env(folder), stdout=log,
                                stderr=subprocess.STDOUT)  # fmt: skip
        self.procs.append((proc, log))
        return proc

    def log(self, name):
        return (self.tmp / f"{name}.log").read_text()

    def stop(self):
        for proc, log in self.procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
            log.close()


def wait_for(predicate, what, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def get(opener, url, headers=None):
    """(status, body) of a GET."""
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except urllib.error.URLError:  # not listening yet
        return 0, b""


def csrf(opener, url):
    status, body = get(opener, url)
    assert status == 200, (url, status)
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body.decode()).group(1)


def post(opener, url, fields, files=None, headers=None):
    body, content_type = multipart(fields, files or {})
    request = urllib.request.Request(url, body, {"Content-Type": content_type, "Referer": url, **(headers or {})})
    try:
        with opener.open(request, timeout=60) as response:
            return response.status, response.read(), response.url
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), url


def files_under(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_a_sweep_on_two_worker_hosts_that_share_no_folder_is_served_whole_by_the_web_host(tmp_path, postgres_db):
    hosts = Hosts(tmp_path, postgres_db)
    web, worker_a, worker_b = (host_copy(tmp_path, n) for n in ("web", "worker-a", "worker-b"))
    try:
        hosts.start(web, "web", "-m", "gunicorn", "--workers", "2", "--bind", f"127.0.0.1:{hosts.port}",
                    "webapp.wsgi:application")  # fmt: skip
        for folder, name in ((worker_a, "worker-a"), (worker_b, "worker-b")):
            hosts.start(folder, name, "-m", "celery", "-A", "workers", "worker", "--pool=solo",
                        "--loglevel=INFO", "--without-gossip", "--without-mingle", "--without-heartbeat",
                        f"--hostname={name}@%h")  # fmt: skip
        # The schema and an API key while they start (/healthz answers 200 once the schema is there).
        key = hosts.run(web, "manage.py", "shell", "-c", SETUP).strip().splitlines()[-1]
        api = {"Authorization": f"Token {key}"}
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        wait_for(lambda: get(opener, f"{hosts.base}/healthz")[0] == 200, "the web server")
        wait_for(lambda: all("ready" in hosts.log(n) for n in ("worker-a", "worker-b")), "both workers")

        # A sweep through the API: fifo and srtf, workers_max 1..5 (10 runs).
        fields = {"source": "preset", "preset": "demo", "jobs": "12", "preset_seed": "0", "size": "1",
                  "algorithms": ["fifo", "srtf"], "mode": "sweep", "sweep_param": "workers_max",
                  "sweep_values": "1:5:1", "seed": "0"}  # fmt: skip
        status, body, _ = post(opener, f"{hosts.base}/api/experiments/", fields, headers=api)
        assert status == 201, body[:2000]
        exp = json.loads(body)["id"]

        def finished():
            runs = json.loads(get(opener, f"{hosts.base}/api/experiments/{exp}/", api)[1])["runs"]
            return runs if all(r["status"] in ("done", "failed", "cancelled") for r in runs) else None

        runs = wait_for(finished, "the sweep")
        assert len(runs) == 10 and {r["status"] for r in runs} == {"done"}, runs
        ran = {n: hosts.log(n).count("succeeded in") for n in ("worker-a", "worker-b")}
        assert ran["worker-a"] >= 1 and ran["worker-b"] >= 1, ran  # both hosts simulated some runs

        # Every page, export and API file of it, from the web host.
        login = csrf(opener, f"{hosts.base}/accounts/login/")
        credentials = {"username": "host", "password": "host-password-1", "csrfmiddlewaretoken": login}
        status, _, url = post(opener, f"{hosts.base}/accounts/login/", credentials)
        assert status == 200 and "/accounts/login/" not in url
        page = f"{hosts.base}/experiments/{exp}/"
        urls = [page, f"{page}status.json", f"{page}export.zip"]
        urls += [f"{page}?tab={tab}" for tab in ("summary", "jct", "gantt", "time", "prices", "inputs")]
        for r in runs:
            urls += [f"{page}?tab=gantt&run={r['id']}", f"{page}?tab=time&run={r['id']}",
                     f"{hosts.base}/runs/{r['id']}/result.json"]  # fmt: skip
            urls += [f"{page}runs/{r['id']}/{f}" for f in ("result.json", "jobs.csv", "placements.csv")]
        answers = {url: get(opener, url) for url in urls}
        assert {url: s for url, (s, _) in answers.items() if s != 200} == {}
        api_urls = [f"{hosts.base}/api/experiments/{exp}/runs/{r['id']}/{f}"
                    for r in runs for f in ("result.json", "jobs.csv", "placements.csv")]  # fmt: skip
        assert {url: s for url in api_urls if (s := get(opener, url, api)[0]) != 200} == {}
        archive = zipfile.ZipFile(BytesIO(answers[f"{page}export.zip"][1]))
        assert sum(n.endswith("result.json") for n in archive.namelist()) == 10

        # An uploaded trace over the in-request limit: checked by a worker, then run.
        trace = "job_id,arrival,epochs,chunks,minibatches,batch_time,ps_update\n" + "".join(
            f"j{i},{i * 2},1,1,1,10,5\n"
            for i in range(5100)  # just over the 5,000 rows checked in a request
        )
        fields = {"source": "upload", "algorithms": ["fifo"], "seed": "0"}
        files = {"cluster_file": ("cluster.json", json.dumps(TINY_CLUSTER).encode()),
                 "trace_file": ("big.csv", trace.encode())}  # fmt: skip
        status, body, _ = post(opener, f"{hosts.base}/api/experiments/", fields, files, headers=api)
        assert status == 201, body[:2000]
        big = json.loads(body)["id"]

        def big_finished():
            body = json.loads(get(opener, f"{hosts.base}/api/experiments/{big}/", api)[1])
            return body if all(r["status"] in ("done", "failed") for r in body["runs"]) else None

        checked = wait_for(big_finished, "the large upload")
        assert [r["status"] for r in checked["runs"]] == ["done"], checked
        run = checked["runs"][0]["id"]
        assert get(opener, f"{hosts.base}/api/experiments/{big}/runs/{run}/result.json", api)[0] == 200

        # A raw GPU-job trace over the in-request limit: imported and checked by a worker.
        datasets = f"{hosts.base}/datasets/"
        cluster = json.dumps({**TINY_CLUSTER, "slot_seconds": 60}).encode()
        token = csrf(opener, datasets)
        status, _, _ = post(opener, datasets, {"kind": "cluster", "action": "add", "csrfmiddlewaretoken": token},
                            {"file": ("c.json", cluster)})  # fmt: skip
        assert status == 200
        cluster_pk = hosts.run(web, "manage.py", "shell", "-c", PK.format(name="c.json")).split()[-1]
        raw = "job_id,submit_time,num_gpus,duration\n" + "".join(f"job{i:06d},{i * 60},1,600\n" for i in range(14000))
        assert len(raw) > 256 * 1024
        token = csrf(opener, datasets)
        status, body, url = post(opener, datasets,
                                 {"kind": "import-gpu", "cluster": cluster_pk, "action": "add",
                                  "csrfmiddlewaretoken": token}, {"file": ("raw.csv", raw.encode())})  # fmt: skip
        assert status == 200, body[:2000]
        trace_pk = hosts.run(web, "manage.py", "shell", "-c", PK.format(name="raw-generic-gpu.csv")).split()[-1]
        check = f"{hosts.base}/datasets/{trace_pk}/check/{cluster_pk}.json"
        done = wait_for(lambda: (s := json.loads(get(opener, check)[1]))["status"] in ("done", "failed") and s,
                        "the import")  # fmt: skip
        assert done["status"] == "done", done
        assert get(opener, f"{hosts.base}/datasets/{trace_pk}/")[0] == 200

        # A reproduction started on the web host: its cases and assembly run on the workers.
        token = csrf(opener, f"{hosts.base}/reproductions/")
        status, _, _ = post(opener, f"{hosts.base}/reproductions/zhou-fig8/start/",
                            {"seeds": "1", "csrfmiddlewaretoken": token})  # fmt: skip
        assert status == 200

        def reproduced():
            body = get(opener, f"{hosts.base}/reproductions/")[1].decode()
            state = re.search(r'id="reproduction-zhou-fig8" data-status="(\w+)"', body).group(1)
            return state if state != "running" else None

        assert wait_for(reproduced, "the reproduction") == "done"
        for name in ("table.md", "summary.csv", "runs.csv", "figure.html", "provenance.json"):
            assert get(opener, f"{hosts.base}/reproductions/zhou-fig8/{name}")[0] == 200, name
    finally:
        hosts.stop()
    for folder in (web, worker_a, worker_b):  # every file went to the database
        media = folder / "var" / "media"
        assert not media.exists() or files_under(media) == []
