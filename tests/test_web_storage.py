"""The database storage (webapp/dbstorage.py), the default one: files as chunked rows that every host
reads, saved whole or not at all, a taken name never overwritten; and MLSCHED_STORAGE."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage, storages

from webapp.dbstorage import DatabaseStorage
from webapp.models import StoredChunk, StoredFile
from webapp.settings import storage_setting

pytestmark = [pytest.mark.django_db]

DATA = bytes(range(256)) * 40  # 10,240 bytes


def test_the_default_storage_is_the_database():
    assert isinstance(storages["default"], DatabaseStorage)
    default_storage.save("results/1/run-1.json.gz", ContentFile(b"x"))
    assert StoredFile.objects.filter(name="results/1/run-1.json.gz").exists()


def test_a_file_larger_than_a_chunk_is_stored_in_chunks_and_read_back_whole_or_in_pieces():
    storage = DatabaseStorage(chunk_bytes=1000)
    name = storage.save("results/7/run-3.json.gz", ContentFile(DATA))
    assert StoredChunk.objects.filter(file__name=name).count() == 11 and storage.size(name) == len(DATA)
    with storage.open(name) as f:
        assert f.read() == DATA
    with storage.open(name) as f:
        f.seek(2990)
        assert f.read(20) == DATA[2990:3010]  # across a chunk boundary
        assert f.read() == DATA[3010:]


def test_a_closed_stored_file_opens_again():
    storage = DatabaseStorage(chunk_bytes=100)
    f = storage.open(storage.save("a.bin", ContentFile(DATA)))
    f.close()
    assert f.open("rb").read() == DATA


def test_a_save_of_a_taken_name_gets_another_name_and_leaves_the_first_file():
    storage = DatabaseStorage()
    assert storage.save("reproductions/x/assembling.lock", ContentFile(b"")) == "reproductions/x/assembling.lock"
    second = storage.save("reproductions/x/assembling.lock", ContentFile(b"other"))
    assert second != "reproductions/x/assembling.lock"
    assert storage.open("reproductions/x/assembling.lock").read() == b""


def test_a_save_that_fails_half_way_leaves_no_file():
    class Broken(ContentFile):
        def chunks(self, chunk_size=None):
            yield b"a" * 10
            raise OSError("the upload was cut")

    storage = DatabaseStorage(chunk_bytes=4)
    with pytest.raises(OSError, match="cut"):
        storage.save("dataset-imports/1.raw", Broken(b""))
    assert not storage.exists("dataset-imports/1.raw") and not StoredChunk.objects.exists()


def test_listing_a_folder_gives_its_subfolders_and_files_and_deleting_a_file_drops_its_chunks():
    storage = DatabaseStorage(chunk_bytes=100)
    for name in ("r/fig/started.json", "r/fig/cases/0-0-0.json", "r/fig/cases/0-0-1.json", "r/other.json"):
        storage.save(name, ContentFile(DATA))
    assert storage.listdir("r/fig") == (["cases"], ["started.json"])
    assert storage.listdir("r/fig/cases/") == ([], ["0-0-0.json", "0-0-1.json"])
    assert storage.listdir("nothing") == ([], [])
    storage.delete("r/other.json")
    assert not storage.exists("r/other.json") and StoredChunk.objects.count() == 3 * 103
    with pytest.raises(FileNotFoundError):
        storage.open("r/other.json")


def test_stored_files_are_read_only():
    storage = DatabaseStorage()
    storage.save("a.txt", ContentFile(b"x"))
    with pytest.raises(ValueError, match="reading only"):
        storage.open("a.txt", "wb")


@pytest.mark.parametrize(
    ("value", "backend"),
    [
        ("", "webapp.dbstorage.DatabaseStorage"),
        ("database", "webapp.dbstorage.DatabaseStorage"),
        ("filesystem", "django.core.files.storage.FileSystemStorage"),
        ("storages.backends.s3.S3Storage", "storages.backends.s3.S3Storage"),
    ],
)
def test_mlsched_storage_names_the_default_storage(value, backend):
    assert storage_setting(value, '{"bucket_name": "lab"}' if "s3" in value else "") == {
        "BACKEND": backend,
        "OPTIONS": {"bucket_name": "lab"} if "s3" in value else {},
    }


@pytest.mark.parametrize(
    ("value", "options", "message"),
    [
        ("disk", "", "MLSCHED_STORAGE='disk': expected one of database, filesystem"),
        ("database", "{bucket", "MLSCHED_STORAGE_OPTIONS is not JSON"),
        ("database", "[1]", "MLSCHED_STORAGE_OPTIONS must be a JSON object"),
    ],
)
def test_a_bad_storage_setting_stops_the_app_naming_the_variable(value, options, message):
    with pytest.raises(ImproperlyConfigured, match=message.replace("(", r"\(").replace("[", r"\[")):
        storage_setting(value, options)


def test_files_of_the_old_media_folder_are_copied_into_the_storage_once(settings, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    settings.MEDIA_ROOT = tmp_path / "media"
    (tmp_path / "media" / "results" / "4").mkdir(parents=True)
    (tmp_path / "media" / "results" / "4" / "run-9.json.gz").write_bytes(DATA)
    (tmp_path / "media" / "elsewhere.txt").write_bytes(b"not the app's")
    out = StringIO()
    call_command("import_media", stdout=out)
    assert "copied 1 files" in out.getvalue()
    assert default_storage.open("results/4/run-9.json.gz").read() == DATA
    assert not default_storage.exists("elsewhere.txt")
    out = StringIO()
    call_command("import_media", stdout=out)
    assert out.getvalue() == "" and StoredFile.objects.count() == 1


def test_a_result_document_is_sent_a_piece_at_a_time_from_its_chunks(monkeypatch, tiny_cluster, tiny_trace):
    import json

    from webapp import results_io, services
    from webapp.models import Experiment, Run
    from webapp.runstore import encode_result

    exp = Experiment.objects.create(name="e", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                    trace_text=tiny_trace)  # fmt: skip
    doc = {"schema": "mlsched.result/1", "jobs": [{"job_id": f"j{i}", "completion": i} for i in range(3000)]}
    run = Run.objects.create(experiment=exp, algorithm="fifo", status="done")
    run.result.name = DatabaseStorage(chunk_bytes=1000).save("results/e/run.json.gz", ContentFile(encode_result(doc)))
    monkeypatch.setattr(results_io, "RESULT_CHUNK", 4096)
    pieces = list(services.result_chunks(run))
    assert len(pieces) > 10 and max(map(len, pieces)) == 4096
    assert json.loads(b"".join(pieces)) == doc and b"".join(pieces) == services.result_bytes(run)


def test_a_name_taken_between_the_check_and_the_write_gets_a_free_variant():
    storage = DatabaseStorage()
    assert storage._save("results/2/run-5.json.gz", ContentFile(b"first")) == "results/2/run-5.json.gz"
    other = storage._save("results/2/run-5.json.gz", ContentFile(b"second"))  # as a concurrent writer would
    assert other.startswith("results/2/run-5") and other != "results/2/run-5.json.gz"
    assert storage.open("results/2/run-5.json.gz").read() == b"first" and storage.open(other).read() == b"second"
