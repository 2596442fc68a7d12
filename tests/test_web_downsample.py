"""Charts of 100,000-job runs stay small: exact points of each curve, a box's statistics, a sample of
the scatter, bin means of utilisation; small runs are drawn from every value as before."""

import itertools
import json
import random

import numpy as np
import pytest

from webapp import charts
from webapp.charts import downsample

JOBS = 20_000


def big_doc(seed: int) -> dict:
    rng = random.Random(seed)
    jobs, placements = [], []
    for k in range(JOBS):
        arrival = k // 3
        run = rng.randint(1, 400)
        jobs.append({"job_id": f"j{k:06d}", "arrival": arrival, "completion": arrival + run, "admitted": True,
                     "utility": rng.random()})  # fmt: skip
        placements.append({"job_id": f"j{k:06d}", "server": f"s{k % 50}", "role": "worker", "type": "gpu",
                           "count": 1, "start": arrival, "end": arrival + run, "demand": {"gpu": 1}})  # fmt: skip
    servers = [{"id": f"s{i}", "capacity": {"gpu": 8}, "unlimited": False} for i in range(50)]
    return {"jobs": jobs, "placements": placements, "servers": servers, "metrics": {"avg_jct": 200.0}}


@pytest.fixture(scope="module")
def runs():
    return [("fifo", big_doc(1)), ("srtf", big_doc(2))]


def size(figure) -> int:
    return len(json.dumps(figure))


def test_a_cdf_keeps_exact_points_of_the_curve_first_and_last_included():
    values = np.random.default_rng(0).integers(1, 100_000, 50_000)
    xs, shares = downsample.cdf(values.tolist())
    assert len(xs) <= downsample.MAX_POINTS
    assert xs[0] == values.min() and xs[-1] == values.max() and shares[-1] == 1.0
    for x, share in zip(xs[::50], shares[::50], strict=True):
        assert share == pytest.approx((values <= x).mean(), abs=1e-6)


def test_a_step_series_keeps_its_area_when_binned():
    points = [(t, (t % 7) / 7) for t in range(0, 30_000, 3)]
    xs, ys, width = downsample.step_means(points)
    assert len(xs) <= downsample.MAX_POINTS + 1 and width > 1
    exact = sum((b[0] - a[0]) * a[1] for a, b in itertools.pairwise(points))
    binned = sum((min(b, points[-1][0]) - a) * y for a, b, y in zip(xs, xs[1:], ys, strict=False))
    assert binned == pytest.approx(exact, rel=1e-9)


def test_the_box_of_a_large_run_sends_its_statistics_not_every_jct(runs):
    box = charts.jct_box(runs)
    trace = box["data"][0]
    values = sorted(j["completion"] - j["arrival"] for j in runs[0][1]["jobs"])
    assert "y" not in trace and trace["median"] == [float(np.median(values))]
    assert trace["lowerfence"][0] >= values[0] and trace["upperfence"][0] <= values[-1]
    assert size(box) < 5_000


def test_jct_charts_of_two_20k_job_runs_stay_small(runs):
    cdf, scatter = charts.jct_cdf(runs), charts.jct_scatter(runs[0], runs[1])
    assert size(cdf) < 100_000
    assert len(scatter["data"][0]["x"]) == downsample.MAX_MARKERS and size(scatter) < 300_000
    assert f"of the {JOBS:,} jobs completed by both" in scatter["layout"]["title"]["text"]
    assert size(charts.timeliness(runs)) < 20_000


def test_utilisation_and_event_charts_of_two_20k_job_runs_stay_small(runs):
    figures = [*charts.utilization(runs), *charts.events_over_time(runs)]
    assert sum(size(f) for f in figures) < 150_000
    assert "mean over bins of" in figures[0]["layout"]["xaxis"]["title"]["text"]


def test_small_runs_are_drawn_from_every_value():
    doc = {"jobs": [{"job_id": f"j{k}", "arrival": 0, "completion": k + 1, "utility": 0.5} for k in range(10)]}
    cdf = charts.jct_cdf([("fifo", doc)])["data"][0]
    assert cdf["x"] == list(range(1, 11)) and cdf["y"][0] == 0.1
    assert charts.jct_box([("fifo", doc)])["data"][0]["y"] == list(range(1, 11))
