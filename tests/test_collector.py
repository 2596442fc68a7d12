"""scheduling.collector: rarer garbage collections during a run, the process's own afterwards."""

from __future__ import annotations

import gc
import weakref

import pytest

from scheduling import collector


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_a_run_has_the_rarer_thresholds_then_the_process_its_own():
    original = gc.get_threshold()
    gc.set_threshold(500, 5, 5)  # a process's own thresholds, not the defaults
    try:
        with collector.fewer_collections():
            assert gc.get_threshold() == collector.THRESHOLDS
        assert gc.get_threshold() == (500, 5, 5)
    finally:
        gc.set_threshold(*original)


def test_cycles_left_by_a_run_are_still_collected():
    gc.collect()  # counts at zero: no young collection during the few allocations below
    with collector.fewer_collections():
        left = weakref.ref(_Node())
    assert left() is not None  # no collection forced at the end of a run
    gc.collect()
    assert left() is None


def test_a_failed_run_restores_the_thresholds_too():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collector.fewer_collections():
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == before
