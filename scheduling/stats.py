"""Statistics over repeated runs: summaries, paired differences, win counts, JCT CDF bands.

Every interval comes from SciPy (``scipy.stats.bootstrap`` or ``scipy.stats.ecdf``); nothing here
hand-writes an interval formula. All functions are pure, take plain sequences or mappings, and are
deterministic: resampling uses ``numpy.random.default_rng(seed)`` with a fixed default seed, so the
same inputs give the same numbers.

API
---

``summarize(values, *, confidence=0.95, seed=0, n_resamples=9999, method="BCa") -> Summary``
    One metric over repetitions (seeds or trace windows). ``None`` and NaN values are excluded and
    counted in ``Summary.excluded``. Gives ``n``, ``mean``, ``median`` and a bootstrap CI of the
    **mean** (``mean_ci``) and of the **median** (``median_ci``). With ``n < 2`` there is no
    interval: both CIs are ``None`` and ``Summary.note`` says why. When all values are equal the CI
    is that value on both sides (method ``"degenerate"``: the bootstrap distribution is a point).

``paired(values, reference, *, better, tie_rel=1e-3, tie_abs=1e-9, ...) -> Paired``
    Per-seed differences ``values[i] - reference[i]`` of one algorithm against a reference
    algorithm on the same seeds. A pair is dropped (and counted in ``Paired.excluded``) when either
    side is ``None``/NaN. Gives the mean and median difference with their bootstrap CIs and
    win/tie/loss counts, and (when every reference value is > 0) the median of the per-pair ratios
    ``values[i] / reference[i]`` with its CI. ``better`` is ``"lower"`` or ``"higher"`` (see ``direction``). A pair is a
    **tie** when ``|a - b| <= tie_abs + tie_rel * |b|`` (default: within 0.1 % of the reference value),
    otherwise a **win** when ``a`` is better than ``b`` in the metric's direction, else a **loss**.
    ``Paired.verdict`` is ``"better"`` or ``"worse"`` only when the CI of the difference (of the
    statistic named by ``verdict_on``, default the median) excludes 0; otherwise
    ``"no clear difference"``, or ``"insufficient data"`` with fewer than ``min_pairs`` pairs
    (default 6, ``MIN_PAIRS``: with fewer, a bootstrap interval is about the range of the data).

``compare(table, *, reference, metric, ...) -> MetricReport``
    ``table`` maps algorithm -> {seed: value}. Summarises every algorithm, pairs every other
    algorithm with ``reference`` on the seeds both have, and picks a ``best``: the algorithm with the
    best median is called best only when its paired difference against **every** other algorithm
    has a CI excluding 0 in its favour; otherwise ``best`` is ``None`` and ``best_note`` names the
    algorithm it could not be told apart from.

    With ``completions`` (algorithm -> {key: (completed jobs, jobs)}) and a metric over completed
    jobs only (``completed_only``: ``avg_jct``, ``total_jct``, ``total_weighted_completion``, ...),
    a pair whose two runs completed different numbers of jobs is not comparable (DESIGN section 9):
    it is left out of the differences, ratios and W/T/L, counted in ``Paired.not_comparable`` and
    named in ``Paired.note`` ("3 of 10 pairs not comparable (...)"); when every pair is such a pair
    the verdict is ``"not comparable: A completed x of n, B y of n"`` (summed over the pairs, with
    "over k pairs" when there are several). The ``<metric>_censored`` variants are compared on
    every pair.

``jct_cdf(jcts_by_seed, *, band="seeds", grid_points=200, ...) -> CdfBand``
    Pooled JCT CDF of one algorithm over seeds. ``jcts_by_seed`` holds, per seed, one entry per job:
    its JCT, or ``None`` for a job that did not complete. The pooled CDF at ``x`` is the share of
    all jobs (completed or not) with JCT <= x, so it tops out at the completed share, not at 1.
    Bands:

    * ``"seeds"`` (default): pointwise percentile bootstrap over seeds (``scipy.stats.bootstrap``
      resampling whole seeds with replacement and pooling their jobs), so that jobs of one seed are
      not treated as independent. Needs at least 2 seeds.
    * ``"jobs"``: the pointwise CI of ``scipy.stats.ecdf`` on the pooled jobs (jobs that did not
      complete enter as right-censored beyond every JCT). Treats every job as independent, so it is
      narrower than the seed band and ignores seed-to-seed variation.

    With fewer than 2 seeds (``"seeds"``) or 2 jobs (``"jobs"``) there is no band (``low``/``high``
    are ``None``) and ``CdfBand.note`` says so.

``direction(metric) -> "lower" | "higher"``
    Whether lower or higher values of a result metric are better (``avg_jct`` lower,
    ``total_utility`` higher, ...). Unknown metrics raise ``ValueError``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np

from scheduling.lazy import LazyModule

if TYPE_CHECKING:
    from scipy import stats as sps
else:
    sps = LazyModule("scipy.stats")  # imported at the first statistic: `python -m scheduling --help` needs none

K = TypeVar("K", bound=Hashable)  # a repetition key: a seed, a window, ...
Completion = tuple[int, int]  # one run's (completed jobs, jobs)
Better = Literal["lower", "higher"]
Statistic = Literal["mean", "median"]

CONFIDENCE = 0.95
N_RESAMPLES = 9999
SEED = 0
TIE_REL = 1e-3
TIE_ABS = 1e-9
MIN_PAIRS = 6
"""Fewest pairs for a verdict. Below it a bootstrap interval is little more than the range of the
differences: with 5 pairs of one sign it excludes 0, while a sign test of 5 out of 5 has p = 0.06."""

COMPLETED_ONLY = frozenset(
    {"avg_jct", "total_jct", "total_weighted_completion", "total_weighted_jct", "makespan", "avg_wait"}
)
"""Lower-is-better metrics over completed jobs only: a run that leaves a job unfinished drops the
job's term and looks better. Two runs are compared on them only when they completed as many jobs
(DESIGN section 9); each has a ``<name>_censored`` variant over every job (scheduling.metrics) that
is compared whatever the counts."""

LOWER_IS_BETTER = COMPLETED_ONLY | {f"{name}_censored" for name in COMPLETED_ONLY} | {"preemptions", "restarts"}
HIGHER_IS_BETTER = frozenset(
    {"total_utility", "admitted", "completed", "completed_weight", "admission_rate", "utilization"}
)


def completed_only(metric: str) -> bool:
    """Whether ``metric`` sums or averages over completed jobs only (``COMPLETED_ONLY``)."""
    return metric.split(".", 1)[0] in COMPLETED_ONLY


def direction(metric: str) -> Better:
    """Whether lower or higher values of ``metric`` are better. ``utilization.gpu`` counts as utilization."""
    base = metric.split(".", 1)[0]
    if base in LOWER_IS_BETTER:
        return "lower"
    if base in HIGHER_IS_BETTER:
        return "higher"
    known = ", ".join(sorted(LOWER_IS_BETTER | HIGHER_IS_BETTER))
    raise ValueError(f"metric {metric!r}: unknown direction (known: {known})")


@dataclass(frozen=True)
class Interval:
    """A confidence interval."""

    low: float
    high: float
    level: float  # confidence level, e.g. 0.95
    method: str  # "BCa", "percentile", "basic" (scipy.stats.bootstrap) or "degenerate" (all values equal)

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class Summary:
    """One metric over repetitions."""

    n: int  # finite values used
    excluded: int  # None/NaN values left out
    mean: float | None  # None when n == 0
    median: float | None
    mean_ci: Interval | None  # None when n < 2
    median_ci: Interval | None
    note: str  # why an interval is missing, or ""


@dataclass(frozen=True)
class Paired:
    """Paired per-seed differences (algorithm - reference) of one metric."""

    better: Better
    n: int  # pairs used
    excluded: int  # pairs with a None/NaN on either side
    mean_diff: float | None
    median_diff: float | None
    mean_ci: Interval | None  # CI of the mean difference; None when n < 2
    median_ci: Interval | None  # CI of the median difference
    wins: int  # pairs where the algorithm is better than the reference beyond the tie tolerance
    ties: int
    losses: int
    verdict: str  # "better", "worse", "no clear difference", "insufficient data"
    verdict_on: Statistic  # whose CI decides the verdict
    note: str
    median_ratio: float | None = None  # median of per-pair algorithm / reference; None unless all b > 0
    median_ratio_ci: Interval | None = None  # its bootstrap CI (papers state gains as "x% lower")
    not_comparable: int = 0  # pairs left out: unequal completed counts on a COMPLETED_ONLY metric


@dataclass(frozen=True)
class MetricReport:
    """Summary, paired differences against a reference and a best verdict for one metric."""

    metric: str
    better: Better
    reference: str
    summaries: dict[str, Summary]  # per algorithm
    paired: dict[str, Paired]  # per algorithm other than the reference
    best: str | None  # the algorithm separated from every other one, or None
    best_note: str


@dataclass(frozen=True)
class CdfBand:
    """A pooled JCT CDF with a pointwise band."""

    x: list[float]  # JCT values (slots) where the CDF is evaluated, ascending
    cdf: list[float]  # pooled share of jobs with JCT <= x
    low: list[float] | None  # pointwise lower band, None when there is no band
    high: list[float] | None
    band: str  # "seeds", "jobs" or "none"
    level: float
    seeds: int  # seeds pooled
    jobs: int  # jobs pooled (completed or not)
    completed: int
    note: str


def _clean(values: Sequence[float | None]) -> tuple[np.ndarray[Any, np.dtype[np.float64]], int]:
    """Finite values as a float array, and how many None/NaN/inf were left out."""
    kept = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return np.asarray(kept, dtype=float), len(values) - len(kept)


def _finite(v: float | None) -> bool:
    return v is not None and math.isfinite(float(v))


def interval(
    data: Sequence[float],
    statistic: Statistic,
    *,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    n_resamples: int = N_RESAMPLES,
    method: str = "BCa",
) -> Interval | None:
    """Bootstrap CI of the mean or median of ``data`` (scipy.stats.bootstrap); None when len < 2.

    All-equal data give the degenerate interval [v, v]. If BCa cannot be computed (scipy returns NaN,
    e.g. for a heavily tied median), the percentile interval is used and named in ``method``.
    """
    arr = np.asarray(data, dtype=float)
    if arr.size < 2:
        return None
    if np.all(arr == arr[0]):
        return Interval(float(arr[0]), float(arr[0]), confidence, "degenerate")
    func = np.mean if statistic == "mean" else np.median
    for m in (method, "percentile"):
        with warnings.catch_warnings():
            # BCa's acceleration is 0/0 for heavily tied data: scipy warns and returns NaN, handled below.
            warnings.simplefilter("ignore", sps.DegenerateDataWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            res = sps.bootstrap(
                (arr,),
                func,
                confidence_level=confidence,
                n_resamples=n_resamples,
                method=m,
                vectorized=True,
                rng=np.random.default_rng(seed),
            )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return Interval(low, high, confidence, m)
    return None  # pragma: no cover - the percentile interval of finite data is finite


def summarize(
    values: Sequence[float | None],
    *,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    n_resamples: int = N_RESAMPLES,
    method: str = "BCa",
) -> Summary:
    """n, mean, median and bootstrap CIs of the mean and the median (see the module docstring)."""
    arr, excluded = _clean(values)
    n = int(arr.size)
    if n == 0:
        return Summary(0, excluded, None, None, None, None, "no values: no estimate, no interval")
    kw: dict[str, Any] = {"confidence": confidence, "seed": seed, "n_resamples": n_resamples, "method": method}
    note = "n < 2: no interval" if n < 2 else ""
    return Summary(
        n=n,
        excluded=excluded,
        mean=float(np.mean(arr)),
        median=float(np.median(arr)),
        mean_ci=interval(arr.tolist(), "mean", **kw),
        median_ci=interval(arr.tolist(), "median", **kw),
        note=note,
    )


def outcome(a: float, b: float, better: Better, *, tie_rel: float = TIE_REL, tie_abs: float = TIE_ABS) -> int:
    """+1 if ``a`` beats ``b`` beyond the tie tolerance, -1 if it loses, 0 for a tie."""
    if abs(a - b) <= tie_abs + tie_rel * abs(b):
        return 0
    a_better = a < b if better == "lower" else a > b
    return 1 if a_better else -1


def paired(
    values: Sequence[float | None],
    reference: Sequence[float | None],
    *,
    better: Better,
    tie_rel: float = TIE_REL,
    tie_abs: float = TIE_ABS,
    verdict_on: Statistic = "median",
    min_pairs: int = MIN_PAIRS,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    n_resamples: int = N_RESAMPLES,
    method: str = "BCa",
) -> Paired:
    """Paired differences ``values[i] - reference[i]`` (see the module docstring)."""
    if len(values) != len(reference):
        raise ValueError(f"paired: {len(values)} values but {len(reference)} reference values")
    if better not in ("lower", "higher"):
        raise ValueError(f"paired: better must be 'lower' or 'higher', not {better!r}")
    pairs = [(float(a), float(b)) for a, b in zip(values, reference, strict=True) if _finite(a) and _finite(b)]  # type: ignore[arg-type]
    excluded = len(values) - len(pairs)
    outcomes = [outcome(a, b, better, tie_rel=tie_rel, tie_abs=tie_abs) for a, b in pairs]
    wins, ties, losses = outcomes.count(1), outcomes.count(0), outcomes.count(-1)
    diffs = [a - b for a, b in pairs]
    n = len(diffs)
    if n == 0:
        return Paired(better, 0, excluded, None, None, None, None, 0, 0, 0, "insufficient data", verdict_on, "no pairs")
    kw: dict[str, Any] = {"confidence": confidence, "seed": seed, "n_resamples": n_resamples, "method": method}
    mean_ci = interval(diffs, "mean", **kw)
    median_ci = interval(diffs, "median", **kw)
    deciding = mean_ci if verdict_on == "mean" else median_ci
    note = ""
    if deciding is None:
        verdict, note = "insufficient data", "n < 2: no interval"
    elif n < min_pairs:
        verdict, note = "insufficient data", f"{n} pairs: a verdict needs at least {min_pairs}"
    elif not deciding.excludes_zero():
        verdict = "no clear difference"
    else:
        lower = deciding.high < 0
        verdict = "better" if lower == (better == "lower") else "worse"
    ratios = [a / b for a, b in pairs] if all(b > 0 for _, b in pairs) else []
    return Paired(
        median_ratio=float(np.median(ratios)) if ratios else None,
        median_ratio_ci=interval(ratios, "median", **kw) if ratios else None,
        better=better,
        n=n,
        excluded=excluded,
        mean_diff=float(np.mean(diffs)),
        median_diff=float(np.median(diffs)),
        mean_ci=mean_ci,
        median_ci=median_ci,
        wins=wins,
        ties=ties,
        losses=losses,
        verdict=verdict,
        verdict_on=verdict_on,
        note=note,
    )


def compare(
    table: Mapping[str, Mapping[K, float | None]],
    *,
    reference: str,
    metric: str,
    better: Better | None = None,
    tie_rel: float = TIE_REL,
    tie_abs: float = TIE_ABS,
    verdict_on: Statistic = "median",
    min_pairs: int = MIN_PAIRS,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    n_resamples: int = N_RESAMPLES,
    completions: Mapping[str, Mapping[K, Completion]] | None = None,
) -> MetricReport:
    """Summaries, paired differences against ``reference`` and a best verdict (module docstring)."""
    if reference not in table:
        raise ValueError(f"reference algorithm {reference!r} is not among {', '.join(table)}")
    side = better or direction(metric)
    kw: dict[str, Any] = {"confidence": confidence, "seed": seed, "n_resamples": n_resamples}
    pkw: dict[str, Any] = {
        **kw,
        "better": side,
        "tie_rel": tie_rel,
        "tie_abs": tie_abs,
        "verdict_on": verdict_on,
        "min_pairs": min_pairs,
    }
    summaries = {alg: summarize(list(vals.values()), **kw) for alg, vals in table.items()}
    counts = completions if completions is not None and completed_only(metric) else None

    def pair(alg: str, other: str) -> Paired:
        return _counted_pair(table, alg, other, pkw, counts)

    pairs = {alg: pair(alg, reference) for alg in table if alg != reference}
    best, best_note = _best(table, summaries, side, pkw, pairs, reference, pair)
    return MetricReport(metric, side, reference, summaries, pairs, best, best_note)


def _counted_pair(
    table: Mapping[str, Mapping[K, float | None]],
    alg: str,
    other: str,
    pkw: Mapping[str, Any],
    counts: Mapping[str, Mapping[K, Completion]] | None,
) -> Paired:
    """``alg`` paired with ``other`` on the keys both have; with ``counts``, the pairs whose
    completed counts differ are left out, counted in ``not_comparable`` and named in the note, and
    when every pair is such a pair the verdict is "not comparable: A completed x of n, B y of n"
    (summed over those pairs)."""
    a, b = table[alg], table[other]
    keys = [k for k in a if k in b]
    ca = counts.get(alg, {}) if counts is not None else {}
    cb = counts.get(other, {}) if counts is not None else {}
    apart = [k for k in keys if k in ca and k in cb and ca[k][0] != cb[k][0]]
    left_out = set(apart)
    kept = [k for k in keys if k not in left_out]
    p = paired([a[k] for k in kept], [b[k] for k in kept], **pkw)
    if not apart:
        return p
    done_a, jobs_a = (sum(ca[k][i] for k in apart) for i in (0, 1))
    done_b, jobs_b = (sum(cb[k][i] for k in apart) for i in (0, 1))
    text = f"{alg} completed {done_a} of {jobs_a}, {other} {done_b} of {jobs_b}"
    if len(apart) > 1:
        text += f" over {len(apart)} pairs"
    if not kept:
        return replace(p, verdict=f"not comparable: {text}", note="completed counts differ", not_comparable=len(apart))
    named = ", ".join(map(str, apart[:5])) + (", ..." if len(apart) > 5 else "")
    note = (
        f"{len(apart)} of {len(keys)} pairs not comparable ({named}: {text}): "
        "left out of the differences, ratios and W/T/L"
    )
    return replace(p, note="; ".join(x for x in (note, p.note) if x), not_comparable=len(apart))


def _best(
    table: Mapping[str, Mapping[K, float | None]],
    summaries: Mapping[str, Summary],
    side: Better,
    pkw: Mapping[str, Any],
    pairs: Mapping[str, Paired],
    reference: str,
    pair: Callable[[str, str], Paired],
) -> tuple[str | None, str]:
    """The algorithm with the best median, if its paired CI against every other one excludes 0
    (``pairs``: each algorithm against ``reference``, already computed, reused for the top one;
    ``pair``: any other pair, as ``compare`` pairs them)."""
    ranked = [alg for alg, s in summaries.items() if s.median is not None]
    if len(ranked) < 2:
        return None, "fewer than 2 algorithms with values"
    sign = 1.0 if side == "lower" else -1.0
    top = min(ranked, key=lambda alg: sign * (summaries[alg].median or 0.0))
    for other in table:
        if other == top:
            continue
        p = pairs[top] if other == reference else pair(top, other)
        if p.verdict != "better":
            return None, f"{top} has the best median but is not separated from {other} ({p.verdict})"
    return top, f"{top}: the {pkw['verdict_on']} paired difference against every other algorithm has a CI excluding 0"


def jct_cdf(
    jcts_by_seed: Sequence[Sequence[float | None]],
    *,
    band: Literal["seeds", "jobs"] = "seeds",
    grid_points: int = 200,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    n_resamples: int = 999,
) -> CdfBand:
    """Pooled JCT CDF over seeds with a pointwise band (module docstring)."""
    per_seed = [_clean(list(s))[0] for s in jcts_by_seed]
    totals = np.asarray([len(s) for s in jcts_by_seed], dtype=float)
    pooled = np.sort(np.concatenate(per_seed)) if per_seed else np.zeros(0)
    jobs, completed = int(totals.sum()), int(pooled.size)
    if completed == 0:
        return CdfBand([], [], None, None, "none", confidence, len(per_seed), jobs, 0, "no completed job")
    grid = np.unique(pooled)
    if grid.size > grid_points:  # evaluate at evenly spaced quantiles of the pooled JCTs
        grid = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, grid_points), method="inverted_cdf"))
    counts = np.stack([np.searchsorted(np.sort(s), grid, side="right") for s in per_seed]).astype(float)
    cdf = counts.sum(axis=0) / totals.sum()
    low: list[float] | None = None
    high: list[float] | None = None
    note = ""
    if band == "seeds":
        if len(per_seed) < 2:
            note = "fewer than 2 seeds: no band"
        else:

            def pooled_cdf(idx: np.ndarray[Any, Any], axis: int = -1) -> np.ndarray[Any, Any]:
                idx = np.moveaxis(idx, axis, -1).astype(int)  # (..., seeds)
                return np.asarray(counts[idx].sum(axis=-2) / totals[idx].sum(axis=-1)[..., None]).T

            res = sps.bootstrap(
                (np.arange(len(per_seed)),),
                pooled_cdf,
                confidence_level=confidence,
                n_resamples=n_resamples,
                method="percentile",
                vectorized=True,
                rng=np.random.default_rng(seed),
            )
            low = np.asarray(res.confidence_interval.low, dtype=float).tolist()
            high = np.asarray(res.confidence_interval.high, dtype=float).tolist()
    elif band == "jobs":
        if completed < 2:
            note = "fewer than 2 completed jobs: no band"
        else:
            # Jobs that did not complete are right-censored beyond every observed JCT, so the
            # Kaplan-Meier estimate equals the pooled share of all jobs and Greenwood's interval applies.
            beyond = np.full(jobs - completed, float(pooled[-1]) + 1.0)
            sample = sps.CensoredData(uncensored=pooled, right=beyond)
            with warnings.catch_warnings():  # undefined where the CDF is 0 or 1: filled with 0 and 1 below
                warnings.simplefilter("ignore", RuntimeWarning)
                ci = sps.ecdf(sample).cdf.confidence_interval(confidence_level=confidence)
            low = np.nan_to_num(ci.low.evaluate(grid), nan=0.0).tolist()
            high = np.nan_to_num(ci.high.evaluate(grid), nan=1.0).tolist()
            note = "pointwise Greenwood interval (scipy.stats.ecdf), jobs treated as independent"
    else:
        raise ValueError(f"jct_cdf: band must be 'seeds' or 'jobs', not {band!r}")
    return CdfBand(
        x=grid.tolist(),
        cdf=cdf.tolist(),
        low=low,
        high=high,
        band=band if low is not None else "none",
        level=confidence,
        seeds=len(per_seed),
        jobs=jobs,
        completed=completed,
        note=note,
    )
