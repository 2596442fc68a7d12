"""Every registered algorithm gives exactly the recorded schedule on seeded small instances.

The fingerprints, one file per algorithm in tests/fixtures/golden/, were recorded before the
engine's incremental redesign; a difference means a schedule changed. A case without a fingerprint
(a new algorithm) fails as "not recorded yet" until ``python -m tests.golden.make_golden`` records
it, which writes only the missing cases; ``--rerecord NAME`` re-records one algorithm, only after a
deliberate, documented change of its semantics.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scheduling import policy, registry
from tests.golden import make_golden
from tests.golden.make_golden import GOLDEN, cases, load, not_recorded, run_case

EXPECTED = load()
CASES = {f"{name}/{algo}": (algo, inst) for name, algo, inst in cases()}


def test_every_recorded_case_is_still_run():
    assert sorted(set(EXPECTED) - set(CASES)) == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_schedule_matches_the_golden_fingerprint(case):
    if case not in EXPECTED:
        pytest.fail(not_recorded(case))
    algo, inst = CASES[case]
    assert run_case(algo, inst) == EXPECTED[case]


def test_each_algorithm_keeps_its_cases_in_its_own_file():
    for path in GOLDEN.glob("*.json"):
        assert {make_golden.algorithm_of(case) for case in load_one(path)} == {path.stem}


def load_one(path: Path) -> dict[str, object]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


@pytest.fixture
def newcomer(monkeypatch: pytest.MonkeyPatch) -> str:
    """An algorithm added to the registry (a list scheduler by most workers first), for this test only."""
    spec = policy.list_algorithm("golden-newcomer", "Most workers first.", lambda job, config: -config.workers)
    monkeypatch.setitem(registry.REGISTRY, spec.name, spec)
    return spec.name


def test_a_new_algorithms_cases_are_not_recorded_yet_and_recording_them_leaves_the_others_untouched(
    newcomer: str, tmp_path: Path
):
    folder = tmp_path / "golden"
    shutil.copytree(GOLDEN, folder)
    before = {path.name: path.read_bytes() for path in folder.glob("*.json")}
    missing = sorted(f"{name}/{run}" for name, run, _ in cases() if f"{name}/{run}" not in load(folder))
    assert missing and {make_golden.algorithm_of(case) for case in missing} == {newcomer}
    message = not_recorded(missing[0])
    assert "not recorded yet" in message and "python -m tests.golden.make_golden" in message

    written = make_golden.record(folder)

    assert written == [folder / f"{newcomer}.json"]
    assert {path.name: path.read_bytes() for path in folder.glob("*.json") if path.name in before} == before
    recorded = load(folder)
    assert all(case in recorded for case in missing)
    assert make_golden.record(folder) == []  # nothing missing any more: nothing written


def test_rerecording_one_algorithm_rewrites_only_its_file(tmp_path: Path):
    folder = tmp_path / "golden"
    shutil.copytree(GOLDEN, folder)
    before = {path.name: path.read_bytes() for path in folder.glob("*.json")}
    (folder / "fifo.json").write_text("{}\n", encoding="utf-8")  # as if fifo's schedules had changed

    written = make_golden.record(folder, rerecord=["fifo"])

    assert written == [folder / "fifo.json"]
    assert {path.name: path.read_bytes() for path in folder.glob("*.json")} == before


def test_one_file_of_every_case_splits_into_the_algorithms_files_unchanged(tmp_path: Path):
    single = tmp_path / "golden.json"
    single.write_text(json.dumps(EXPECTED), encoding="utf-8")
    make_golden.split(single, tmp_path / "split")
    assert {p.name: p.read_bytes() for p in (tmp_path / "split").glob("*.json")} == {
        p.name: p.read_bytes() for p in GOLDEN.glob("*.json")
    }
