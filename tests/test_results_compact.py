"""A compact result document (results.build(compact=True)) reads and writes as the plain one."""

from __future__ import annotations

import io
import json

import pytest

from scheduling import api, registry, results
from scheduling.engine import simulate
from scheduling.validator import validate
from tests.scenarios import preset_instance


def documents(algorithm: str, preset: str, restart_seconds: float = 0.0) -> tuple[dict, dict]:
    inst = preset_instance(preset, 40, 3)
    spec = registry.get(algorithm)

    def one(compact: bool) -> dict:
        run = simulate(inst, spec.build(inst, spec.parse_params({}), 3), restart_seconds=restart_seconds)
        return results.build(inst, run, algorithm, {}, 3, compact=compact)

    return one(False), one(True)


@pytest.mark.parametrize(
    ("algorithm", "preset", "restart"), [("fifo", "zhou-ps", 0.0), ("srtf", "zhou-ps", 90.0), ("drf", "oasis", 0.0)]
)
def test_the_compact_document_writes_the_bytes_of_the_plain_one(algorithm, preset, restart):
    plain, compact = documents(algorithm, preset, restart)
    expected = json.dumps(plain, separators=(",", ":"))
    for doc in (plain, compact):
        out = io.StringIO()
        results.dump(doc, out)
        assert out.getvalue() == expected
    assert compact["placements"] == plain["placements"] and compact["jobs"] == plain["jobs"]


def test_rows_are_written_in_batches_to_the_same_bytes(monkeypatch):
    plain, compact = documents("srtf", "zhou-ps")
    monkeypatch.setattr(results, "ROWS_AT_ONCE", 7)  # many batches, a partial one last
    assert len(compact["progress"]) > 7
    out = io.StringIO()
    results.dump(compact, out)
    assert out.getvalue() == json.dumps(plain, separators=(",", ":"))


def test_the_validator_finds_the_same_problems_in_both_forms():
    plain, compact = documents("srtf", "zhou-ps")
    inst = preset_instance("zhou-ps", 40, 3)
    assert validate(inst, compact) == validate(inst, plain) == []
    first = plain["placements"][0]
    plain["placements"][0] = {**first, "count": first["count"] + 100}  # overbooks its server
    assert validate(inst, plain)  # the check can fail; the compact rows are read-only


def test_a_compact_row_is_a_read_only_mapping_of_the_plain_values():
    plain, compact = documents("fifo", "zhou-ps")
    row = compact["jobs"][-1]
    assert dict(row) == plain["jobs"][-1] and list(row) == list(plain["jobs"][-1])
    assert [dict(r) for r in compact["progress"][:3]] == plain["progress"][:3]
    with pytest.raises(TypeError):
        row["completion"] = 0  # type: ignore[index]
    with pytest.raises(IndexError):
        compact["jobs"][len(plain["jobs"])]


def test_the_cli_writes_what_the_library_returns(tmp_path):
    inst = preset_instance("zhou-ps", 40, 3)
    doc = api.run(inst, "fifo", seed=3)
    path = tmp_path / "r.json"
    results.write(api.run(inst, "fifo", seed=3, compact=True), path)
    written = results.read(path)
    for volatile in ("provenance", "code_version"):
        written.pop(volatile, None)
        doc.pop(volatile, None)
    assert written == doc


def test_rows_of_every_value_kind_write_as_json_dumps_writes_their_dicts(monkeypatch):
    from array import array

    shared = {"gpu": 0.5, "cpu": 2.0}
    columns = {
        "job_id": ["a", 'b"\\', "ü€\n", "%s", "x"],  # json's escapes, non-ASCII
        'n%d "k"': array("q", [0, -1, 2**62, 7, 3]),  # a key json escapes, with % in it
        "rate": array("d", [0.1, 1e300, -0.0, 2.5e-8, 1.0]),
        "odd": array("d", [float("nan"), float("inf"), -float("inf"), 0.0, 3.0]),
        "start": [None, 3, 2**70, None, 0],  # ints beyond an array's, with None
        "flag": [True, False, True, True, False],
        "demand": [shared, shared, {"gpu": 1.0}, shared, {}],
        "mixed": [1.5, None, "s", [1, {"a": None}], False],
    }
    rows = results.Rows(columns)
    expected = json.dumps({"rows": [{k: v[i] for k, v in columns.items()} for i in range(5)]}, separators=(",", ":"))
    for batch in (4096, 2, 1):
        monkeypatch.setattr(results, "ROWS_AT_ONCE", batch)
        out = io.StringIO()
        results.dump({"rows": rows}, out)
        assert out.getvalue() == expected


@pytest.mark.parametrize(("algorithm", "preset"), [("fifo", "edge-cloud"), ("srtf", "zhou-ps")])
def test_metrics_read_from_the_columns_equal_those_read_row_by_row(algorithm, preset):
    # edge-cloud has an unlimited cloud server, whose placements utilisation does not count
    plain, compact = documents(algorithm, preset, 30.0)
    inst = preset_instance(preset, 40, 3)
    from_rows = results.compute_metrics(inst.cluster, plain)
    assert results.compute_metrics(inst.cluster, compact) == from_rows == plain["metrics"]
    assert any(s["unlimited"] for s in plain["servers"]) == (preset == "edge-cloud")
    assert results.job_records(compact) == results.job_records(plain)
