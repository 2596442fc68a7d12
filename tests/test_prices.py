"""PriceLog records only changed entries and the matrices it yields are the ones recorded."""

from __future__ import annotations

import numpy as np
import pytest

from scheduling.prices import PriceLog, matrix_at


def test_records_changes_and_rebuilds_every_matrix() -> None:
    rng = np.random.default_rng(3)
    log = PriceLog(["gpu", "cpu"], ["a", "b", "c"], slots=5, label="delta")
    prices = np.zeros(log.shape)
    history = []
    for k in range(6):
        r, h, s = rng.integers(0, 2), rng.integers(0, 3), rng.integers(0, 5)
        prices[r, h, s:] += 0.25 * (k + 1)
        log.record(t=k, job=f"j{k}", admitted=True, prices=prices)
        history.append(prices.copy())
    doc = log.to_dict()
    assert doc["schema"] == "mlsched.prices/1"
    for k, expected in enumerate(history):
        for i, resource in enumerate(doc["resources"]):
            assert np.allclose(matrix_at(doc, k, resource), expected[i])
    # only the entries that changed are stored
    assert sum(len(d["changes"]) for d in doc["decisions"]) == sum(
        int(np.count_nonzero(a != b)) for a, b in zip(history, [np.zeros(log.shape), *history[:-1]], strict=True)
    )


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
