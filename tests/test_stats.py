"""scheduling.stats against SciPy on fixed data, and its explicit edge cases."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from scheduling import stats

DATA = [12.0, 15.5, 11.2, 19.8, 14.1, 13.3, 17.9, 12.7, 16.4, 15.0]


def scipy_ci(data, func, method="BCa"):
    res = sps.bootstrap(
        (np.asarray(data),),
        func,
        confidence_level=0.95,
        n_resamples=9999,
        method=method,
        vectorized=True,
        rng=np.random.default_rng(0),
    )
    return res.confidence_interval.low, res.confidence_interval.high


def test_summary_matches_numpy_and_scipy_bootstrap_on_fixed_data():
    s = stats.summarize(DATA)
    assert s.n == 10 and s.excluded == 0
    assert s.mean == pytest.approx(np.mean(DATA))
    assert s.median == pytest.approx(np.median(DATA))
    assert (s.mean_ci.low, s.mean_ci.high) == pytest.approx(scipy_ci(DATA, np.mean))
    assert (s.median_ci.low, s.median_ci.high) == pytest.approx(scipy_ci(DATA, np.median))
    assert s.mean_ci.method == "BCa" and s.mean_ci.level == 0.95
    assert s.mean_ci.low < s.mean < s.mean_ci.high


def test_mean_interval_is_close_to_the_t_interval_on_fixed_data():
    low, high = sps.t.interval(0.95, len(DATA) - 1, loc=np.mean(DATA), scale=sps.sem(DATA))
    s = stats.summarize(DATA)
    assert s.mean_ci.low == pytest.approx(low, rel=0.05)
    assert s.mean_ci.high == pytest.approx(high, rel=0.05)


def test_summary_is_deterministic_and_the_seed_matters():
    assert stats.summarize(DATA) == stats.summarize(DATA)
    assert stats.summarize(DATA, seed=1).mean_ci != stats.summarize(DATA).mean_ci


def test_none_and_nan_values_are_excluded_and_counted():
    s = stats.summarize([*DATA, None, math.nan])
    assert s.n == 10 and s.excluded == 2
    assert s.mean_ci == stats.summarize(DATA).mean_ci


def test_a_single_value_has_an_estimate_but_no_interval():
    s = stats.summarize([4.0, None])
    assert (s.n, s.excluded, s.mean, s.median) == (1, 1, 4.0, 4.0)
    assert s.mean_ci is None and s.median_ci is None
    assert "n < 2" in s.note


def test_no_values_give_no_estimate():
    s = stats.summarize([None])
    assert s.n == 0 and s.mean is None and s.mean_ci is None and s.note


def test_equal_values_give_a_degenerate_interval():
    s = stats.summarize([3.0, 3.0, 3.0])
    assert s.mean_ci == stats.Interval(3.0, 3.0, 0.95, "degenerate")


def test_heavily_tied_median_falls_back_to_the_percentile_interval():
    data = [1.0] * 9 + [2.0]
    ci = stats.interval(data, "median")
    assert ci is not None and ci.method == "percentile"
    assert math.isfinite(ci.low) and math.isfinite(ci.high)


def test_directions_of_result_metrics():
    assert stats.direction("avg_jct") == "lower"
    assert stats.direction("total_utility") == "higher"
    assert stats.direction("utilization.gpu") == "higher"
    with pytest.raises(ValueError, match="unknown direction"):
        stats.direction("colour")


def test_paired_differences_match_scipy_and_count_wins_ties_losses():
    ref = DATA
    alg = [v - 2.0 + 0.3 * (i % 3) for i, v in enumerate(DATA)]
    alg[4] = ref[4]  # a tie
    alg[7] = ref[7] + 1.0  # a loss for a lower-is-better metric
    p = stats.paired(alg, ref, better="lower")
    diffs = np.asarray(alg) - np.asarray(ref)
    assert p.n == 10 and p.excluded == 0
    assert p.mean_diff == pytest.approx(diffs.mean())
    assert p.median_diff == pytest.approx(np.median(diffs))
    assert (p.mean_ci.low, p.mean_ci.high) == pytest.approx(scipy_ci(diffs, np.mean))
    assert (p.wins, p.ties, p.losses) == (8, 1, 1)
    assert p.verdict == "better"


def test_the_same_differences_are_worse_when_higher_is_better():
    alg = [v - 2.0 for v in DATA]
    p = stats.paired(alg, DATA, better="higher")
    assert (p.wins, p.ties, p.losses) == (0, 0, 10)
    assert p.verdict == "worse"


def test_a_difference_within_the_tie_tolerance_is_a_tie():
    assert stats.outcome(100.05, 100.0, "lower") == 0  # within 0.1 %
    assert stats.outcome(100.2, 100.0, "lower") == -1
    assert stats.outcome(100.2, 100.0, "lower", tie_rel=0.01) == 0


def test_noise_around_zero_gives_no_clear_difference():
    alg = [v + d for v, d in zip(DATA, [0.5, -0.4, 0.3, -0.6, 0.2, -0.1, 0.4, -0.5, 0.1, -0.3], strict=True)]
    p = stats.paired(alg, DATA, better="lower")
    assert p.median_ci.low < 0 < p.median_ci.high
    assert p.verdict == "no clear difference"


def test_pairs_with_a_missing_side_are_dropped_and_counted():
    p = stats.paired([1.0, None, 3.0, 4.0], [2.0, 2.0, math.nan, 5.0], better="lower")
    assert p.n == 2 and p.excluded == 2 and p.wins == 2


def test_one_pair_gives_insufficient_data():
    p = stats.paired([1.0], [2.0], better="lower")
    assert p.verdict == "insufficient data" and p.mean_ci is None and p.wins == 1


def test_paired_rejects_misaligned_sequences():
    with pytest.raises(ValueError, match="3 values but 2"):
        stats.paired([1.0, 2.0, 3.0], [1.0, 2.0], better="lower")


def test_compare_pairs_on_common_seeds_and_names_a_separated_best():
    table = {
        "fifo": dict(enumerate(DATA)),
        "fast": {i: v - 3.0 for i, v in enumerate(DATA)},
        "noisy": {i: v + (0.2 if i % 2 else -0.2) for i, v in enumerate(DATA) if i != 3},
    }
    report = stats.compare(table, reference="fifo", metric="avg_jct")
    assert report.better == "lower" and set(report.paired) == {"fast", "noisy"}
    assert report.paired["noisy"].n == 9
    assert report.paired["fast"].verdict == "better"
    assert report.best == "fast"


def test_compare_names_no_best_when_the_top_two_overlap():
    table = {
        "a": dict(enumerate(DATA)),
        "b": {i: v + (0.3 if i % 2 else -0.35) for i, v in enumerate(DATA)},
    }
    report = stats.compare(table, reference="a", metric="avg_jct")
    assert report.best is None and "not separated" in report.best_note


def test_compare_rejects_an_unknown_reference():
    with pytest.raises(ValueError, match="reference algorithm 'x'"):
        stats.compare({"a": {0: 1.0}}, reference="x", metric="avg_jct")


SEEDS = [[1.0, 2.0, 3.0, None], [2.0, 2.0, 4.0, 5.0], [1.0, 6.0, None, None]]


def test_pooled_cdf_counts_incomplete_jobs_in_the_denominator():
    c = stats.jct_cdf(SEEDS)
    assert c.x == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert c.cdf == pytest.approx([2 / 12, 5 / 12, 6 / 12, 7 / 12, 8 / 12, 9 / 12])
    assert (c.seeds, c.jobs, c.completed, c.band) == (3, 12, 9, "seeds")
    assert all(lo <= f <= hi for lo, f, hi in zip(c.low, c.cdf, c.high, strict=True))


def test_seed_band_matches_a_scipy_bootstrap_over_seeds_at_one_point():
    c = stats.jct_cdf(SEEDS)

    def share_le_2(idx):
        idx = idx.astype(int)
        below = np.array([sum(1 for v in s if v is not None and v <= 2.0) for s in SEEDS])
        total = np.array([len(s) for s in SEEDS])
        return below[idx].sum() / total[idx].sum()

    res = sps.bootstrap(
        (np.arange(3),),
        share_le_2,
        n_resamples=999,
        method="percentile",
        vectorized=False,
        rng=np.random.default_rng(0),
    )
    assert c.low[1] == pytest.approx(res.confidence_interval.low)
    assert c.high[1] == pytest.approx(res.confidence_interval.high)


def test_jobs_band_matches_scipy_ecdf_on_complete_data():
    data = [[3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0]]
    c = stats.jct_cdf(data, band="jobs")
    with pytest.warns(RuntimeWarning, match="undefined"):
        ci = sps.ecdf(np.asarray(data[0])).cdf.confidence_interval(0.95)
    assert c.low == pytest.approx(np.nan_to_num(ci.low.evaluate(np.asarray(c.x)), nan=0.0))
    assert c.high == pytest.approx(np.nan_to_num(ci.high.evaluate(np.asarray(c.x)), nan=1.0))


def test_one_seed_gives_a_cdf_without_a_seed_band():
    c = stats.jct_cdf([[1.0, 2.0]])
    assert c.cdf == [0.5, 1.0] and c.low is None and c.band == "none" and "fewer than 2 seeds" in c.note


def test_a_long_cdf_is_evaluated_on_a_bounded_grid():
    rng = np.random.default_rng(3)
    c = stats.jct_cdf([rng.exponential(10.0, 500).tolist() for _ in range(4)], grid_points=50)
    assert len(c.x) <= 50 and c.cdf[-1] == pytest.approx(1.0)


def test_five_pairs_of_one_sign_are_too_few_for_a_verdict_and_six_are_enough():
    ref = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0]
    alg = [v - 1.0 - 0.1 * i for i, v in enumerate(ref)]
    five = stats.paired(alg[:5], ref[:5], better="lower")
    assert five.median_ci.high < 0 and five.verdict == "insufficient data" and "at least 6" in five.note
    assert stats.paired(alg, ref, better="lower").verdict == "better"


def test_the_median_ratio_to_the_reference_matches_scipy():
    alg = [0.8 * v + (0.3 if i % 2 else -0.2) for i, v in enumerate(DATA)]
    p = stats.paired(alg, DATA, better="lower")
    ratios = np.asarray(alg) / np.asarray(DATA)
    assert p.median_ratio == pytest.approx(np.median(ratios))
    assert (p.median_ratio_ci.low, p.median_ratio_ci.high) == pytest.approx(scipy_ci(ratios, np.median))


def test_no_ratio_when_a_reference_value_is_not_positive():
    assert stats.paired([1.0, 2.0], [0.0, 1.0], better="lower").median_ratio is None
