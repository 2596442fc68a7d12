"""Repetitions through Django's test client: the form and the API store one run per variant and
repetition (seeds of a preset, algorithm seeds of an uploaded trace, windows of a trace), each run
sees its own instance, and bad repetitions are refused with the field at fault."""

import pytest
from django.urls import reverse

from scheduling import presets
from webapp import services
from webapp.models import Experiment
from workers.runs import load_instance

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")

WINDOW_TRACE = "job_id,arrival,epochs,chunks,minibatches,batch_time,ps_update\n" + "".join(
    f"j{i},{t},1,2,2,60,30\n" for i, t in enumerate((0, 1, 2, 5, 6, 7, 10, 11, 12, 12))
)


@pytest.fixture
def client(auth_client):
    """Pages need a signed-in user (conftest ``auth_client``)."""
    return auth_client


def preset_data(**extra):
    return {"source": "preset", "preset": "demo", "jobs": "6", "size": "1", "algorithms": ["fifo", "srtf"],
            "seed": "0", **extra}  # fmt: skip


def test_repeating_a_preset_over_seeds_runs_each_algorithm_on_each_seeds_trace(
    client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, preset_data(repeat="seeds", repeat_seeds="3-5"))
    assert response.status_code == 302, response.context["form"].errors
    exp = Experiment.objects.get()
    assert exp.repetition == {"over": "seeds", "seeds": [3, 4, 5], "trace_seeds": True}
    runs = list(exp.runs.all())
    assert [(r.algorithm, r.repetition, r.seed, r.trace_seed) for r in runs] == [
        ("fifo", 0, 3, 3), ("srtf", 0, 3, 3), ("fifo", 1, 4, 4), ("srtf", 1, 4, 4), ("fifo", 2, 5, 5),
        ("srtf", 2, 5, 5),
    ]  # fmt: skip
    assert {r.status for r in runs} == {"done"}
    # each repetition simulated the preset's trace of its seed
    docs = {r.pk: services.load_result(r) for r in runs}
    for run in runs:
        files = presets.build("demo", jobs=6, seed=run.trace_seed)
        expected = load_instance(files.cluster, "cluster.json", files.trace, files.trace_name)
        assert docs[run.pk]["seed"] == run.seed
        assert [(j["job_id"], j["arrival"]) for j in docs[run.pk]["jobs"]] == [
            (j.job_id, j.arrival) for j in expected.jobs
        ]
    arrivals = {tuple(j["arrival"] for j in doc["jobs"]) for doc in docs.values()}
    assert len(arrivals) == 3  # the seeds drew different traces
