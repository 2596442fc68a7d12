"""scheduling.collector: rarer garbage collections during a run, the process's own afterwards."""

from __future__ import annotations

import gc
import weakref

import pytest

from scheduling import collector


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_a_run_has_the_rarer_thresholds_and_its_cycles_are_freed_after_it():
    before = gc.get_threshold()
    with collector.fewer_collections():
        assert gc.get_threshold() == collector.THRESHOLDS
        left = weakref.ref(_Node())
        assert left() is not None  # no collection yet: the cycle is still there
    assert gc.get_threshold() == before
    assert left() is None  # freed by the full collection at the end of the run


def test_a_failed_run_restores_the_thresholds_too():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collector.fewer_collections():
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == before
