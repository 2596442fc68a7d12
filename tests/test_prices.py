"""PriceLog records only changed entries and the matrices it yields are the ones recorded."""

from __future__ import annotations

import numpy as np
import pytest

from scheduling.prices import SCHEMA, SCHEMAS, PriceLog, matrices, matrix_at, runs_of


def test_records_changes_and_rebuilds_every_matrix() -> None:
    rng = np.random.default_rng(3)
    log = PriceLog(["gpu", "cpu"], ["a", "b", "c"], slots=5, label="delta")
    prices = np.zeros(log.shape)
    shown = np.zeros(log.shape)  # what the log keeps: slots before a decision's as they were
    history = []
    for k in range(6):
        r, h, s = rng.integers(0, 2), rng.integers(0, 3), rng.integers(0, 5)
        prices[r, h, s:] += 0.25 * (k + 1)  # past slots (before t=k) too, sometimes
        log.record(t=k, job=f"j{k}", admitted=True, prices=prices)
        shown[:, :, k:] = prices[:, :, k:]
        history.append(shown.copy())
    assert not np.array_equal(shown, prices), "some decision changed a past slot"
    doc = log.to_dict()
    assert doc["schema"] == SCHEMA == "mlsched.prices/3"
    for k, expected in enumerate(history):
        for i, resource in enumerate(doc["resources"]):
            assert np.allclose(matrix_at(doc, k, resource), expected[i])
    assert all(c[2] >= d["t"] for d in doc["decisions"] for c in d["changes"])
    # only the entries that changed are stored
    assert sum(c[3] for d in doc["decisions"] for c in d["changes"]) == sum(
        int(np.count_nonzero(a != b)) for a, b in zip(history, [np.zeros(log.shape), *history[:-1]], strict=True)
    )


def test_a_rebase_resets_the_slots_from_the_decision_on() -> None:
    """mlsched.prices/3: past slots keep the prices they had; in /2 a rebase reset every slot."""
    log = PriceLog(["gpu"], ["w", "p"], slots=4, pools=["worker", "ps"], initial_by_pool={"worker": 1.0, "ps": 2.0})
    prices = np.array([[[1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0]]])
    prices[0, 0, :] = 5.0  # a job books the worker server over every slot
    log.record(t=0, job="x", admitted=True, prices=prices)
    # at slot 2 the bounds move: every price recomputed, the booked ones and past slots included
    prices = np.array([[[9.0, 9.0, 9.0, 9.0], [3.0, 3.0, 3.0, 3.0]]])
    log.record(t=2, job="y", admitted=False, prices=prices, rebase={"worker": 1.5, "ps": 3.0})
    doc = log.to_dict()
    assert doc["decisions"][1]["changes"] == [[0, 0, 2, 2, 9.0]]  # slots 2, 3 only; p's are the rebase value
    assert matrix_at(doc, 1, "gpu").tolist() == [[5.0, 5.0, 9.0, 9.0], [2.0, 2.0, 3.0, 3.0]]
    # the same document read as /2 (results written before /3): the rebase reset slots 0, 1 too
    older = {**doc, "schema": "mlsched.prices/2"}
    assert matrix_at(older, 1, "gpu").tolist() == [[1.5, 1.5, 9.0, 9.0], [3.0, 3.0, 3.0, 3.0]]
    assert matrix_at(older, 0, "gpu").tolist() == matrix_at(doc, 0, "gpu").tolist()
    assert [m.tolist() for m in matrices(doc, "gpu")] == [
        [[1.0] * 4, [2.0] * 4],  # before any decision
        [[5.0] * 4, [2.0] * 4],
        [[5.0, 5.0, 9.0, 9.0], [2.0, 2.0, 3.0, 3.0]],
    ]


def test_a_change_is_a_maximal_run_of_slots_with_one_new_value() -> None:
    log = PriceLog(["gpu", "cpu"], ["a", "b"], slots=6)
    prices = np.zeros(log.shape)
    prices[0, 1, 1:4] = 2.0  # one run
    prices[0, 1, 4] = 3.0  # the next slot, another value: another run
    prices[1, 0, 5] = 1.0  # the last slot of a row ...
    prices[1, 1, 0] = 1.0  # ... and the first of the next row, same value: two runs
    log.record(t=0, job="x", admitted=True, prices=prices)
    assert log.decisions[0]["changes"] == [[0, 1, 1, 3, 2.0], [0, 1, 4, 1, 3.0], [1, 0, 5, 1, 1.0], [1, 1, 0, 1, 1.0]]
    assert (
        runs_of([(0, 1, s, 2.0) for s in (1, 2, 3)] + [(0, 1, 4, 3.0), (1, 0, 5, 1.0), (1, 1, 0, 1.0)])
        == (log.decisions[0]["changes"])
    )
    prices[0, 1, 2] = 5.0  # splits the run in the next decision's changes: only slot 2 changed
    log.record(t=1, job="y", admitted=True, prices=prices)
    assert log.decisions[1]["changes"] == [[0, 1, 2, 1, 5.0]]
    assert matrix_at(log.to_dict(), 1, "gpu").tolist() == [[0.0] * 6, [0.0, 2.0, 5.0, 2.0, 3.0, 0.0]]


def test_results_written_with_single_entries_are_still_read() -> None:
    """mlsched.prices/1 (results stored before the runs): each change is [resource, server, slot, value]."""
    doc = {
        "schema": "mlsched.prices/1",
        "resources": ["gpu"],
        "servers": ["a", "b"],
        "pools": ["worker", "ps"],
        "initial_by_pool": {"worker": 1.0, "ps": 2.0},
        "slot0": 0,
        "slots": 3,
        "initial": 0.0,
        "decisions": [
            {"t": 0, "job": "x", "admitted": True, "changes": [[0, 0, 1, 4.0], [0, 1, 2, 6.0]]},
            {"t": 1, "job": "y", "admitted": True, "rebase": {"ps": 3.0}, "changes": [[0, 1, 0, 7.0]]},
        ],
    }
    assert matrix_at(doc, 0, "gpu").tolist() == [[1.0, 4.0, 1.0], [2.0, 2.0, 6.0]]
    assert matrix_at(doc, 1, "gpu").tolist() == [[1.0, 4.0, 1.0], [7.0, 3.0, 3.0]]
    assert SCHEMAS == ("mlsched.prices/1", "mlsched.prices/2", SCHEMA)


def test_summary_covers_current_and_upcoming_slots() -> None:
    log = PriceLog(["gpu"], ["a", "b"], slots=4)
    prices = np.zeros(log.shape)
    prices[0, 0, 0] = 8.0  # a past slot once the clock has moved on
    prices[0, 1, 3] = 2.0
    log.record(t=0, job="x", admitted=True, prices=prices)
    log.record(t=1, job="y", admitted=False, prices=prices)
    assert log.summary["gpu"]["max"] == [8.0, 2.0]
    assert log.summary["gpu"]["mean"] == pytest.approx([10.0 / 8, 2.0 / 6], abs=1e-6)
    assert log.decisions[1]["changes"] == []


def test_rejects_wrong_shape() -> None:
    log = PriceLog(["gpu"], ["a"], slots=3)
    with pytest.raises(ValueError, match="shape"):
        log.record(0, "j", True, np.zeros((1, 2, 3)))
