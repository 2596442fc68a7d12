"""The validator accepts real schedules and catches each kind of tampering."""

from __future__ import annotations

import copy

import pytest

from scheduling import api, presets
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance
from scheduling.validator import validate
from tests.scenarios import RIGID_TRACE, instance


@pytest.fixture(scope="module")
def good():
    inst = instance(RIGID_TRACE)
    return inst, api.run(inst, "fifo", seed=1)


def tampered(doc, change):
    doc = copy.deepcopy(doc)
    change(doc)
    return doc


def test_a_fifo_schedule_is_valid(good):
    inst, doc = good
    assert validate(inst, doc) == []


def test_an_overbooked_server_is_caught(good):
    inst, doc = good

    def overbook(d):
        d["placements"].append(dict(d["placements"][0], job_id="r4", count=8, start=3, end=4))

    assert any("gpu used" in p for p in validate(inst, tampered(doc, overbook)))


def test_a_placement_before_arrival_is_caught(good):
    inst, doc = good
    r3 = next(p for p in doc["placements"] if p["job_id"] == "r3")

    def early(d):
        next(p for p in d["placements"] if p["job_id"] == "r3")["start"] = 0

    assert r3["start"] >= 2
    assert any("before the job arrives" in p for p in validate(inst, tampered(doc, early)))


def test_a_completed_job_without_its_work_is_caught(good):
    inst, doc = good

    def short(d):
        g = next(g for g in d["progress"] if g["job_id"] == "r1")
        g["end"] -= 1
        next(j for j in d["jobs"] if j["job_id"] == "r1")["work_done"] -= g["rate"]

    problems = validate(inst, tampered(doc, short))
    assert any("'r1': completed" in p for p in problems)


def test_a_job_not_admitted_must_hold_nothing(good):
    inst, doc = good

    def unadmit(d):
        next(j for j in d["jobs"] if j["job_id"] == "r2")["admitted"] = False

    assert any("not admitted but holds" in p for p in validate(inst, tampered(doc, unadmit)))


def test_reported_metrics_must_match_the_jobs(good):
    inst, doc = good

    def inflate(d):
        d["metrics"]["avg_jct"] *= 0.5

    assert any(p.startswith("metric avg_jct") for p in validate(inst, tampered(doc, inflate)))


def test_a_rate_faster_than_the_placement_allows_is_caught(good):
    inst, doc = good

    def faster(d):
        for g in d["progress"]:
            if g["job_id"] == "r4":
                g["rate"] *= 2

    assert any("'r4': rate" in p for p in validate(inst, tampered(doc, faster)))


def test_a_wrong_per_instance_demand_is_caught(good):
    inst, doc = good

    def cheaper(d):
        d["placements"][0]["demand"] = {"gpu": 0.5}

    assert any("demand" in p for p in validate(inst, tampered(doc, cheaper)))


def test_a_hidden_suspension_is_caught(good):
    inst, doc = good

    def split(d):
        p = next(p for p in d["placements"] if p["job_id"] == "r4")
        later = dict(p, start=p["end"] + 2, end=p["end"] + 3)
        d["placements"].append(later)

    problems = validate(inst, tampered(doc, split))
    assert any("suspensions seen" in p for p in problems)


def test_completed_weight_and_avg_wait_are_checked_when_reported_and_may_be_missing_from_older_results() -> None:
    # Zhou et al.'s Fig. 8 metric, added to mlsched.result/1 later: a wrong value is caught, a
    # result written before it existed still passes.
    files = presets.build("zhou-batch", jobs=6, seed=2, size=0.1)
    cluster = parse_cluster(files.cluster)
    inst = Instance(cluster, parse_trace(files.trace, cluster, files.trace_name))
    doc = api.run(inst, "jain-greedy", {"tau": 30})
    done = [j for j in doc["jobs"] if j["completion"] is not None]
    assert 0 < len(done) < 6 and doc["metrics"]["completed_weight"] == sum(j["weight"] for j in done)
    wrong = copy.deepcopy(doc)
    wrong["metrics"]["completed_weight"] += 1
    assert any(p.startswith("metric completed_weight") for p in validate(inst, wrong))
    waits = [j["start"] - j["arrival"] for j in done]
    assert doc["metrics"]["avg_wait"] == pytest.approx(sum(waits) / len(waits))
    wrong = copy.deepcopy(doc)
    wrong["metrics"]["avg_wait"] += 0.5
    assert any(p.startswith("metric avg_wait") for p in validate(inst, wrong))
    older = copy.deepcopy(doc)
    del older["metrics"]["completed_weight"], older["metrics"]["avg_wait"]
    assert validate(inst, older) == []


def test_a_rate_is_checked_at_each_change_of_placement_inside_a_progress_segment(good):
    """A placement that ends inside a progress segment: the rate after it is wrong (nothing held)."""
    inst, doc = good
    p = next(p for p in doc["placements"] if p["job_id"] == "r1" and p["end"] - p["start"] >= 2)
    g = next(g for g in doc["progress"] if g["job_id"] == "r1" and g["start"] <= p["start"] < g["end"] - 1)
    cut = p["start"] + 1

    def cut_short(d):
        next(q for q in d["placements"] if q == p)["end"] = cut

    problems = validate(inst, tampered(doc, cut_short))
    assert f"job 'r1': rate {g['rate']} at slot {cut}, its placements give 0.0" in problems


def one_change(doc, rng):
    """A copy of ``doc`` with one field of one placement, progress segment or job record changed."""
    part = rng.choice(["placements", "progress", "jobs"])
    d = copy.deepcopy(doc)
    row = rng.choice(d[part])
    key = rng.choice(
        {
            "placements": ["start", "end", "count"],
            "progress": ["start", "end", "rate"],
            "jobs": ["start", "completion", "work_done", "preemptions"],
        }[part]
    )
    if row[key] is None:
        row[key] = 0
    elif key == "rate":
        row[key] *= rng.choice([0.5, 1.5, -1.0])
    else:
        row[key] += rng.choice([-2, -1, 1, 2])
    return d


def rigid_instance() -> Instance:
    """40 rigid jobs in bursts on three 4-GPU servers: queues, preemptions and moves."""
    import random

    from scheduling.loaders import cluster_from_dict
    from scheduling.model import Job

    rng = random.Random(7)
    cluster = cluster_from_dict(
        {"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "s", "count": 3, "capacity": {"gpu": 4}}]}
    )
    t, jobs = 0, []
    for i in range(40):
        t += rng.choice([0, 0, 1, 3])
        jobs.append(Job(job_id=f"j{i}", arrival=t, gpus=rng.choice([1, 1, 2, 4, 8]), duration=rng.randint(1, 20)))
    return Instance(cluster, tuple(jobs))


@pytest.mark.parametrize(
    "preset,algorithm,restart_seconds",
    [
        ("rigid", "fifo", 0.0),
        ("rigid", "srtf", 120.0),
        ("rigid", "tiresias", 0.0),
        ("rigid", "antman", 120.0),
        ("demo", "srtf", 120.0),
        ("zhou-ps", "zhou", 0.0),
        ("zhou-allreduce", "antman", 120.0),
        ("oasis", "oasis", 0.0),
        ("asrpt", "asrpt", 0.0),
    ],
)
def test_the_one_placement_short_path_says_what_the_full_checks_say(monkeypatch, preset, algorithm, restart_seconds):
    """Jobs with one placement skip _Timeline, _check_job and _check_restarts when they pass: on
    real schedules and on copies with one field changed, the problems are those of the full checks
    (the short path is taken where jobs hold one placement: rigid, all-reduce and pipeline jobs)."""
    import random

    from scheduling import validator
    from tests.scenarios import preset_instance

    inst = rigid_instance() if preset == "rigid" else preset_instance(preset, 14, 3, 0.2 if preset == "oasis" else 1.0)
    params = {"no_history": "zero"} if algorithm == "asrpt" else {}  # the instance has no history
    doc = api.run(inst, algorithm, params, seed=1, restart_seconds=restart_seconds)
    rng = random.Random(f"{preset}/{algorithm}")
    docs = [doc, *(one_change(doc, rng) for _ in range(40))]
    taken = 0
    short = validator._one_placement_valid

    def counted(*args):
        nonlocal taken
        ok = short(*args)
        taken += ok
        return ok

    monkeypatch.setattr(validator, "_one_placement_valid", counted)
    with_short = [validate(inst, d) for d in docs]
    monkeypatch.setattr(validator, "_one_placement_valid", lambda *args: False)
    assert with_short == [validate(inst, d) for d in docs]
    assert with_short[0] == [] and sum(1 for p in with_short if p) >= 20
    assert (taken > 0) == (preset in ("rigid", "zhou-allreduce", "asrpt"))


def test_the_one_placement_short_path_accepts_exactly_what_the_full_checks_accept():
    """Every combination of one placement [s, e), up to two progress segments (consistent work
    done), completion and reported start, for a rigid job needing 3 slots of work: the short
    path accepts a job exactly when _check_job and _check_restarts find nothing."""
    import itertools

    from scheduling import validator
    from scheduling.loaders import cluster_from_dict
    from scheduling.model import Job

    cluster = cluster_from_dict(
        {"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "s", "count": 1, "capacity": {"gpu": 4}}]}
    )
    job = Job(job_id="j", arrival=1, gpus=2, duration=3)
    inst = Instance(cluster, (job,))
    spans = [(a, b) for a in range(6) for b in range(a + 1, 7)]
    segments = [(a, b, rate) for a, b in spans for rate in (1.0, 0.5)]
    accepted = checked = 0
    for (s, e), count, completion, shift in itertools.product(spans, (2, 1), (None, 3, 4, 5), (0, 1)):
        placement = {
            "job_id": "j",
            "server": "s",
            "role": "worker",
            "type": "gpu",
            "count": count,
            "start": s,
            "end": e,
        }
        for n in (0, 1, 2):
            for chosen in itertools.combinations(segments, n):
                progress = [{"job_id": "j", "start": a, "end": b, "rate": rate} for a, b, rate in chosen]
                done = sum([(g["end"] - g["start"]) * g["rate"] for g in progress])
                record = {
                    "admitted": True,
                    "start": s + shift,
                    "completion": completion,
                    "work_required": job.work_required,
                    "work_done": done,
                    "preemptions": 0,
                }
                problems: list[str] = []
                timeline = validator._Timeline(inst, job, [placement])
                validator._check_job(inst, job, record, [placement], progress, problems, timeline)
                validator._check_restarts(inst, job, record, [placement], progress, [], (0, 0.0), problems, timeline)
                short = validator._one_placement_valid(inst, job, record, placement, progress)
                assert short == (problems == []), (placement, progress, record, problems)
                accepted += short
                checked += 1
    assert accepted > 10 and checked > 10 * accepted
