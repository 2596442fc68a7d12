"""OASiS (seeds/001): U and L of (23)-(26) estimated from history (``bounds=history``).

The paper (Sec. IV-B, before Theorem 4): U_1^r/L_1 and U_2^r/L_2 need all jobs in advance, so "we
adopt their estimated values (based on past experience) in our online algorithm"; Fig. 6 shows that
an underestimated U/L gives more utility when resources are scarce. Here "past experience" is a
separate history trace the user supplies (``Instance.history``: ``--history FILE``, the API's
history, or a preset's own history drawn from another seed), never the evaluated trace (no
look-ahead, DESIGN section 9): its arrivals in slots [0, W) (W = ``history_share`` x T):

1. A *history replay* (a synthetic past period of the same length and load): as many jobs as the
   window's arrival rate gives over T slots, drawn with replacement from the window's jobs, their
   arrivals redrawn uniformly over [0, T). Seeded from a hash of the window's jobs (or
   ``history_seed``), so the same window gives the same estimate.
2. U, L of (23)-(26) computed on the replay (``oasis.estimate_bounds``).
3. OASiS itself (Alg. 1 with the fast Alg. 2) run on the replay for each scale s of a grid on U/L
   (L divided by s, or U multiplied, as ``scale_moves``): 1, 1e-2, ..., 1e-12, then 10x and
   10^0.5 x either side of the best. The replay's utility is the sum of f_i(planned JCT) of its
   admitted jobs (an admitted job completes by its planned slot and is never preempted).
4. The real run uses the replay's bounds at the best scale, from slot 0.

Only the history window's jobs, the cluster and the horizon are read. With fewer than
``history_min_jobs`` jobs in the window there is no history to speak of, and the bounds fall back
to ``bounds=arrived`` (stated in the result's ``oasis.calibration``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduling.algorithms.oasis.dp import Book, JobShape, best_schedule_fast

COARSE_GRID = tuple(10.0**-k for k in range(0, 13, 2))  # 1, 1e-2, ..., 1e-12
REFINE_STEPS = (10.0, 10.0**0.5)  # then the best x/÷ 10, then x/÷ 10^0.5

# (shapes, scale) -> bounds; oasis.py passes estimate_bounds with its floor/moves/eta bound in.
BoundsFn = Callable[[Sequence[JobShape], float], Any]
# (book, bounds, shape, plan) -> None: Alg. 1 lines 7-10 (booking and the price update (22)).
BookFn = Callable[[Book, Any, JobShape, Any], None]


@dataclass
class Calibration:
    """What the history estimate did: shown in the result as ``oasis.calibration``."""

    used: str  # "history", or "arrived" after a fallback
    window: int  # W: history = jobs arriving in slots [0, W)
    window_jobs: int
    reason: str = ""
    replay_jobs: int = 0
    seed: int = 0
    scale: float = 1.0  # the chosen scale on the replay's U/L
    grid: list[tuple[float, float, int]] = dataclasses.field(default_factory=list)  # (scale, utility, admitted)
    seconds: float = 0.0
    replay_shapes: list[JobShape] = dataclasses.field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"used": self.used, "window": self.window, "window_jobs": self.window_jobs}
        if self.reason:
            out["reason"] = self.reason
        if self.used == "history":
            out.update(
                replay_jobs=self.replay_jobs,
                seed=self.seed,
                scale=self.scale,
                grid=[{"scale": s, "utility": round(u, 6), "admitted": a} for s, u, a in self.grid],
                seconds=round(self.seconds, 3),
            )
        return out


def window_of(horizon: int, share: float) -> int:
    return max(1, min(horizon, math.ceil(share * horizon - 1e-9)))


def history_seed(window_jobs: Sequence[JobShape]) -> int:
    """A seed from the window's jobs (ids and arrivals, in order): same window, same replay."""
    text = "\n".join(f"{sh.job_id}\t{sh.arrival}" for sh in window_jobs)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def replay(window_jobs: Sequence[JobShape], window: int, horizon: int, seed: int) -> list[JobShape]:
    """The synthetic past period: round(len(window_jobs) x T / W) jobs resampled with replacement
    from the window, arrivals uniform over [0, T), in (arrival, id) order."""
    rng = np.random.default_rng(seed)
    n = max(1, round(len(window_jobs) * horizon / window))
    picks = rng.integers(0, len(window_jobs), size=n)
    arrivals = rng.integers(0, horizon, size=n)
    out = [
        dataclasses.replace(window_jobs[int(k)], job_id=f"h{i:05d}", arrival=int(a))
        for i, (k, a) in enumerate(zip(picks, arrivals, strict=True))
    ]
    return sorted(out, key=lambda sh: (sh.arrival, sh.job_id))


def replay_utility(
    shapes: Sequence[JobShape], cap_w: np.ndarray, cap_p: np.ndarray, horizon: int, bounds: Any, book_fn: BookFn
) -> tuple[float, int]:
    """Alg. 1 on ``shapes`` (in order) with ``bounds``: (sum of f_i(planned JCT) of admitted jobs, admitted)."""
    book = Book(cap_w, cap_p, horizon)
    book.p[:] = bounds.l1  # Alg. 1 line 1
    book.q[:] = bounds.l2
    total, admitted = 0.0, 0
    for sh in shapes:
        plan = best_schedule_fast(book, sh)  # line 3 (Alg. 2)
        if plan is None or plan.payoff <= 0:  # line 4
            continue
        book_fn(book, bounds, sh, plan)  # lines 7-10
        total += sh.f(plan.completion + 1 - sh.arrival)
        admitted += 1
    return total, admitted


def calibrate(
    shapes: Sequence[JobShape],
    cap_w: np.ndarray,
    cap_p: np.ndarray,
    horizon: int,
    bounds_fn: BoundsFn,
    book_fn: BookFn,
    share: float,
    min_jobs: int,
    seed: int = 0,
) -> Calibration:
    """The scale chosen on the history replay (``used`` = "history"; the real run takes
    ``bounds_fn(replay_shapes, scale)``), or a fallback (``used`` = "arrived") and why.

    ``shapes`` are the jobs of the history trace; only those arriving before W are read."""
    t0 = time.perf_counter()
    window = window_of(horizon, share)
    past = sorted((sh for sh in shapes if sh.arrival < window), key=lambda sh: (sh.arrival, sh.job_id))
    if len(past) < min_jobs:
        reason = (
            f"the history window [0, {window}) holds {len(past)} jobs, fewer than history_min_jobs = {min_jobs}: "
            "U and L of (23)-(26) from the jobs arrived so far (bounds=arrived)"
        )
        return Calibration("arrived", window, len(past), reason=reason)
    seed = seed or history_seed(past)
    jobs = replay(past, window, horizon, seed)
    cal = Calibration("history", window, len(past), replay_jobs=len(jobs), seed=seed, replay_shapes=jobs)
    results: dict[float, tuple[float, int]] = {}

    def score(s: float) -> float:
        key = float(f"{s:.6g}")
        if key not in results:
            results[key] = replay_utility(jobs, cap_w, cap_p, horizon, bounds_fn(jobs, key), book_fn)
        return results[key][0]

    best = max(COARSE_GRID, key=lambda s: (score(s), s))  # ties: the larger scale (closer to the estimate)
    for step in REFINE_STEPS:
        centre = best
        best = max((centre * step, centre, centre / step), key=lambda s: (score(s) if s <= 1.0 else -1.0, s))
    cal.scale = float(f"{best:.6g}")
    cal.grid = sorted(((s, u, a) for s, (u, a) in results.items()), reverse=True)
    cal.seconds = time.perf_counter() - t0
    return cal
