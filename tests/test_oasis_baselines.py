"""OASiS's baselines (rrh, dorm, drf), the offline optimum, its metrics and validator rules, and
``bounds=history``; the online algorithm itself is tests/test_oasis.py."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from scheduling import api, presets, records, registry
from scheduling.algorithms.oasis.online import Oasis, check_constraints, estimate_bounds, job_shape
from scheduling.errors import InputError
from scheduling.loaders import cluster_from_dict, job_from_row, parse_cluster, parse_trace
from scheduling.model import Instance, Job, Utility
from scheduling.validator import validate
from tests.test_oasis import RES, tiny_instance

# ---- baselines, offline optimum, metrics ---------------------------------------------------------


def test_baselines_validate_and_keep_their_rules() -> None:
    rng = np.random.default_rng(7)
    for _ in range(3):
        inst = tiny_instance(rng, 7, horizon=8)
        for name in ("rrh", "dorm", "fifo", "drf"):
            doc = api.run(inst, name, seed=1)
            assert validate(inst, doc) == []
        rrh = api.run(inst, "rrh", seed=1)
        for job_id in {p["job_id"] for p in rrh["placements"]}:  # fixed worker count while running
            per_slot: dict[int, int] = {}
            for p in rrh["placements"]:
                if p["job_id"] == job_id and p["role"] == "worker":
                    for t in range(p["start"], p["end"]):
                        per_slot[t] = per_slot.get(t, 0) + p["count"]
            assert len(set(per_slot.values())) == 1
        dorm = api.run(inst, "dorm", seed=1)
        assert all(j["admitted"] for j in dorm["jobs"])  # Dorm admits every job
        assert check_constraints(inst, dorm) == []


def test_rrh_gives_each_job_the_ps_count_of_constraint_6_unless_fixed() -> None:
    rng = np.random.default_rng(11)
    inst = tiny_instance(rng, 6, horizon=8)
    params = {"workers_min": 4, "workers_max": 4}
    doc = api.run(inst, "rrh", params, seed=1)
    assert validate(inst, doc) == [] and doc["placements"]
    assert check_constraints(inst, doc) == []  # (3), (6), (7) in every slot
    counts: dict[tuple[str, int], list[int]] = {}  # (job, slot) -> [workers, PSs]
    for p in doc["placements"]:
        for t in range(p["start"], p["end"]):
            counts.setdefault((p["job_id"], t), [0, 0])[p["role"] == "ps"] += p["count"]
    for (job_id, _t), (y, z) in counts.items():
        job = inst.job(job_id)
        assert job.worker_demand is not None and job.ps_demand is not None
        assert z == max(1, math.ceil(y * job.worker_demand["bw"] / job.ps_demand["bw"] - 1e-9))
    fixed = api.run(inst, "rrh", {**params, "ps_rule": "fixed", "ps": 1}, seed=1)
    assert validate(inst, fixed) == []
    assert {p["count"] for p in fixed["placements"] if p["role"] == "ps"} == {1}
    assert any(z > 1 for _y, z in counts.values())  # the instance needs more than one PS somewhere


def test_rrh_paused_jobs_resume_unless_pause_is_final() -> None:
    def paused_and_resumed(doc: dict[str, Any]) -> set[str]:
        spans: dict[str, list[tuple[int, int]]] = {}
        for p in doc["placements"]:
            if p["role"] == "worker":
                spans.setdefault(p["job_id"], []).append((p["start"], p["end"]))
        return {j for j, iv in spans.items() if any(b[0] > a[1] for a, b in itertools.pairwise(sorted(iv)))}

    inst = tiny_instance(np.random.default_rng(2), 6, horizon=10)
    params = {"workers_min": 2, "workers_max": 3}
    resume = api.run(inst, "rrh", params, seed=1)  # default pause=resume
    final = api.run(inst, "rrh", {**params, "pause": "final"}, seed=1)
    assert validate(inst, resume) == [] and validate(inst, final) == []
    assert paused_and_resumed(resume) and not paused_and_resumed(final)


def test_rrh_rejects_a_job_that_cannot_earn_utility() -> None:
    rng = np.random.default_rng(8)
    inst = tiny_instance(rng, 1, horizon=8)
    job = inst.jobs[0]
    hopeless = Instance(inst.cluster, (records.replace(job, utility=Utility(50.0, 6.0, -200.0)),))
    doc = api.run(hopeless, "rrh")
    assert not doc["jobs"][0]["admitted"] and doc["placements"] == []


def test_dorm_milp_limits_resizes_and_honours_fairness() -> None:
    from scheduling.algorithms.oasis.baselines import Dorm
    from scheduling.engine import JobView

    rng = np.random.default_rng(9)
    inst = tiny_instance(rng, 6, horizon=8)
    params = registry.get("dorm").parse_params({"adjust": 0.25, "fairness": 0.5})
    dorm = Dorm(inst, params, rng)
    views = [JobView(j, 0.0, 0.0, True, None, False) for j in inst.jobs]
    current = {j.job_id: 1 for j in inst.jobs[:4]}
    out = dorm.solve(views, current, fair=True)
    assert out is not None
    changed = sum(1 for j, n in current.items() if out[j][0] != n)
    assert changed <= math.ceil(0.25 * 4)
    for j in inst.jobs:  # (6) and (7) in the MILP's answer
        n, m = out[j.job_id]
        assert m <= n and n * (j.worker_demand or {})["bw"] <= m * (j.ps_demand or {})["bw"] + 1e-9


def test_offline_opt_is_an_upper_bound_and_exact_on_a_hand_instance() -> None:
    rng = np.random.default_rng(10)
    for _ in range(3):
        inst = tiny_instance(rng, 6, horizon=6)
        opt = api.run(inst, "offline-opt")
        assert validate(inst, opt) == [] and check_constraints(inst, opt) == []
        assert opt["offline_opt"]["gap"] == pytest.approx(0.0, abs=1e-6)
        assert opt["metrics"]["total_utility"] >= opt["offline_opt"]["objective"] - 1e-6
        for name in ("oasis", "rrh", "dorm", "fifo"):
            other = api.run(inst, name)["metrics"]["total_utility"]
            assert other <= opt["metrics"]["total_utility"] + 1e-6
    # One worker server that holds one worker, two jobs of one worker-slot each arriving at 0 with a
    # one-slot deadline-like utility: only one can earn (priority 90 > 40), the other only later.
    spec = {
        "slot_seconds": 1,
        "horizon": 3,
        "resources": ["cpu", "bw"],
        "servers": [
            {"id": "w", "pool": "worker", "capacity": {"cpu": 1, "bw": 10}},
            {"id": "p", "pool": "ps", "capacity": {"cpu": 2, "bw": 10}},
        ],
    }
    cluster = cluster_from_dict(spec)
    row = {"arrival": 0, "arch": "ps", "work": 2, "chunks": 1, "batch_time": 0.5, "decay": 6, "target": 1.5}
    row |= {"worker_demand": {"cpu": 1, "bw": 1}, "ps_demand": {"cpu": 1, "bw": 1}}
    jobs = tuple(job_from_row({**row, "job_id": j, "priority": p}, cluster) for j, p in (("a", 40), ("b", 90)))
    doc = api.run(Instance(cluster, jobs), "offline-opt")
    expected = Utility(90, 6, 1.5).value(1) + Utility(40, 6, 1.5).value(2)
    assert doc["metrics"]["total_utility"] == pytest.approx(expected)


def test_timeliness_and_admission_rate_metrics() -> None:
    rng = np.random.default_rng(11)
    inst = tiny_instance(rng, 8, horizon=8)
    doc = api.run(inst, "oasis")
    m = doc["metrics"]
    assert m["admission_rate"] == pytest.approx(m["admitted"] / m["jobs"])
    by_id = {j.job_id: j for j in inst.jobs}
    crit = [
        r["completion"] - r["arrival"] - by_id[r["job_id"]].utility.target
        for r in doc["jobs"]
        if r["completion"] is not None and by_id[r["job_id"]].utility.decay >= 4
    ]
    t = m["timeliness"]["time-critical"]
    assert t["completed"] == len(crit)
    if crit:
        assert t["mean"] == pytest.approx(sum(crit) / len(crit))
    doc["metrics"]["admission_rate"] = 0.123
    assert any("admission_rate" in p for p in validate(inst, doc))


def test_dashboard_metrics_table_shows_admission_rate_and_timeliness() -> None:
    from webapp.charts import METRIC_COLUMNS, metrics_row

    rng = np.random.default_rng(12)
    inst = tiny_instance(rng, 6, horizon=8)
    doc = api.run(inst, "oasis")
    row = metrics_row("oasis", {}, doc)
    cells = dict(zip([k for k, _ in METRIC_COLUMNS], row["cells"], strict=True))
    assert cells["admission_rate"] not in ("", "—")
    for cls, t in doc["metrics"]["timeliness"].items():
        if t["mean"] is not None:
            assert f"{cls} {t['mean']:+.1f}" in cells["timeliness"]


def test_validator_checks_per_slot_worker_and_ps_counts() -> None:
    rng = np.random.default_rng(13)
    inst = tiny_instance(rng, 6, horizon=8)
    doc = api.run(inst, "oasis")
    ps = next(p for p in doc["placements"] if p["role"] == "ps")
    bad = {**doc, "placements": [p for p in doc["placements"] if p is not ps]}
    assert any("(6)" in p for p in validate(inst, bad))  # a slot without enough PS bandwidth
    fifo = {**bad, "algorithm": "fifo"}  # (6)/(7) are OASiS's rules, not fifo's
    assert not any("(6)" in p for p in validate(inst, fifo))
    job = inst.job(ps["job_id"])
    many = dict(ps, role="worker", count=job.max_workers() + 1, server="w0", demand={})
    assert any("(3)" in p for p in validate(inst, {**doc, "placements": [*doc["placements"], many]}))


def test_transcription_is_refused_on_large_workloads() -> None:
    files = presets.build("oasis", jobs=5, seed=3, size=0.2)
    cluster = parse_cluster(files.cluster)
    inst = Instance(cluster, tuple(sorted(parse_trace(files.trace, cluster), key=lambda j: (j.arrival, j.job_id))))
    with pytest.raises(InputError, match="dp=fast"):
        api.run(inst, "oasis", {"dp": "transcription"})


# ---- bounds=history: U, L and the scale on U/L from a replay of the trace's first window ----------


def history_instance(seed: int = 21, n_jobs: int = 36, horizon: int = 24) -> Instance:
    """A trace (seed + 1) with a separate history trace (seed) on the same cluster."""
    past = tiny_instance(np.random.default_rng(seed), n_jobs, horizon=horizon)
    now = tiny_instance(np.random.default_rng(seed + 1), n_jobs, horizon=horizon)
    return Instance(past.cluster, now.jobs, history=past.jobs)


HISTORY = {"utility_floor": 0.01, "history_min_jobs": 5, "bounds": "history", "history_share": 1 / 3}


def test_history_bounds_read_only_the_history_window_and_are_deterministic() -> None:
    import dataclasses

    inst = history_instance()
    algo = Oasis(inst, HISTORY)
    cal = algo.calibration
    assert cal is not None and cal.used == "history" and cal.window == 8
    assert cal.window_jobs == sum(j.arrival < 8 for j in inst.history) >= 5
    assert cal.replay_jobs == round(cal.window_jobs * 24 / 8)
    # the chosen scale is the best of the replay runs (the larger scale among equals)
    best = max(u for _, u, _ in cal.grid)
    assert cal.scale == max(s for s, u, _ in cal.grid if u == best)
    again = Oasis(inst, HISTORY)  # deterministic: same window, same replay, same bounds
    assert again.bounds.describe(again.resources) == algo.bounds.describe(algo.resources)
    assert again.calibration is not None and again.calibration.grid == cal.grid

    def bigger(j: Job) -> Job:
        return dataclasses.replace(j, utility=Utility(j.utility.priority * 3 + 1, 0.0, 1.0), work=j.work_required + 5)

    # changing every job of the evaluated trace, or of the history after its window, changes nothing
    scored = Instance(inst.cluster, tuple(bigger(j) for j in inst.jobs), history=inst.history)
    late = tuple(bigger(j) if j.arrival >= 8 else j for j in inst.history)
    for other_inst in (scored, Instance(inst.cluster, inst.jobs, history=late)):
        changed = Oasis(other_inst, HISTORY)
        assert changed.bounds.describe(changed.resources) == algo.bounds.describe(algo.resources)
        assert changed.calibration is not None and changed.calibration.grid == cal.grid
    # ... while the whole-trace bounds (bounds=trace, offline) do see the evaluated trace's jobs
    trace_a = Oasis(inst, {**HISTORY, "bounds": "trace"}).bounds
    trace_b = Oasis(scored, {**HISTORY, "bounds": "trace"}).bounds
    assert trace_a.describe(RES) != trace_b.describe(RES)
    # changing a history job inside the window does change the replay
    first = inst.history[0]
    assert first.arrival < 8
    moved = (dataclasses.replace(first, utility=Utility(first.utility.priority + 50, 0.0, 1.0)), *inst.history[1:])
    other = Oasis(Instance(inst.cluster, inst.jobs, history=moved), HISTORY)
    assert other.calibration is not None and other.calibration.grid != cal.grid
    # another replay seed gives another replay of the same window
    reseeded = Oasis(inst, {**HISTORY, "history_seed": 7})
    assert reseeded.calibration is not None and reseeded.calibration.seed == 7 != cal.seed


def test_history_bounds_need_a_history_trace() -> None:
    inst = history_instance()
    with pytest.raises(InputError, match="bounds=history calibrates on a separate history trace"):
        Oasis(Instance(inst.cluster, inst.jobs), HISTORY)


def test_arrived_bounds_start_from_the_history_and_take_in_each_job_as_it_arrives() -> None:
    inst = history_instance()
    params = {"utility_floor": 0.01}
    algo = Oasis(inst, params)  # bounds=arrived is the default
    history = [job_shape(inst.cluster, j, RES) for j in inst.history]
    assert algo.bounds.describe(RES) == estimate_bounds(history, algo.book, floor=0.01).describe(RES)
    doc = api.run(inst, "oasis", params)
    every = [job_shape(inst.cluster, j, RES) for j in (*inst.history, *inst.jobs)]
    assert doc["oasis"]["bounds"] == estimate_bounds(every, algo.book, floor=0.01).describe(RES)
    assert any(d.get("rebase") for d in doc["prices"]["decisions"]), "the bounds moved at some arrival"
    assert validate(inst, doc) == [] and check_constraints(inst, doc) == []


def test_history_falls_back_to_arrived_bounds_with_too_few_window_jobs_and_results_validate() -> None:
    inst = history_instance()
    few = Oasis(inst, {**HISTORY, "history_min_jobs": 100})
    assert few.calibration is not None and few.calibration.used == "arrived"
    arrived = Oasis(inst, {**HISTORY, "bounds": "arrived"})
    assert arrived.calibration is None
    assert few.bounds.describe(few.resources) == arrived.bounds.describe(arrived.resources)
    for params in ({**HISTORY, "history_min_jobs": 100}, HISTORY):
        doc = api.run(inst, "oasis", params)
        assert validate(inst, doc) == [] and check_constraints(inst, doc) == []
        cal = doc["oasis"]["calibration"]
        if params["history_min_jobs"] == 100:
            assert cal["used"] == "arrived" and "fewer than history_min_jobs = 100" in cal["reason"]
        else:
            assert cal["used"] == "history" and cal["scale"] <= 1.0 and doc["metrics"]["total_utility"] > 0
