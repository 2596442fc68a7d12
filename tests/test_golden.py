"""Every registered algorithm gives exactly the recorded schedule on seeded small instances.

The fingerprints in tests/fixtures/golden/golden.json were recorded before the engine's
incremental redesign (``python -m tests.golden.make_golden``); a difference means a schedule
changed. Regenerate them only after a deliberate, documented change of semantics.
"""

from __future__ import annotations

import json

import pytest

from tests.golden.make_golden import GOLDEN, cases, run_case

EXPECTED = json.loads(GOLDEN.read_text(encoding="utf-8"))
CASES = {f"{name}/{algo}": (algo, inst) for name, algo, inst in cases()}


def test_every_recorded_case_is_still_run():
    assert sorted(CASES) == sorted(EXPECTED)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_the_schedule_matches_the_golden_fingerprint(case):
    algo, inst = CASES[case]
    assert run_case(algo, inst) == EXPECTED[case]
