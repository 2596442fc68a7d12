"""Input files are stored once, by the SHA-256 of their text (``InputText``), and referenced from
experiments and datasets: the same trace uploaded twice is one row; deleting an experiment or a
dataset deletes the input files nothing else uses; share links and exports read them as before;
migration 0012 moves the texts experiments and datasets held into such rows (and back)."""

import hashlib
import io
import json
import threading
import time
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from tests.webhelpers import upload_data
from webapp import services
from webapp.models import Dataset, Experiment, InputText, ShareLink

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")


@pytest.fixture
def client(auth_client):
    return auth_client


def submit(client, cluster, trace, capture, **extra):
    with capture(execute=True):
        response = client.post(NEW, upload_data(cluster, trace, **extra))
    assert response.status_code == 302, response.content.decode()[:2000]
    return Experiment.objects.order_by("-pk").first()


def digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_two_experiments_with_the_same_trace_store_it_once(client, tiny_cluster, tiny_trace,
                                                           django_capture_on_commit_callbacks):  # fmt: skip
    first = submit(client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks)
    other_cluster = json.dumps({**json.loads(tiny_cluster), "slot_seconds": 30})
    second = submit(client, other_cluster, tiny_trace, django_capture_on_commit_callbacks, algorithms=["srtf"])
    assert first.trace_input_id == second.trace_input_id == digest(tiny_trace)
    assert first.cluster_input_id != second.cluster_input_id
    assert InputText.objects.count() == 3  # one trace, two cluster specs
    assert InputText.objects.get(pk=digest(tiny_trace)).size == len(tiny_trace.encode())
    fresh = Experiment.objects.get(pk=second.pk)
    assert (fresh.cluster_text, fresh.trace_text, fresh.history_text) == (other_cluster, tiny_trace, "")
    assert {r.status for r in fresh.runs.all()} == {"done"}  # the workers read the texts through the rows


def test_a_rerun_and_a_history_reuse_the_stored_files(client, tiny_cluster, tiny_trace,
                                                      django_capture_on_commit_callbacks):  # fmt: skip
    exp = submit(client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        again = services.rerun(exp, exp.owner)
    assert InputText.objects.count() == 2 and again.input_digests() == exp.input_digests()
    history = tiny_trace.replace("j1,", "h1,")
    past = submit(client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks,
                  history_file=io.BytesIO(history.encode()))  # fmt: skip
    assert past.history_input_id == digest(history) and InputText.objects.count() == 3
    assert Experiment.objects.get(pk=past.pk).history_text == history


def test_deleting_an_experiment_keeps_the_files_others_use_and_deletes_the_rest(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    first = submit(client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks)
    other_cluster = json.dumps({**json.loads(tiny_cluster), "slot_seconds": 30})
    second = submit(client, other_cluster, tiny_trace, django_capture_on_commit_callbacks)
    # the uploads joined the library: its datasets hold the same rows
    assert {d.input_id for d in Dataset.objects.all()} == {*first.input_digests(), *second.input_digests()}
    assert InputText.objects.count() == 3
    Dataset.objects.filter(input=first.cluster_input_id).delete()  # (the library keeps nothing of it)
    link = ShareLink.objects.create(experiment=second)
    assert client.post(reverse("experiment-delete", args=[first.pk])).status_code == 302
    assert set(InputText.objects.values_list("pk", flat=True)) == set(second.input_digests())
    # the share link of the experiment left still exports its inputs exactly
    response = client.get(f"/s/{link.token}/export.zip")
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content) if response.streaming
                                    else response.content)) as z:  # fmt: skip
        assert z.read("inputs/raw/trace.csv").decode() == tiny_trace
        assert z.read("inputs/raw/cluster.json").decode() == other_cluster
    assert client.post(reverse("experiment-delete", args=[second.pk])).status_code == 302
    assert InputText.objects.count() == 2  # the library's datasets still use them
    for ds in Dataset.objects.all():
        assert client.post(reverse("dataset-delete", args=[ds.pk])).status_code == 302
    assert not InputText.objects.exists()


def test_a_library_dataset_and_the_experiments_made_from_it_share_one_file(
    client, user, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    first = submit(client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks)
    trace, cluster = Dataset.objects.get(kind="trace"), Dataset.objects.get(kind="cluster")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(NEW, {"source": "library", "cluster_dataset": cluster.pk, "trace_dataset": trace.pk,
                          "algorithms": ["srtf"], "seed": "1"})  # fmt: skip
    second = Experiment.objects.order_by("-pk").first()
    assert second.pk != first.pk and second.input_digests() == first.input_digests() == [cluster.input_id,
                                                                                          trace.input_id]  # fmt: skip
    assert InputText.objects.count() == 2 and Dataset.objects.get(pk=trace.pk).text == tiny_trace
    assert client.post(reverse("dataset-delete", args=[trace.pk])).status_code == 302
    assert Experiment.objects.get(pk=second.pk).trace_text == tiny_trace  # still used by the experiments


def test_an_input_file_in_use_is_never_deleted(tiny_cluster, tiny_trace):
    exp = Experiment.objects.create(name="e", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                    trace_text=tiny_trace)  # fmt: skip
    assert InputText.delete_unused(exp.input_digests()) == 0
    assert InputText.objects.count() == 2
    spare = InputText.intern("job_id,arrival\nz,0\n")
    assert InputText.delete_unused([spare.pk, *exp.input_digests()]) == 1
    assert Experiment.objects.get(pk=exp.pk).trace_text == tiny_trace


def test_the_same_text_interned_twice_is_one_row():
    a, b = InputText.intern("x,y\n"), InputText.intern("x,y\n")
    assert a.pk == b.pk == digest("x,y\n") and InputText.objects.count() == 1
    assert InputText.intern("x,y\r\n").pk != a.pk  # the text as uploaded, byte for byte


@pytest.mark.django_db(transaction=True)
def test_migration_0012_moves_the_texts_into_shared_rows_and_back(tiny_cluster, tiny_trace):
    executor = MigrationExecutor(connection)
    before, after = [("webapp", "0010_experiment_input_check")], [("webapp", "0013_input_texts_required")]
    executor.migrate(before)
    try:
        old = MigrationExecutor(connection).loader.project_state(before).apps.get_model("webapp", "Experiment")
        texts = [(tiny_cluster, tiny_trace, ""), (tiny_cluster, tiny_trace, "job_id,arrival\nh,0\n"),
                 ("{}", "job_id,arrival\n", "")]  # fmt: skip
        pks = [old.objects.create(name=f"e{k}", source="upload", cluster_text=c, trace_name="t.csv", trace_text=t,
                                  history_text=h).pk for k, (c, t, h) in enumerate(texts)]  # fmt: skip
        owner = get_user_model().objects.create_user("migrating")
        old_ds = MigrationExecutor(connection).loader.project_state(before).apps.get_model("webapp", "Dataset")
        ds = old_ds.objects.create(owner_id=owner.pk, kind="trace", name="t.csv", text=tiny_trace, size=1).pk
        executor = MigrationExecutor(connection)
        executor.migrate(after)
        new = executor.loader.project_state(after).apps
        rows = new.get_model("webapp", "InputText").objects
        assert rows.count() == 5  # two cluster specs, two traces, one history (the dataset's trace: shared)
        assert new.get_model("webapp", "Dataset").objects.get(pk=ds).input_id == digest(tiny_trace)
        exps = {e.pk: e for e in new.get_model("webapp", "Experiment").objects.all()}
        for pk, (c, t, h) in zip(pks, texts, strict=True):
            e = exps[pk]
            assert rows.get(pk=e.cluster_input_id).text == c and rows.get(pk=e.trace_input_id).text == t
            assert (rows.get(pk=e.history_input_id).text if e.history_input_id else "") == h
        executor = MigrationExecutor(connection)
        executor.migrate(before)
        back = MigrationExecutor(connection).loader.project_state(before).apps.get_model("webapp", "Experiment")
        assert sorted((e.pk, e.cluster_text, e.trace_text, e.history_text) for e in back.objects.all()) == [
            (pk, *t) for pk, t in zip(pks, texts, strict=True)
        ]
        assert (
            MigrationExecutor(connection)
            .loader.project_state(before)
            .apps.get_model("webapp", "Dataset")
            .objects.get(pk=ds)
            .text
            == tiny_trace
        )
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_a_file_an_experiment_being_created_found_is_not_deleted_under_it(tiny_cluster, tiny_trace):
    """Row locks (``InputText.intern`` then ``delete_unused``) on PostgreSQL, the database of
    deployments (SQLite runs one writer at a time): a deletion that counts the references while an
    experiment being created holds the file waits for that experiment and keeps the file."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks between two connections: the PostgreSQL pass (make pytest-postgres)")
    gone = Experiment.objects.create(name="old", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                     trace_text=tiny_trace)  # fmt: skip
    digests = gone.input_digests()
    gone.delete()  # its files are unused now
    found, created = threading.Event(), {}

    def create():
        try:
            with transaction.atomic():
                cluster, trace = InputText.intern(tiny_cluster), InputText.intern(tiny_trace)
                found.set()
                time.sleep(0.5)  # the deletion below runs meanwhile: it waits for this commit
                created["pk"] = Experiment.objects.create(name="new", source="upload", cluster_input=cluster,
                                                          trace_name="t.csv", trace_input=trace).pk  # fmt: skip
        finally:
            connection.close()

    thread = threading.Thread(target=create)
    thread.start()
    assert found.wait(10)
    started = time.monotonic()
    deleted = InputText.delete_unused(digests)
    waited = time.monotonic() - started
    thread.join(10)
    assert deleted == 0 and waited > 0.2  # it waited for the creation's commit, then found it in use
    assert Experiment.objects.get(pk=created["pk"]).trace_text == tiny_trace
