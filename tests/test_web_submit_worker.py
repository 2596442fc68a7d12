"""A window repetition or a "Run as the model of" choice on a large trace (more than
``limits.INLINE_ROWS`` rows) is cut and adapted by a worker, not in the request
(webapp/submit_worker.py, workers/submissions.py): the request checks what needs no trace, stores
the runs unsent, and the worker records the windows' spans and adapt.json records, fails the runs
that cannot go ahead with the reason and sends the others."""

import pytest
from django.urls import reverse

from scheduling import importers, loaders
from tests.test_web_models import FIXTURES
from webapp import limits, services, submit_worker
from webapp.models import Dataset, Experiment
from webapp.tracechecks import start
from workers import submissions, tasks

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")


@pytest.fixture
def client(auth_client):
    return auth_client


@pytest.fixture
def library(user, tmp_path, monkeypatch):
    """A checked library pair: 40 Philly jobs on 20 Alibaba nodes, counted as a large trace."""
    importers.run("generic-gpu", FIXTURES / "philly_head.csv", tmp_path / "philly.csv", slot_seconds=60)
    importers.run("node-list", FIXTURES / "openb_nodes_head.csv", tmp_path / "nodes.json")
    cluster = Dataset.objects.create(owner=user, kind="cluster", name="nodes.json",
                                     text=(tmp_path / "nodes.json").read_text(), size=1)  # fmt: skip
    trace = Dataset.objects.create(owner=user, kind="trace", name="philly.csv",
                                   text=(tmp_path / "philly.csv").read_text(), size=1)  # fmt: skip
    check = start(trace, cluster)
    tasks.check_trace.apply((check.pk,))
    monkeypatch.setattr(limits, "INLINE_ROWS", 10)
    return cluster, trace


@pytest.fixture
def parsed_in_request(monkeypatch):
    calls = []
    parse = loaders.parse_trace

    def counting(text, *args, **kwargs):
        calls.append(text.count("\n"))
        return parse(text, *args, **kwargs)

    monkeypatch.setattr(loaders, "parse_trace", counting)
    return calls


def form(library, **extra):
    cluster, trace = library
    return {"source": "library", "cluster_dataset": cluster.pk, "trace_dataset": trace.pk, "seed": "0",
            "algorithms": ["fifo", "srtf"], **extra}  # fmt: skip


def test_windows_are_cut_by_the_worker_and_the_runs_sent_after(
    client, library, parsed_in_request, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as later:
        response = client.post(NEW, form(library, repeat="windows", repeat_windows="4"))
    assert response.status_code == 302, response.context["form"].errors
    assert parsed_in_request == []  # neither parsed nor cut in the request
    exp = Experiment.objects.get()
    assert submit_worker.pending(exp) and exp.runs.count() == 8
    page = client.get(exp.get_absolute_url()).content.decode()
    assert 'id="prepare-note"' in page and 'id="broker-note"' not in page
    assert services.recover_runs()["dispatched"] == 0  # the runs wait for the cut, not for the broker
    with django_capture_on_commit_callbacks(execute=True):
        for callback in later:
            callback()
    exp.refresh_from_db()
    assert not submit_worker.pending(exp)
    spans = exp.repetition["windows"]
    assert len(spans) == 4 and all(a < b for a, b in spans) and spans == sorted(spans)
    assert {tuple(r.window) for r in exp.runs.all()} == {tuple(w) for w in spans}
    assert {r.status for r in exp.runs.all()} == {"done"}
    assert 'id="prepare-note"' not in client.get(exp.get_absolute_url()).content.decode()


def test_a_window_without_jobs_fails_every_run_with_the_reason(client, library, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, form(library, repeat="windows", repeat_windows="0:5, 900000:900010"))
    assert response.status_code == 302
    runs = list(Experiment.objects.get().runs.all())
    assert {r.status for r in runs} == {"failed"}
    assert all("window 900000:900010 holds no job arrival" in r.error for r in runs), runs[0].error


def test_a_bad_window_spec_is_refused_by_the_form(client, library):
    for text, message in (("1", "2 to 100 windows"), ("5:3", "5:3")):
        response = client.post(NEW, form(library, repeat="windows", repeat_windows=text))
        assert response.status_code == 200 and not Experiment.objects.exists()
        assert message in str(response.context["form"].errors["repeat_windows"])


def test_the_model_is_adapted_by_the_worker_per_window(client, library, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, form(library, model="zhou-ps", repeat="windows", repeat_windows="2",
                                         algorithms=["zhou", "fifo"]))  # fmt: skip
    assert response.status_code == 302, response.context["form"].errors
    exp = Experiment.objects.get()
    records = exp.preset_options["adapt"]["records"]
    assert len(records) == 2 and all(r["model"] == "zhou-ps" for r in records)
    assert {r.status for r in exp.runs.all()} == {"done"}, [r.error for r in exp.runs.all()]


def test_an_algorithm_the_adapted_instance_cannot_run_fails_with_the_reason(
    client, library, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, form(library, model="oasis", algorithms=["fifo", "asrpt"]))
    runs = {r.algorithm: r for r in Experiment.objects.get().runs.all()}
    assert runs["fifo"].status == "done"
    assert runs["asrpt"].status == "failed" and runs["asrpt"].error.startswith("as the model of oasis: ")


@pytest.fixture
def windows_sent(client, library, monkeypatch, django_capture_on_commit_callbacks):
    """A two-window repetition submitted on the large trace: (its experiment, the preparations sent)."""
    sent = []
    monkeypatch.setattr(submissions, "send_preparation", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, form(library, repeat="windows", repeat_windows="2"))
    return Experiment.objects.get(), sent


def test_a_lost_preparation_is_sent_again_by_the_recovery(windows_sent, settings, django_capture_on_commit_callbacks):
    exp, sent = windows_sent
    assert sent == [exp.pk]
    settings.MLSCHED_REDISPATCH_AFTER = 0
    assert services.recover_runs()["prepared"] == 1 and sent == [exp.pk, exp.pk]
    with django_capture_on_commit_callbacks(execute=False):  # (its runs' sending is not run here)
        submissions.prepare_submission.apply((exp.pk,))
    assert submissions.prepare_submission.apply((exp.pk,)).result == "skipped"  # a duplicate does nothing
    assert {r.status for r in Experiment.objects.get().runs.all()} == {"queued"}  # sent, not simulated here


def test_a_model_on_a_trace_whose_check_is_pending_waits_for_it_then_adapts(
    client, user, library, django_capture_on_commit_callbacks
):
    from webapp.models import TraceCheck

    cluster, trace = library
    fresh = Dataset.objects.create(owner=user, kind="trace", name="again.csv", text=trace.text, size=1)
    TraceCheck.objects.create(trace=fresh, cluster=cluster)  # queued: its message is on its way
    data = form(library, model="zhou-ps", algorithms=["zhou", "fifo"], trace_dataset=fresh.pk)
    with django_capture_on_commit_callbacks(execute=False) as later:
        assert client.post(NEW, data).status_code == 302
    exp = Experiment.objects.get()
    assert exp.input_check is not None and submit_worker.pending(exp)
    with django_capture_on_commit_callbacks(execute=True):
        for callback in later:
            callback()
        tasks.check_trace.apply((exp.input_check_id,))
    exp.refresh_from_db()
    # zhou cannot run the rigid trace as given, but can its zhou-ps adaptation: not failed by the check
    assert {r.algorithm: r.status for r in exp.runs.all()} == {"zhou": "done", "fifo": "done"}
    assert len(exp.preset_options["adapt"]["records"]) == 1


def test_a_preparation_lost_with_its_worker_on_its_last_attempt_fails_the_runs_with_the_reason(
    client, windows_sent, settings
):
    exp, sent = windows_sent
    store = submit_worker.DjangoSubmissionStore()
    settings.MLSCHED_REDISPATCH_AFTER = 0
    settings.MLSCHED_MAX_ATTEMPTS = 2
    assert store.claim(exp.pk) is not None  # attempt 1: its worker is killed (no beat, no finish)
    assert services.recover_runs()["prepared"] == 1 and sent == [exp.pk, exp.pk]  # sent again
    assert store.claim(exp.pk) is not None  # attempt 2: killed too
    assert services.recover_runs()["prepared"] == 0 and len(sent) == 2  # not a third time
    exp.refresh_from_db()
    assert not submit_worker.pending(exp)
    runs = list(exp.runs.all())
    assert {r.status for r in runs} == {"failed"} and all(r.finished for r in runs)
    assert all(r.error.startswith("lost: the worker stopped or was killed while it cut or adapted the trace")
               and r.error.endswith("on attempt 2 of 2") for r in runs), runs[0].error  # fmt: skip
    assert 'id="prepare-note"' not in client.get(exp.get_absolute_url()).content.decode()


def test_a_preparation_whose_worker_beats_is_not_sent_again(client, library, settings, monkeypatch):
    from datetime import timedelta

    from django.utils import timezone

    sent = []
    monkeypatch.setattr(submissions, "send_preparation", sent.append)
    client.post(NEW, form(library, repeat="windows", repeat_windows="2"))
    exp = Experiment.objects.get()
    store = submit_worker.DjangoSubmissionStore()
    assert store.claim(exp.pk) is not None
    exp.refresh_from_db()
    settings.MLSCHED_REDISPATCH_AFTER = 60
    exp.preset_options["prepare"]["at"] = (timezone.now() - timedelta(seconds=90)).isoformat()  # a long one
    Experiment.objects.filter(pk=exp.pk).update(preset_options=exp.preset_options)
    assert store.beat(exp.pk)  # its worker is alive
    assert services.recover_runs()["prepared"] == 0 and sent == []
    assert store.claim(exp.pk) is None  # nor taken by another worker
    store.finish(exp.pk, submissions.Prepared(spans=[(0, 5), (5, 10)]))
    assert not store.beat(exp.pk)  # done: the beats stop, and add no note back
    exp.refresh_from_db()
    assert not submit_worker.pending(exp)
