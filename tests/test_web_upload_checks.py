"""Web requests never parse a large trace: an experiment whose trace has more than
``limits.INLINE_ROWS`` rows is stored at once, its runs waiting, and a worker checks the trace
(a TraceCheck, the uploaded files added to the datasets); the runs start when it passes, fail with
its error (line, field) when it does not, and those of algorithms that cannot run it fail with the
reason."""

import pytest
from django.urls import reverse

from scheduling import loaders
from tests.webhelpers import upload_data
from webapp import limits, services
from webapp.models import Dataset, Experiment, TraceCheck
from workers import tasks

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")


@pytest.fixture
def client(auth_client):
    return auth_client


@pytest.fixture
def small_inline_limit(monkeypatch):
    """The tiny trace (3 rows) counts as large."""
    monkeypatch.setattr(limits, "INLINE_ROWS", 2)


@pytest.fixture
def parsed_in_request(monkeypatch):
    """Traces parsed while the request runs (the check and the runs run after it, on commit)."""
    calls = []
    parse = loaders.parse_trace

    def counting(text, *args, **kwargs):
        calls.append(text.count("\n"))
        return parse(text, *args, **kwargs)

    monkeypatch.setattr(loaders, "parse_trace", counting)
    return calls


@pytest.mark.usefixtures("small_inline_limit")
def test_a_large_uploaded_trace_is_checked_by_a_worker_before_its_runs_start(
    client, tiny_cluster, tiny_trace, parsed_in_request, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as later:
        response = client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "srtf"]))
    assert response.status_code == 302 and parsed_in_request == []  # nothing parsed in the request
    exp = Experiment.objects.get()
    assert {r.status for r in exp.runs.all()} == {"queued"} and exp.input_check.status == "queued"
    assert set(Dataset.objects.values_list("kind", "name")) == {("cluster", "cluster.json"), ("trace", "trace.csv")}
    page = client.get(exp.get_absolute_url()).content.decode()
    assert 'id="input-check-note"' in page
    assert services.recover_runs()["dispatched"] == 0  # the runs wait for the check, not for the broker
    with django_capture_on_commit_callbacks(execute=True):  # the check, then the runs it releases
        for callback in later:
            callback()
    exp.refresh_from_db()
    assert exp.input_check is None and {r.status for r in exp.runs.all()} == {"done"}
    assert 'id="input-check-note"' not in client.get(exp.get_absolute_url()).content.decode()


@pytest.mark.usefixtures("small_inline_limit")
def test_a_large_trace_with_a_bad_line_fails_every_run_with_the_line(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    bad = tiny_trace.replace("j2,1,2,2,3,120,30", "j2,1,two,2,3,120,30")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, upload_data(tiny_cluster, bad, algorithms=["fifo", "srtf"]))
    assert response.status_code == 302
    runs = list(Experiment.objects.get().runs.all())
    assert {r.status for r in runs} == {"failed"}
    assert all(r.error.startswith("the trace did not pass its check: trace.csv, line 3") for r in runs), runs[0].error
    assert "epochs" in runs[0].error


@pytest.mark.usefixtures("small_inline_limit")
def test_runs_of_algorithms_the_large_trace_does_not_suit_fail_with_the_reason(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "spjf"]))
    runs = {r.algorithm: r for r in Experiment.objects.get().runs.all()}
    assert runs["fifo"].status == "done"
    assert runs["spjf"].status == "failed" and runs["spjf"].error.startswith("spjf needs pipeline jobs")


@pytest.mark.usefixtures("small_inline_limit")
def test_windows_of_a_large_upload_are_cut_by_a_worker_once_it_is_checked(
    client, tiny_cluster, tiny_trace, parsed_in_request, django_capture_on_commit_callbacks
):
    data = upload_data(tiny_cluster, tiny_trace, repeat="windows", repeat_windows="2")
    with django_capture_on_commit_callbacks(execute=False) as later:
        response = client.post(NEW, data)
    assert response.status_code == 302 and parsed_in_request == []
    exp = Experiment.objects.get()
    assert exp.repetition["windows"] == [[None, None], [None, None]] and exp.runs.count() == 2
    with django_capture_on_commit_callbacks(execute=True):  # the check, then the cut, then the runs
        for callback in later:
            callback()
    exp.refresh_from_db()
    assert exp.repetition["windows"] == [[0, 2], [2, 3]] and "prepare" not in exp.preset_options
    assert sorted(r.window for r in exp.runs.all()) == [[0, 2], [2, 3]]
    assert {r.status for r in exp.runs.all()} == {"done"}


def test_a_library_trace_whose_check_has_not_ended_is_not_parsed_in_the_request(
    client, user, tiny_cluster, tiny_trace, monkeypatch, parsed_in_request, django_capture_on_commit_callbacks
):
    cluster = Dataset.objects.create(owner=user, kind="cluster", name="c.json", text=tiny_cluster, size=200)
    trace = Dataset.objects.create(owner=user, kind="trace", name="t.csv", text=tiny_trace, size=200)
    TraceCheck.objects.create(trace=trace, cluster=cluster)  # queued: its message is on its way
    monkeypatch.setattr(limits, "INLINE_ROWS", 2)
    data = {"source": "library", "cluster_dataset": cluster.pk, "trace_dataset": trace.pk,
            "algorithms": ["fifo"], "seed": "0"}  # fmt: skip
    with django_capture_on_commit_callbacks(execute=False) as later:
        response = client.post(NEW, data)
    assert response.status_code == 302, response.context["form"].errors
    assert parsed_in_request == []
    exp = Experiment.objects.get()
    assert exp.input_check == TraceCheck.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        for callback in later:
            callback()
        tasks.check_trace.apply((exp.input_check_id,))  # the check's message, as a worker takes it
    exp.refresh_from_db()
    assert exp.input_check is None and exp.runs.get().status == "done"


@pytest.mark.usefixtures("small_inline_limit")
def test_the_api_creates_the_experiment_and_its_status_shows_the_check(
    client, user, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    from webapp.models import ApiToken

    _, key = ApiToken.issue(user)
    api = {"HTTP_AUTHORIZATION": f"Token {key}"}
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(reverse("api-experiments"), upload_data(tiny_cluster, tiny_trace), **api)
    assert response.status_code == 201
    status = client.get(reverse("api-experiment", args=[response.json()["id"]]), **api).json()
    assert status["input_check"]["status"] == "queued" and status["waiting_for_broker"] is False


@pytest.mark.usefixtures("small_inline_limit")
def test_a_check_whose_message_was_lost_is_sent_again_by_the_recovery(
    client, tiny_cluster, tiny_trace, settings, monkeypatch, django_capture_on_commit_callbacks
):
    import io
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    monkeypatch.setattr(tasks, "queued_messages", lambda: 0)  # the broker's queue holds no message

    with django_capture_on_commit_callbacks(execute=False):  # the check's message never leaves
        client.post(NEW, upload_data(tiny_cluster, tiny_trace))
    exp = Experiment.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("recover_runs", stdout=io.StringIO())  # queued for less than MLSCHED_REDISPATCH_AFTER
    assert exp.runs.get().status == "queued"
    TraceCheck.objects.update(updated=timezone.now() - timedelta(seconds=settings.MLSCHED_REDISPATCH_AFTER + 1))
    with django_capture_on_commit_callbacks(execute=True):
        call_command("recover_runs", stdout=io.StringIO())  # sends the check; its end sends the run
    exp.refresh_from_db()
    assert exp.input_check is None and exp.runs.get().status == "done"
