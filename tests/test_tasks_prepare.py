"""A submission's preparation (webapp/submit_worker.py, workers/submissions.py) through a real Redis
broker and real worker processes: window repetitions and "Run as the model of" choices on a library
trace counted as large are posted through Django's test client in a "web" process, and cut, adapted
and run by Celery workers started in folders of their own, beside ``manage.py recover_runs --every``
as deployed. The first worker is killed in the middle of a preparation: the recovery leaves it alone
while it beats, sends it again once it stopped, and a replacement worker does it. What a user sees
afterwards: every run done or failed with its reason, the windows' spans and adapt.json records, no
note that a worker is still preparing.
(tests/test_web_submit_worker.py tests the same paths with the tasks run inline.)
"""

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.test_tasks import ROOT
from tests.test_tasks_faults import Env
from tests.test_web_models import FIXTURES

pytestmark = [pytest.mark.redis, pytest.mark.postgres, pytest.mark.slow]

# The web side: the library pair once (40 Philly jobs on 20 Alibaba nodes; "philly.csv" checked,
# "unchecked.csv" the same text with no check yet), then each form of argv[3] posted as a user does;
# prints the experiments' ids (or the form's errors). INLINE_ROWS is lowered here only: the request
# then counts the 40-job trace as large and leaves its cutting and adapting to a worker.
POST = """
import json, sys
from pathlib import Path
import django
django.setup()
from django.contrib.auth.models import User
from django.test import Client
from django.test.utils import setup_test_environment
from django.urls import reverse
from scheduling import importers
from webapp import limits
from webapp.models import Dataset, Experiment, TraceCheck
from workers import tasks
setup_test_environment()
fixtures, folder = Path(sys.argv[1]), Path(sys.argv[2])
user, new = User.objects.get_or_create(username="prep")
if new:
    importers.run("generic-gpu", fixtures / "philly_head.csv", folder / "philly.csv", slot_seconds=60)
    importers.run("node-list", fixtures / "openb_nodes_head.csv", folder / "nodes.json")
    made = {name: Dataset.objects.create(owner=user, kind=kind, name=name, size=1,
                                         text=(folder / name.replace("unchecked", "philly")).read_text())
            for kind, name in (("cluster", "nodes.json"), ("trace", "philly.csv"), ("trace", "unchecked.csv"))}
    check = TraceCheck.objects.create(trace=made["philly.csv"], cluster=made["nodes.json"])
    assert tasks.check_trace.apply((check.pk,)).result == "done"
limits.INLINE_ROWS = 10
pks = dict(Dataset.objects.filter(owner=user).values_list("name", "pk"))
client = Client(HTTP_HOST="localhost")
client.force_login(user)
out = []
for fields in json.loads(sys.argv[3]):
    data = {"source": "library", "cluster_dataset": pks["nodes.json"], "seed": "0", **fields,
            "trace_dataset": pks[fields.get("trace_dataset", "philly.csv")]}
    response = client.post(reverse("experiment-new"), data)
    if response.status_code != 302:
        out.append({"errors": response.context["form"].errors.get_json_data()})
    else:
        out.append({"id": Experiment.objects.latest("pk").pk})
print(json.dumps(out))
"""

# What the user sees of experiments argv[1] (ids), with their pages when argv[2] is "pages".
STATE = """
import html, json, sys
import django
django.setup()
from django.contrib.auth.models import User
from django.test import Client
from webapp.models import Experiment
client = Client(HTTP_HOST="localhost")
client.force_login(User.objects.get(username="prep"))
out = {}
for pk in json.loads(sys.argv[1]):
    exp = Experiment.objects.get(pk=pk)
    runs = [{"algorithm": r.algorithm, "status": r.status, "error": r.error, "window": r.window,
             "repetition": r.repetition} for r in exp.runs.order_by("pk")]
    options = exp.preset_options or {}
    state = {"prepare": options.get("prepare"), "records": options.get("adapt", {}).get("records"),
             "windows": (exp.repetition or {}).get("windows"), "runs": runs,
             "finished": all(r["status"] in ("done", "failed", "cancelled") for r in runs)}
    if sys.argv[2] == "pages":
        response = client.get(exp.get_absolute_url())
        page = response.content.decode()
        state["page"] = {"status": response.status_code, "preparing": 'id="prepare-note"' in page,
                         "errors shown": all(html.escape(r["error"]) in page for r in runs if r["error"])}
    out[pk] = state
print(json.dumps(out))
"""


def post(env, tmp_path, forms):
    out = env.python(POST, FIXTURES, tmp_path, json.dumps(forms))
    assert all("id" in o for o in out), out
    return [o["id"] for o in out]


def state(env, ids, pages=False):
    return {int(k): v for k, v in env.python(STATE, json.dumps(ids), "pages" if pages else "").items()}


def recovered(tmp_path):
    """The counts of each pass of ``recover_runs --every`` so far."""
    lines = (tmp_path / "recover.log").read_text().splitlines()
    return [{k: int(v) for k, v in (w.split("=") for w in line.split())} for line in lines if "prepared=" in line]


def test_preparations_over_redis_complete_through_a_killed_worker_and_fail_runs_with_their_reasons(
    tmp_path, postgres_db
):
    # A preparation whose worker has not beaten (every 0.5 s) for 2 s is taken as lost and sent again.
    env = Env(tmp_path, postgres_db, "redis://127.0.0.1:6379/15", MLSCHED_REDISPATCH_AFTER="2")
    env.manage("migrate", "--noinput")
    folders = {name: tmp_path / name for name in ("worker-1", "worker-2")}
    for folder in folders.values():
        folder.mkdir()
    preparing = tmp_path / "preparing"
    try:
        doomed = env.worker("doomed", cwd=folders["worker-1"], MLSCHED_TEST_SLOW_PREPARE=str(preparing))
        (cut,) = post(env, tmp_path, [{"repeat": "windows", "repeat_windows": "3", "algorithms": ["fifo", "srtf"]}])
        deadline = time.monotonic() + 60
        while not preparing.exists():
            assert time.monotonic() < deadline and doomed.poll() is None, (tmp_path / "doomed.log").read_text()
            time.sleep(0.1)
        taken = time.monotonic()
        log = open(tmp_path / "recover.log", "w")  # noqa: SIM115
        recover = subprocess.Popen([sys.executable, "manage.py", "recover_runs", "--every", "0.5"], cwd=ROOT,
                                   env=env.env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        env.workers.append((recover, log))  # stopped with the workers
        # Preparing for longer than MLSCHED_REDISPATCH_AFTER: its heartbeat says it is not lost.
        before = state(env, [cut], pages=True)[cut]
        while time.monotonic() < taken + 4 or len(passes := recovered(tmp_path)) < 3:
            assert time.monotonic() < taken + 60 and recover.poll() is None, (tmp_path / "recover.log").read_text()
            time.sleep(0.2)
        doomed.send_signal(signal.SIGKILL)  # in the middle of the preparation, its message unacknowledged
        doomed.wait(timeout=10)
        env.worker("replacement", cwd=folders["worker-2"])
        adapted, empty, checked_later = post(env, tmp_path, [
            {"model": "oasis", "repeat": "windows", "repeat_windows": "2", "algorithms": ["fifo", "asrpt"]},
            {"repeat": "windows", "repeat_windows": "0:5, 900000:900010", "algorithms": ["fifo", "srtf"]},
            {"model": "zhou-ps", "algorithms": ["zhou", "fifo"], "trace_dataset": "unchecked.csv"},
        ])  # fmt: skip
        ids = [cut, adapted, empty, checked_later]
        deadline = time.monotonic() + 90
        while True:
            now = state(env, ids)
            if all(s["finished"] for s in now.values()):
                break
            assert time.monotonic() < deadline, (now, (tmp_path / "replacement.log").read_text()[-3000:])
            time.sleep(0.5)
        seen = state(env, ids, pages=True)
    finally:
        env.stop_workers()

    # While the first worker prepared: nothing sent again, the page says a worker is cutting the trace.
    assert [p["prepared"] for p in passes] == [0] * len(passes)
    assert any(p["prepared"] == 1 for p in recovered(tmp_path))  # sent again once it stopped beating
    assert before["prepare"]["state"] == "running" and before["page"]["preparing"]
    assert {r["status"] for r in before["runs"]} == {"queued"} and before["windows"] == [[None, None]] * 3
    for exp in seen.values():  # no note left, every failure shown with its reason
        assert exp["prepare"] is None and exp["page"] == {"status": 200, "preparing": False, "errors shown": True}

    # The killed preparation, sent again by the recovery, done by the replacement: three windows cut.
    spans = seen[cut]["windows"]
    assert len(spans) == 3 and all(a < b for a, b in spans) and spans == sorted(spans)
    assert {(r["repetition"], tuple(r["window"])) for r in seen[cut]["runs"]} == {
        (i, tuple(w)) for i, w in enumerate(spans)
    }
    assert [r["status"] for r in seen[cut]["runs"]] == ["done"] * 6, seen[cut]["runs"]

    # Adapted per window: one adapt.json record each; asrpt cannot run the adapted instance.
    exp = seen[adapted]
    assert len(exp["windows"]) == 2 and [r["model"] for r in exp["records"]] == ["oasis", "oasis"]
    by = {(r["algorithm"], r["repetition"]): r for r in exp["runs"]}
    assert {k: r["status"] for k, r in by.items()} == {("fifo", 0): "done", ("fifo", 1): "done",
                                                       ("asrpt", 0): "failed", ("asrpt", 1): "failed"}  # fmt: skip
    assert all(by["asrpt", i]["error"].startswith("as the model of oasis: ") for i in (0, 1))

    # A window without jobs: every run fails with the reason.
    assert {r["status"] for r in seen[empty]["runs"]} == {"failed"}
    assert all("window 900000:900010 holds no job arrival" in r["error"] for r in seen[empty]["runs"])

    # A trace whose check a worker ran first, then the preparation: zhou runs its zhou-ps adaptation.
    exp = seen[checked_later]
    assert {r["algorithm"]: r["status"] for r in exp["runs"]} == {"zhou": "done", "fifo": "done"}, exp["runs"]
    assert [r["model"] for r in exp["records"]] == ["zhou-ps"]
