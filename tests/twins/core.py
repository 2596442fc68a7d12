"""Fast twins and the transcriptions they replace, in one registry (run by tests/test_fast_twins.py).

A fast twin is a path kept only for speed (a change-based ``decide``, an incremental queue, a
numpy scan, a cached plan) next to a plain transcription of the same rule (``decide_full``, the
readable path, a server-by-server scan). Each ``Twin`` names a strategy of small generated cases,
the two runs and what must be equal; the test runs every twin on its generated cases, and on its
named hand-picked cases, and reports the twin, the first difference and the (shrunk) case.

``must_see`` keeps a twin's comparison from being vacuous: the features its generated cases must
exercise at least once (jobs that queued, were suspended, moved, ...).

One module per family: lists.py (the list schedulers, tiresias, drf), antman.py, ledgers.py,
asrpt.py, zhou.py (Zhou et al.'s numpy path), dorm.py (Dorm's placement and MILP), paths.py (the
list schedulers' paths under mixed GPU types and a spread slowdown).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Deterministic: the same cases at every run (derandomize), none replayed from a local database.
TWIN_SETTINGS = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass(frozen=True)
class Twin:
    name: str
    what: str  # "<fast path> vs <transcription>"
    cases: st.SearchStrategy[Any]
    fast: Callable[[Any], Any]
    reference: Callable[[Any], Any]
    # None when the two outcomes agree, else the first difference in words
    compare: Callable[[Any, Any], str | None]
    examples: int = 20
    features: Callable[[Any], set[str]] = lambda outcome: set()  # of the fast outcome
    must_see: frozenset[str] = frozenset()
    named: Mapping[str, Any] = field(default_factory=dict)  # hand-picked cases, one test each


def first_difference(fast: Any, reference: Any, what: str = "") -> str | None:
    """Where two equal-shaped values first differ (tuples and lists element by element)."""
    if fast == reference:
        return None
    if isinstance(fast, (tuple, list)) and isinstance(reference, (tuple, list)):
        for i, (a, b) in enumerate(zip(fast, reference, strict=False)):
            if a != b:
                return first_difference(a, b, f"{what}[{i}]") or f"{what}[{i}]: fast {a!r}, reference {b!r}"
        return f"{what}: fast has {len(fast)} entries, reference {len(reference)}"
    if isinstance(fast, dict) and isinstance(reference, dict):
        for key in sorted(fast.keys() | reference.keys(), key=repr):
            if fast.get(key) != reference.get(key):
                return first_difference(fast.get(key), reference.get(key), f"{what}[{key!r}]")
    return f"{what}: fast {fast!r}, reference {reference!r}"
