"""scheduling/batch_draws.py gives numpy's own ``default_rng([seed, key]).integers(n)`` values."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scheduling import batch_draws
from scheduling.import_gpu import PROFILES, profile_of, profiles_of


def numpy_draw(seed: int, key: int, n: int) -> int:
    return int(np.random.default_rng([seed, key]).integers(n))


@pytest.mark.parametrize("seed", [0, 1, 3, 2**32 - 1, 2**32, 2**40 + 7])
@pytest.mark.parametrize("n", [8, 5, 3, 1])
def test_same_values_as_numpy_without_its_check(monkeypatch: pytest.MonkeyPatch, seed: int, n: int) -> None:
    """The batch computation itself (numpy neither checks it nor fills in) equals numpy's draws,
    for keys of one and of two 32-bit words."""
    rnd = random.Random(seed)
    keys = [rnd.getrandbits(64) for _ in range(300)] + [0, 1, 2**32 - 1, 2**32, 2**64 - 1]
    keys += [rnd.getrandbits(20) for _ in range(50)]
    monkeypatch.setattr(batch_draws, "CHECKED", 0)
    calls: list[int] = []
    monkeypatch.setattr(batch_draws, "_numpy_draw", lambda *a: calls.append(1) or numpy_draw(*a))
    assert batch_draws.draws(seed, keys, n) == [numpy_draw(seed, k, n) for k in keys]
    assert not calls  # never a rejection for these n and keys, so no key was left to numpy


def test_falls_back_to_numpy_when_the_check_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_draws, "_first_u32", lambda state: 0)  # a wrong generator
    keys = list(range(100, 140))
    assert batch_draws.draws(3, keys, 8) == [numpy_draw(3, k, 8) for k in keys]


def test_batches_and_edge_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_draws, "BATCH", 16)
    keys = [random.Random(1).getrandbits(64) for _ in range(50)]
    assert batch_draws.draws(0, keys, 8) == [numpy_draw(0, k, 8) for k in keys]
    assert batch_draws.draws(0, [], 8) == []
    assert batch_draws.draws(0, [2**70], 8) == [numpy_draw(0, 2**70, 8)]  # beyond 64 bits: numpy's


def test_profiles_of_equals_profile_of_per_row() -> None:
    ids = [f"job-{k}" for k in range(60)]
    groups = ["", "vision", "", "speech"] * 15
    users = ["", "", "alice", ""] * 15
    models = ["", "", "", "GNMT", "resnet-50", "unknown-net"] * 10
    texts = {"group": groups, "user": users, "model": models}
    for seed in (0, 7):
        got = profiles_of(seed, ids, texts)
        want = [profile_of(seed, g or u or i, m) for g, u, i, m in zip(groups, users, ids, models, strict=True)]
        assert got == want
        assert len(set(got)) > 1 and set(got) <= set(PROFILES)
