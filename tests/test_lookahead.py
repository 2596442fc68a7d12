"""No look-ahead (DESIGN section 9): nothing decided before slot t depends on a job arriving after t.

For every registered online algorithm, on a small preset instance it supports, the jobs arriving
after a cut slot t are made three times larger and a late job is added; the placements, progress
and admissions before t must stay the same. Offline references (``AlgorithmSpec.online`` False)
see every job by definition and are left out.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from scheduling import api, registry
from scheduling.errors import UnsupportedInstance
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance, Job
from scheduling.presets import build

FACTOR = 3  # work of a job arriving after t, relative to the original
ONLINE = sorted(name for name, spec in registry.all_specs().items() if spec.online)

# Small instances to try, in order; an algorithm runs on the first one it supports.
CANDIDATES = (
    ("demo", 10, 1.0),
    ("zhou-ps", 10, 0.3),
    ("oasis", 80, 0.2),
    ("edge-cloud", 12, 0.1),
    ("asrpt", 14, 0.04),
)


# dorm's MILP stops at a wall-clock time limit, so on a loaded machine two runs of the same input may
# differ; its solves get time to finish, on a smaller instance (keeps the test short, too).
# asrpt refuses a fitted predictor without a history; these instances have none.
PARAMS = {"dorm": {"time_limit": "600"}, "asrpt": {"no_history": "zero"}}
SMALLER = {"dorm": ("oasis", 24, 0.2)}


def _instance(preset: str, jobs: int, size: float) -> Instance:
    files = build(preset, jobs=jobs, seed=3, size=size)
    cluster = parse_cluster(files.cluster)
    fmt = "json" if files.trace_name.endswith(".json") else "csv"
    return Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, fmt))


def _bigger(job: Job) -> Job:
    """The same job with three times its work (what the algorithm must not know before it arrives)."""
    if job.rigid:
        assert job.duration is not None
        return dataclasses.replace(job, duration=max(1, round(FACTOR * job.duration)))
    iterations = None if job.iterations is None else max(1, round(FACTOR * job.iterations))
    if job.work is not None:
        return dataclasses.replace(job, work=FACTOR * job.work, iterations=iterations)
    return dataclasses.replace(job, epochs=max(1, round(FACTOR * job.epochs)), iterations=iterations)


def _tiny(job: Job) -> Job:
    if job.rigid:
        return dataclasses.replace(job, duration=1)
    if job.work is not None:
        return dataclasses.replace(job, work=1.0)
    return dataclasses.replace(job, epochs=1)


def _changed_after(instance: Instance, t: int) -> Instance:
    """Jobs arriving after ``t`` made FACTOR times larger, plus two late jobs: one worth 1000 times
    as much (weight and utility priority: it moves price bounds), one as small as possible."""
    late = [j for j in instance.jobs if j.arrival > t]
    last = late[-1]
    heavy = dataclasses.replace(
        last,
        job_id="late-heavy",
        weight=1000 * last.weight,
        utility=dataclasses.replace(last.utility, priority=1000 * last.utility.priority),
    )
    tiny = dataclasses.replace(_tiny(last), job_id="late-tiny")
    jobs = [(_bigger(j) if j.arrival > t else j) for j in instance.jobs] + [heavy, tiny]
    return Instance(instance.cluster, tuple(sorted(jobs, key=lambda j: (j.arrival, j.job_id))))


def _before(doc: dict[str, Any], t: int) -> dict[str, Any]:
    """What the result decided in slots [0, t): segments cut at t, adjacent equal ones merged."""

    def cut(segments: list[dict[str, Any]], keys: tuple[str, ...]) -> list[tuple[Any, ...]]:
        open_: dict[tuple[Any, ...], list[int]] = {}
        out: list[tuple[Any, ...]] = []
        for seg in sorted(segments, key=lambda s: (s["start"], str(s["job_id"]))):
            if seg["start"] >= t:
                continue
            key = tuple(repr(seg[k]) for k in keys)
            end = min(seg["end"], t)
            span = open_.get(key)
            if span is not None and span[1] == seg["start"]:
                span[1] = end
                continue
            span = [seg["start"], end]
            open_[key] = span
            out.append((key, span))
        return sorted((key, tuple(span)) for key, span in out)

    placements = cut(doc["placements"], ("job_id", "server", "role", "type", "count", "demand"))
    progress = cut(doc["progress"], ("job_id", "rate"))
    admitted = sorted((j["job_id"], j["admitted"], j["start"]) for j in doc["jobs"] if j["arrival"] < t)
    started = [(job_id, adm, start if start is not None and start < t else None) for job_id, adm, start in admitted]
    return {"placements": placements, "progress": progress, "jobs": started}


def _supported(algorithm: str) -> tuple[Instance, int]:
    spec = registry.get(algorithm)
    for preset, jobs, size in (SMALLER[algorithm],) if algorithm in SMALLER else CANDIDATES:
        instance = _instance(preset, jobs, size)
        if spec.unsupported(instance) is None:
            arrivals = sorted({j.arrival for j in instance.jobs})
            return instance, arrivals[len(arrivals) // 4]
    pytest.fail(f"{algorithm} supports none of the small preset instances: add one to CANDIDATES")


@pytest.mark.parametrize("algorithm", ONLINE)
def test_jobs_arriving_after_t_change_nothing_decided_before_t(algorithm):
    instance, t = _supported(algorithm)
    changed = _changed_after(instance, t)
    try:
        first = api.run(instance, algorithm, PARAMS.get(algorithm), seed=1)
        second = api.run(changed, algorithm, PARAMS.get(algorithm), seed=1)
    except UnsupportedInstance as exc:
        pytest.fail(f"{algorithm}: {exc}")
    assert _before(first, t) == _before(second, t)


def test_the_comparison_catches_an_algorithm_that_reads_future_jobs():
    """Not vacuous: oasis' offline reading bounds=trace takes U, L over every job, and it is caught."""
    instance, t = _supported("oasis")
    changed = _changed_after(instance, t)
    params = {"bounds": "trace"}
    seen = _before(api.run(instance, "oasis", params, seed=1), t)
    assert seen != _before(api.run(changed, "oasis", params, seed=1), t)


def test_offline_references_are_the_only_algorithms_exempt():
    assert sorted(name for name, spec in registry.all_specs().items() if not spec.online) == ["offline-opt"]
