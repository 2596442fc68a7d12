"""Server-side reduction of per-job and per-slot series, so that a page of a 100,000-job run stays a
few hundred KB (docs/architecture.md, "Result pages"). Every point kept is exact: a CDF or a
cumulative count keeps points of the true curve (chosen evenly in rank), a box keeps the true
quartiles and fences, a step series keeps the time-weighted mean of each bin. The exports keep every
job and every segment.

Small series are returned unchanged: below ``MAX_POINTS`` nothing is reduced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

MAX_POINTS = 1000  # points per line (CDF, cumulative counts, utilisation) drawn at most
MAX_MARKERS = 1500  # markers of a per-job scatter drawn at most (a sample beyond; every job in the jobs CSV)
MAX_BOX_POINTS = 5000  # values per box sent as such; beyond, the box's statistics only


def cumulative(times: Sequence[float], max_points: int = MAX_POINTS) -> tuple[list[float], list[int]]:
    """(x, y) of the step curve "how many values are <= x": one point per distinct value, then at
    most ``max_points`` of them, evenly spaced in count, always the first and the last."""
    if not len(times):
        return [], []
    values, counts = np.unique(np.asarray(times, dtype=float), return_counts=True)
    cum = np.cumsum(counts)
    if len(values) > max_points:
        levels = np.linspace(cum[0], cum[-1], max_points)
        keep = np.unique(np.concatenate(([0, len(values) - 1], np.searchsorted(cum, levels))))
        values, cum = values[keep], cum[keep]
    return [_num(v) for v in values], [int(c) for c in cum]


def cdf(values: Sequence[float], max_points: int = MAX_POINTS) -> tuple[list[float], list[float]]:
    """(x, share of values <= x), reduced as ``cumulative``."""
    xs, counts = cumulative(values, max_points)
    n = len(values)
    return xs, [round(c / n, 6) for c in counts]


def box_stats(values: Sequence[float]) -> dict[str, float]:
    """A box's statistics as plotly computes them (linear quartiles; whiskers at the furthest values
    within 1.5 IQR of the box)."""
    a = np.sort(np.asarray(values, dtype=float))
    q1, median, q3 = (float(q) for q in np.percentile(a, [25, 50, 75]))
    iqr = q3 - q1
    lower = float(a[np.searchsorted(a, q1 - 1.5 * iqr, side="left")])
    upper = float(a[np.searchsorted(a, q3 + 1.5 * iqr, side="right") - 1])
    return {"q1": q1, "median": median, "q3": q3, "lowerfence": lower, "upperfence": upper, "mean": float(a.mean())}


def sample(n: int, k: int = MAX_MARKERS) -> list[int]:
    """Indices of ``k`` of ``n`` items, evenly spaced, first and last included (all when n <= k)."""
    if n <= k:
        return list(range(n))
    return [int(i) for i in np.unique(np.round(np.linspace(0, n - 1, k)).astype(int))]


def step_means(
    points: Sequence[tuple[float, float]], max_points: int = MAX_POINTS
) -> tuple[list[float], list[float], float]:
    """A step series (value holds from each point to the next) as (bin starts, mean value over each
    bin, bin width): the time-weighted mean, so that the area under the curve is kept. Unchanged
    (width 1) when it has at most ``max_points`` points."""
    if len(points) <= max_points:
        return [t for t, _ in points], [v for _, v in points], 1.0
    t = np.asarray([p[0] for p in points], dtype=float)
    v = np.asarray([p[1] for p in points], dtype=float)
    start, end = t[0], t[-1]
    width = float(np.ceil((end - start) / max_points)) or 1.0
    edges = np.arange(start, end + width, width)
    area = np.concatenate(([0.0], np.cumsum(v[:-1] * np.diff(t))))  # area under the curve up to each t

    def area_at(x: np.ndarray) -> np.ndarray:
        i = np.clip(np.searchsorted(t, x, side="right") - 1, 0, len(t) - 1)
        at: np.ndarray = area[i] + v[i] * (np.minimum(x, end) - t[i])
        return at

    a = area_at(edges)
    spans = np.minimum(edges[1:], end) - edges[:-1]
    means = np.where(spans > 0, np.diff(a) / np.where(spans > 0, spans, 1), v[-1])
    xs = [_num(x) for x in edges[:-1]] + [_num(end)]
    ys = [float(m) for m in means] + [float(v[-1])]
    return xs, ys, width


def _num(x: Any) -> float:
    f = float(x)
    return int(f) if f.is_integer() else f
