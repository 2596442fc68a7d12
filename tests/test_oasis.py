"""OASiS (seeds/001): COST_t and DP_COST against brute force, fast path against the transcription,
price functions (22), whole runs through the engine and the validator."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from scheduling import api, presets, registry
from scheduling.algorithms.oasis.dp import (
    INF,
    Book,
    JobShape,
    _greedy_costs,
    best_schedule_fast,
    best_schedule_transcribed,
    cost_t,
    fits,
    slot_table,
    slot_tables,
    unit_costs,
)
from scheduling.algorithms.oasis.online import Oasis, check_constraints, estimate_bounds, price
from scheduling.errors import UnsupportedInstance
from scheduling.loaders import cluster_from_dict, job_from_row, parse_cluster, parse_trace
from scheduling.model import Instance, Utility
from scheduling.prices import matrix_at, past_columns
from scheduling.validator import validate

RES = ("gpu", "cpu", "bw")


def shape(rng: np.random.Generator, arrival: int = 0, work: int | None = None) -> JobShape:
    decay = float(rng.choice([0.0, rng.uniform(0.01, 1.0), rng.uniform(4.0, 6.0)]))
    b, big_b = float(rng.uniform(0.5, 3.0)), float(rng.uniform(2.0, 6.0))
    return JobShape(
        job_id="j",
        arrival=arrival,
        work=int(work if work is not None else rng.integers(1, 13)),
        rate=float(rng.choice([1.0, 1.5, 2.0, 2.5, 3.0])),
        max_workers=int(rng.integers(1, 5)),
        w=np.array([float(rng.integers(0, 2)), float(rng.integers(1, 4)), b]),
        s=np.array([0.0, float(rng.integers(1, 3)), big_b]),
        ratio=b / big_b,
        utility=Utility(float(rng.uniform(1, 100)), decay, float(rng.uniform(1, 4))),
    )


def book(rng: np.random.Generator, horizon: int, h: int = 3, k: int = 2) -> Book:
    """A book with random capacities, partial allocations and prices (ties between servers too)."""
    bk = Book(
        np.array([[float(rng.integers(0, 3)), float(rng.integers(4, 9)), 10.0] for _ in range(h)]),
        np.array([[0.0, float(rng.integers(2, 6)), 12.0] for _ in range(k)]),
        horizon,
    )
    bk.g[:] = rng.uniform(0, 0.5, bk.g.shape) * bk.cap_w[:, :, None]
    bk.v[:] = rng.uniform(0, 0.5, bk.v.shape) * bk.cap_p[:, :, None]
    bk.p[:] = rng.choice([0.1, 0.2, 0.5, 1.0], bk.p.shape)  # few values: ties between servers occur
    bk.q[:] = rng.choice([0.1, 0.3, 0.7], bk.q.shape)
    return bk


def brute_cost_t(bk: Book, job: JobShape, t: int, d: int) -> float:
    """Problem (32) by enumeration: every y_h <= (30) and z_k <= (31), with (3), (6), (7) and
    sum_h y_h >= d M_i (tau_i + 2 e_i / b_i)."""
    fit_w = fits(bk.cap_w, bk.g[:, :, t], job.w)
    fit_p = fits(bk.cap_p, bk.v[:, :, t], job.s)
    a = unit_costs(bk.p[:, :, t], job.w)
    b = unit_costs(bk.q[:, :, t], job.s)
    b_i, big_b = job.w[2], job.s[2]
    best = INF
    for y in itertools.product(*(range(min(int(f), job.max_workers) + 1) for f in fit_w)):
        workers = sum(y)
        if workers > job.max_workers or workers * job.rate < d - 1e-9:
            continue
        cw = float(np.dot(a, y))
        for z in itertools.product(*(range(int(f) + 1) for f in fit_p)):
            if workers * b_i <= sum(z) * big_b + 1e-9 and sum(z) <= workers:
                best = min(best, cw + float(np.dot(b, z)))
    return best


def test_cost_t_is_the_optimum_of_problem_32_by_brute_force() -> None:
    rng = np.random.default_rng(1)
    for _ in range(60):
        job = shape(rng)
        bk = book(rng, 2)
        for d in range(0, 12, 2):
            expected = brute_cost_t(bk, job, 1, d)
            got, y, z = cost_t(bk, job, 1, d)
            assert got == pytest.approx(expected, rel=1e-9) or got == expected == INF
            table = slot_table(bk, job, 1).cost
            need = job.workers_needed(d)
            assert (table[need] if need < len(table) else INF) == pytest.approx(got, rel=1e-12)
            if got < INF:  # the schedule meets (3), (6), (7), (30), (31) and the workload
                assert sum(y) <= job.max_workers and sum(y) * job.rate >= d - 1e-9
                assert sum(y) * job.w[2] <= sum(z) * job.s[2] + 1e-9 and sum(z) <= sum(y)
                assert all(n <= f for n, f in zip(y, fits(bk.cap_w, bk.g[:, :, 1], job.w), strict=True))
                assert all(n <= f for n, f in zip(z, fits(bk.cap_p, bk.v[:, :, 1], job.s), strict=True))


@pytest.mark.parametrize("resources", [3, 7, 9, 12])
def test_slot_tables_of_several_slots_equal_the_per_slot_computation_bit_for_bit(resources: int) -> None:
    """best_schedule_fast computes SLOT_BATCH slots' tables at once; each must be what the slot's
    own unit_costs, fits and stable sorts give, exactly (numpy sums 8 or more terms pairwise)."""
    rng = np.random.default_rng(40 + resources)
    for _ in range(10):
        h, k, horizon = int(rng.integers(1, 40)), int(rng.integers(1, 5)), int(rng.integers(1, 30))
        bk = Book(rng.integers(0, 9, (h, resources)).astype(float), rng.integers(1, 9, (k, resources)) * 1.0, horizon)
        bk.g[:] = rng.uniform(0, 1, bk.g.shape) * bk.cap_w[:, :, None]
        bk.v[:] = rng.uniform(0, 1, bk.v.shape) * bk.cap_p[:, :, None]
        bk.p[:] = rng.uniform(0, 1, bk.p.shape) ** 9 * 10.0 ** rng.integers(-6, 6, bk.p.shape)  # rounding shows
        bk.q[:] = rng.choice([0.1, 0.3, 0.7], bk.q.shape)  # ties between servers
        w = rng.uniform(0.5, 2.0, resources) * (rng.uniform(size=resources) < 0.9)
        job = JobShape("j", 0, 10, 1.0, int(rng.integers(1, 20)), w, w / 2, 0.5, Utility(10.0, 0.0, 1.0))
        t0 = int(rng.integers(0, horizon))
        t1 = int(rng.integers(t0 + 1, horizon + 1))
        for t, got in zip(range(t0, t1), slot_tables(bk, job, t0, t1), strict=True):
            a, b = unit_costs(bk.p[:, :, t], job.w), unit_costs(bk.q[:, :, t], job.s)
            order_w, order_p = np.argsort(a, kind="stable"), np.argsort(b, kind="stable")
            assert np.array_equal(got.order_w, order_w) and np.array_equal(got.order_p, order_p)
            assert np.array_equal(got.fit_w, fits(bk.cap_w, bk.g[:, :, t], job.w)[order_w])
            assert np.array_equal(got.fit_p, fits(bk.cap_p, bk.v[:, :, t], job.s)[order_p])
            one = slot_table(bk, job, t)
            assert np.array_equal(got.cost, one.cost)
            y = np.arange(len(got.cost))
            z = np.ceil(y * job.ratio - 1e-9).clip(min=0).astype(np.int64)
            expected = _greedy_costs(a[order_w], got.fit_w, y) + _greedy_costs(b[order_p], got.fit_p, z)
            assert np.array_equal(got.cost, expected)


def brute_best(bk: Book, job: JobShape) -> tuple[float, int | None]:
    """Problem (27) by enumeration: every completion slot and every split of the workload over the
    slots (compositions), each slot at its brute-force COST_t."""
    best, best_t = 0.0, None
    slots = range(job.arrival, bk.horizon)
    per_slot = {(t, d): brute_cost_t(bk, job, t, d) for t in slots for d in range(job.work + 1)}
    for t_hat in slots:
        n = t_hat - job.arrival + 1
        cheapest = INF
        for split in itertools.product(range(job.work + 1), repeat=n):
            if sum(split) == job.work:
                cheapest = min(cheapest, sum(per_slot[(job.arrival + i, d)] for i, d in enumerate(split)))
        payoff = job.f(t_hat + 1 - job.arrival) - cheapest
        if payoff > best * (1 + 1e-9) + 1e-12:
            best, best_t = payoff, t_hat
    return best, best_t


def test_alg2_finds_the_best_payoff_by_brute_force_and_fast_path_agrees() -> None:
    rng = np.random.default_rng(2)
    admitted = 0
    for _ in range(40):
        job = shape(rng, arrival=int(rng.integers(0, 2)), work=int(rng.integers(1, 9)))
        bk = book(rng, 4)
        bk.p[:] *= rng.choice([0.01, 1.0, 10.0])  # cheap to prohibitive
        expected, t_hat = brute_best(bk, job)
        lit = best_schedule_transcribed(bk, job)
        fast = best_schedule_fast(bk, job)
        if t_hat is None:
            assert lit is None and fast is None
            continue
        admitted += 1
        assert lit is not None and fast is not None
        assert lit.payoff == pytest.approx(expected, rel=1e-9)
        assert lit.completion == t_hat
        assert (fast.completion, fast.slots) == (lit.completion, lit.slots)
        assert fast.payoff == pytest.approx(lit.payoff, rel=1e-12)
        done = sum(sum(y) for y, _z in lit.slots.values()) * job.rate
        assert done >= job.work - 1e-9
    assert 5 <= admitted <= 35  # both outcomes were exercised


def test_fast_path_equals_transcription_on_larger_workloads() -> None:
    rng = np.random.default_rng(3)
    for _ in range(12):
        job = shape(rng, arrival=1, work=int(rng.integers(20, 60)))
        job = JobShape(**{**job.__dict__, "max_workers": int(rng.integers(3, 9))})
        bk = book(rng, 7, h=4, k=3)
        bk.cap_w[:, 1] += 10
        lit, fast = best_schedule_transcribed(bk, job), best_schedule_fast(bk, job)
        assert (lit is None) == (fast is None)
        if lit is not None and fast is not None:
            assert (fast.completion, fast.slots) == (lit.completion, lit.slots)
            assert fast.cost == pytest.approx(lit.cost, rel=1e-12)


def test_price_function_22_runs_from_l_to_u() -> None:
    cap = np.array([[4.0, 10.0], [0.0, 5.0]])
    used = np.array([[0.0, 10.0], [0.0, 2.5]])
    u = np.array([8.0, 50.0])
    p = price(0.5, u, used, cap)
    assert p[0, 0] == pytest.approx(0.5)  # g = 0: L
    assert p[0, 1] == pytest.approx(50.0)  # g = c: U^r
    assert p[1, 1] == pytest.approx(0.5 * (50.0 / 0.5) ** 0.5)
    assert p[1, 0] == pytest.approx(0.5)  # a resource the server lacks keeps L


def test_bounds_follow_23_to_26() -> None:
    rng = np.random.default_rng(4)
    jobs = [shape(rng, arrival=i) for i in range(3)]
    bk = book(rng, 10)
    b = estimate_bounds(jobs, bk, floor=0.0)
    top = [j.f(max(1, math.ceil(j.work / (j.max_workers * j.rate) - 1e-9))) for j in jobs]
    assert b.u1[1] == pytest.approx(max(t / j.w[1] for t, j in zip(top, jobs, strict=True)))
    slots = [math.ceil(j.work / j.rate - 1e-9) for j in jobs]
    eta = min(x * j.s.sum() / (10 * bk.cap_p.sum()) for x, j in zip(slots, jobs, strict=True))
    low = min(j.f(10 - j.arrival) / (x * j.s.sum()) for x, j in zip(slots, jobs, strict=True))
    assert b.l2 == pytest.approx(low * eta / 4)
    assert estimate_bounds(jobs, bk, scale=0.5, floor=0.0, moves="U").u1[1] == pytest.approx(b.u1[1] * 0.5)
    moved = estimate_bounds(jobs, bk, scale=0.5, floor=0.0)  # default: L moves, U stays
    assert moved.l2 == pytest.approx(b.l2 * 2) and moved.u1[1] == pytest.approx(b.u1[1])
    one = estimate_bounds(jobs, bk, floor=0.0, eta="one")  # 1/eta = 1 instead of the Sec. IV-B bound
    assert one.l2 == pytest.approx(low / 4) and one.l2 > b.l2 and one.u1[1] == pytest.approx(b.u1[1])


# ---- whole runs ---------------------------------------------------------------------------------


def tiny_instance(rng: np.random.Generator, n_jobs: int, horizon: int = 6) -> Instance:
    spec = {
        "slot_seconds": 1,
        "horizon": horizon,
        "resources": ["gpu", "cpu", "bw"],
        "servers": [
            {"id": f"w{h}", "pool": "worker", "capacity": {"gpu": int(rng.integers(1, 4)), "cpu": 6, "bw": 10}}
            for h in range(3)
        ]
        + [{"id": f"p{k}", "pool": "ps", "capacity": {"cpu": 4, "bw": 12}} for k in range(2)],
    }
    cluster = cluster_from_dict(spec)
    rows: list[dict[str, Any]] = []
    for i in range(n_jobs):
        rows.append(
            {
                "job_id": f"j{i}",
                "arrival": int(rng.integers(0, horizon - 1)),
                "arch": "ps",
                "work": int(rng.integers(2, 14)),
                "chunks": int(rng.integers(1, 4)),
                "batch_time": float(rng.choice([0.5, 0.4])),
                "worker_demand": {"gpu": int(rng.integers(0, 2)), "cpu": int(rng.integers(1, 3)), "bw": 2},
                "ps_demand": {"cpu": 1, "bw": float(rng.choice([2, 4]))},
                "priority": float(rng.uniform(1, 100)),
                "decay": float(rng.choice([0.0, 0.5, 5.0])),
                "target": float(rng.uniform(1, 3)),
            }
        )
    jobs = sorted((job_from_row(r, cluster) for r in rows), key=lambda j: (j.arrival, j.job_id))
    return Instance(cluster, tuple(jobs))


def test_runs_match_between_transcription_and_fast_path_and_validate() -> None:
    rng = np.random.default_rng(5)
    seen_reject = False
    for _ in range(6):
        inst = tiny_instance(rng, 6)
        params = {"utility_floor": 0.01}
        lit = api.run(inst, "oasis", {**params, "dp": "transcription"})
        fast = api.run(inst, "oasis", params)
        assert lit["jobs"] == fast["jobs"]
        assert lit["placements"] == fast["placements"]
        assert lit["prices"]["decisions"] == fast["prices"]["decisions"]
        assert validate(inst, fast) == []
        assert check_constraints(inst, fast) == []
        for j in fast["jobs"]:  # an admitted job completes by its planned slot, a rejected one never runs
            if j["admitted"]:
                assert j["completion"] is not None
                assert j["completion"] <= fast["oasis"]["planned"][j["job_id"]]["completion"] + 1
            seen_reject |= not j["admitted"]
        one = api.run(inst, "oasis", {**params, "eta": "one"})  # 1/eta = 1: a larger L, still valid
        assert one["oasis"]["bounds"]["L1"] > fast["oasis"]["bounds"]["L1"]
        assert validate(inst, one) == [] and check_constraints(inst, one) == []
    assert seen_reject


def test_prices_document_redraws_the_final_prices() -> None:
    rng = np.random.default_rng(6)
    inst = tiny_instance(rng, 5)
    algo = Oasis(inst, {"utility_floor": 0.01})
    shown = algo.price_array()  # before any arrival
    after = []
    for job in inst.jobs:
        algo.arrive(job.job_id, job.arrival)
        after.append(algo.price_array())
    doc = algo.report()["prices"]
    assert any(d.get("rebase") for d in doc["decisions"]), "bounds=arrived moved L, U at some arrival"
    assert any(d.get("rebase") and past_columns(d["t"], doc["slot0"], doc["slots"]) for d in doc["decisions"])
    # the slots before a decision's keep the prices they had when they passed (schema /3)
    for k, prices in enumerate(after):  # every decision, rebases included
        past = past_columns(doc["decisions"][k]["t"], doc["slot0"], doc["slots"])
        shown[:, :, past:] = prices[:, :, past:]
        for r, resource in enumerate(doc["resources"]):
            assert np.allclose(matrix_at(doc, k, resource), shown[r], rtol=1e-6, atol=1e-9)
    assert doc["schema"] == "mlsched.prices/3" and doc["label"] == "p/q"
    assert "declined" not in doc  # a job OASiS does not admit is rejected for good
    assert doc["pools"] == ["worker"] * 3 + ["ps"] * 2
    last = past_columns(doc["decisions"][-1]["t"], doc["slot0"], doc["slots"])
    final = algo.price_array()
    for r, resource in enumerate(doc["resources"]):
        matrix = matrix_at(doc, len(doc["decisions"]) - 1, resource)
        assert np.allclose(matrix[:, last:], final[r][:, last:], rtol=1e-6, atol=1e-9)


def test_preset_run_validates_and_meets_3_6_7_per_slot() -> None:
    files = presets.build("oasis", jobs=25, seed=3, size=0.2)
    cluster = parse_cluster(files.cluster)
    inst = Instance(cluster, tuple(sorted(parse_trace(files.trace, cluster), key=lambda j: (j.arrival, j.job_id))))
    doc = api.run(inst, "oasis")
    assert validate(inst, doc) == []
    assert check_constraints(inst, doc) == []
    assert 0 < doc["metrics"]["admitted"] <= 25
    assert doc["metrics"]["total_utility"] > 0
    # the number of workers of some job changes between slots (dynamic scaling)
    counts: dict[str, set[int]] = {}
    for p in doc["placements"]:
        if p["role"] == "worker":
            counts.setdefault(p["job_id"], set()).add(p["count"])
    assert any(len(c) > 1 for c in counts.values())


def test_rejects_instances_outside_its_model() -> None:
    files = presets.build("demo", jobs=3, seed=0)
    cluster = parse_cluster(files.cluster)
    inst = Instance(cluster, parse_trace(files.trace, cluster))
    with pytest.raises(UnsupportedInstance, match="oasis needs"):
        registry.get("oasis").build(inst, registry.get("oasis").parse_params({}), 0)


# ---- restart costs (docs/algorithms-oasis.md, "Restart cost") ---------------------------------


def test_delivered_follows_the_engines_restart_rule_on_a_hand_plan() -> None:
    from scheduling.algorithms.oasis.dp import Schedule
    from scheduling.algorithms.oasis.online import delivered

    two, split = ((2, 0), (1,)), ((1, 1), (1,))
    # slot 0 first start (free), 1 the same, 2 a change (restart), 3 nothing, 4 a resume on the same (restart)
    plan = Schedule(4, 0.0, 0.0, {0: two, 1: two, 2: split, 4: split})
    assert delivered(plan, 1.0, 0, 0.0) == 8.0  # no restart cost: every planned unit
    assert delivered(plan, 1.0, 1, 0.75) == 2 + 2 + 2 * 0.75 + 2 * 0.75  # x = 1/4 slot lost per restart
    assert delivered(plan, 1.0, 1, 0.0) == 4.0  # a whole slot lost per restart
    # a change inside a 2-slot restart period ends it and starts another one
    assert delivered(Schedule(2, 0.0, 0.0, {0: two, 1: split, 2: two}), 1.0, 2, 0.5) == 2 + 0 + 0


def test_under_a_restart_cost_every_admitted_job_completes_its_plan() -> None:
    # Plans for exactly D_i units end short under the 30-s restarts (a job never completed before
    # oasis planned for them); the plan's own restarts are now part of its workload and its payoff.
    inst = _preset_instance("oasis", 30, 2, 0.3)
    assert inst.cluster.restart_seconds == 30
    doc = api.run(inst, "oasis", seed=2)
    assert validate(inst, doc) == []
    m = doc["metrics"]
    assert m["restarts"] > 0 and m["completed"] == m["admitted"] > 0
    planned = doc["oasis"]["planned"]
    assert any(p.get("restart_units", 0) > 0 for p in planned.values())
    free = api.run(inst, "oasis", seed=2, restart_seconds=0)
    assert not any("restart_units" in p for p in free["oasis"]["planned"].values())
    assert free["metrics"]["completed"] == free["metrics"]["admitted"]


def _preset_instance(name: str, jobs: int, seed: int, size: float) -> Instance:
    files = presets.build(name, jobs=jobs, seed=seed, size=size)
    cluster = parse_cluster(files.cluster)
    return Instance(cluster, parse_trace(files.trace, cluster))
