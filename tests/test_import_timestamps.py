"""generic-gpu import: a duration computed from two timestamp columns (--map duration=END-START)."""

import csv
import io
from pathlib import Path

import pytest

from scheduling import importers
from scheduling.cli import main
from scheduling.errors import InputError

PODS = Path(__file__).resolve().parents[2] / "shared" / "traces" / "alibaba-openb" / "openb_pod_list_default.csv"


def rows(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_a_duration_is_the_difference_of_two_columns_of_seconds(tmp_path):
    raw = tmp_path / "pods.csv"
    raw.write_text("name,creation_time,deletion_time,num_gpu\na,0,600,1\nb,100,160,2\n")
    out = tmp_path / "t.csv"
    importers.run("generic-gpu", raw, out, mapping={"duration": "deletion_time-creation_time"})
    assert [(r["job_id"], float(r["duration"])) for r in rows(out)] == [("a", 600.0), ("b", 60.0)]


def test_a_duration_is_the_difference_of_two_datetime_columns(tmp_path):
    raw = tmp_path / "jobs.csv"
    raw.write_text("id,submitted,started,ended,gpus\nx,2024-01-01 00:00,2024-01-01 00:05,2024-01-01 01:05,1\n")
    out = tmp_path / "t.csv"
    importers.run("generic-gpu", raw, out, mapping={"submit_time": "submitted", "duration": "ended-started"})
    assert float(rows(out)[0]["duration"]) == 3600.0


def test_a_difference_of_unknown_columns_names_the_columns(tmp_path):
    raw = tmp_path / "pods.csv"
    raw.write_text("name,creation_time,deletion_time,num_gpu\na,0,600,1\n")
    with pytest.raises(InputError) as exc:
        importers.run("generic-gpu", raw, tmp_path / "t.csv", mapping={"duration": "deleted-creation_time"})
    assert "deletion_time" in str(exc.value) and "--map duration" in str(exc.value)


def test_a_missing_end_time_names_its_line_and_column(tmp_path):
    raw = tmp_path / "pods.csv"
    raw.write_text("name,creation_time,deletion_time,num_gpu\na,0,600,1\nb,5,,1\n")
    with pytest.raises(InputError) as exc:
        importers.run("generic-gpu", raw, tmp_path / "t.csv", mapping={"duration": "deletion_time-creation_time"})
    assert exc.value.line == 3 and exc.value.field == "deletion_time"


@pytest.mark.skipif(not PODS.exists(), reason="the shared Alibaba pod list is not here")
def test_the_alibaba_pod_list_imports_with_the_cli(tmp_path, capsys):
    out = tmp_path / "pods.csv"
    code = main(["import", "--format", "generic-gpu", "--input", str(PODS), "--out", str(out),
                 "--map", "duration=deletion_time-creation_time"])  # fmt: skip
    assert code == 0 and "wrote 6203 jobs" in capsys.readouterr().out
    first = rows(out)[0]
    assert first["job_id"] == "openb-pod-0000" and float(first["duration"]) == 12537496.0
