"""A-SRPT's incremental path returns change-based decisions that name only the jobs they start.
Its schedules equal the plain transcription's (``readable``) in tests/test_fast_twins.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scheduling import registry
from scheduling.engine import Decision, View, simulate
from tests.twins.asrpt import Loaded


class Recorder:
    """Keeps every decision of the wrapped scheduler."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.decisions: list[tuple[int, Decision]] = []

    def decide(self, view: View) -> Decision:
        d = self.inner.decide(view)
        self.decisions.append((view.t, d))
        return d

    def report(self) -> Any:
        return self.inner.report()


@pytest.mark.parametrize("algorithm", ["asrpt", "wcs-duration"])
def test_decisions_name_only_the_jobs_they_start(algorithm: str) -> None:
    inst = Loaded(seed=2, jobs=90, mixed=False, rigid=False).build()
    spec = registry.get(algorithm)
    rec = Recorder(spec.make(inst, spec.parse_params({}), np.random.default_rng(3)))
    result = simulate(inst, rec)
    start = {j.job_id: j.start for j in result.jobs}
    named = 0
    for t, d in rec.decisions:
        assert d.changes is not None and d.allocations == ()
        for job_id, allocs in d.changes.items():
            assert start[job_id] == t and allocs
            named += 1
    assert named == len(inst.jobs)
