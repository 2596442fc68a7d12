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
