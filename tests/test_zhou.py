"""Zhou et al. (seeds/002): price function (11), A_mincost1/2 and A_RAmincost1/2 on hand-worked
cases, the bandwidth constraint (13d), doubling rounds, price log (the numpy path against the
transcription: tests/twins/zhou.py)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
import pytest

from scheduling import api, presets, registry
from scheduling.algorithms.zhou import fast, mincost, online
from scheduling.algorithms.zhou.duals import Plan, price
from scheduling.algorithms.zhou.online import _is_round, _next_round
from scheduling.algorithms.zhou.pricelog import SparsePriceLog
from scheduling.algorithms.zhou.spec import job_spec
from scheduling.errors import InputError
from scheduling.loaders import cluster_from_dict, job_from_row, parse_cluster, parse_trace
from scheduling.model import Cluster, Instance, Job
from scheduling.prices import PriceLog
from scheduling.validator import validate
from tests.twins.zhou import duals, random_instance


def cluster(servers: list[dict[str, float]], worker_bw: float = 1.0, ps_bw: float = 2.0) -> Cluster:
    """One worker type (1 GPU, 1 CPU) and one PS type (1 CPU); slots of 1 s; bandwidths in Gbps."""
    return cluster_from_dict(
        {
            "slot_seconds": 1,
            "resources": ["gpu", "cpu"],
            "servers": [{"id": f"s{i}", "capacity": c} for i, c in enumerate(servers)],
            "worker_types": [{"id": "w", "demand": {"gpu": 1, "cpu": 1}, "bandwidth_gbps": worker_bw}],
            "ps_types": [{"id": "p", "demand": {"cpu": 1}, "bandwidth_gbps": ps_bw}],
        }
    )


def job(c: Cluster, **row: Any) -> Job:
    """Mini-batch time 1 s, no PS update time, no gradient traffic unless given."""
    base = {"job_id": "j", "arrival": 0, "epochs": 1, "chunks": 4, "minibatches": 1, "batch_time": 1}
    return job_from_row({**base, **row}, c)


# ---- eq. (11) -----------------------------------------------------------------------------------


def test_price_is_zero_when_idle_and_lambda_minus_one_when_full() -> None:
    cap = np.array([[4.0]])
    beta = np.array([[[0.0, 2.0, 4.0]]])
    assert price(beta, cap, lam=9.0).tolist() == [[[0.0, 2.0, 8.0]]]  # 9^0 - 1, 9^0.5 - 1, 9^1 - 1


def test_committing_a_plan_raises_beta_and_delta_on_its_window_only() -> None:
    c = cluster([{"gpu": 4, "cpu": 4}])
    d = duals(c, 4)
    plan = Plan(0.0, 1, 2, "w", "p", ((0, 2),), ((0, 1),), True)
    d.commit(plan, np.array([1.0, 1.0]), np.array([0.0, 1.0]))
    assert d.beta[:, 0, :].tolist() == [[0, 2, 2, 0], [0, 3, 3, 0]]
    assert d.delta[0, 0, 1] == pytest.approx(9**0.5 - 1)
    assert d.delta[1, 0, 2] == pytest.approx(9**0.75 - 1)
    assert d.delta[:, 0, 0].tolist() == [0.0, 0.0]


# ---- A_mincost2 / A_mincost1 (PS) -----------------------------------------------------------------


def test_mincost2_at_zero_prices_takes_the_shortest_window_at_the_earliest_start() -> None:
    # 4 chunks of 1 mini-batch, rho = 1/slot: L = 1 with 4 workers needs 4 GPUs + 5 CPUs on one server.
    c = cluster([{"gpu": 2, "cpu": 8}, {"gpu": 4, "cpu": 8}])
    spec = job_spec(c, job(c))
    plan = mincost.a_mincost2(spec, duals(c, 4), tau=4)
    assert plan == Plan(0.0, 0, 1, "w", "p", ((1, 4),), ((1, 1),), True)


def test_mincost2_moves_to_the_cheaper_server_once_prices_rise() -> None:
    c = cluster([{"gpu": 4, "cpu": 8}, {"gpu": 4, "cpu": 8}])
    beta = np.zeros((2, 2, 4))
    beta[:, 0, :] = 1.0  # server s0 is partly used in every slot, s1 is idle
    plan = mincost.a_mincost2(job_spec(c, job(c, chunks=2)), duals(c, 4, beta=beta), tau=4)
    assert plan is not None and plan.workers == ((1, 2),) and plan.cost == 0.0


def test_mincost1_places_the_ps_where_its_bandwidth_covers_the_remote_workers() -> None:
    # Three servers with 2 GPUs each; N_j = 4 workers at L = 1 (no co-location possible). Worker
    # bandwidth 1, PS bandwidth 2: with g workers next to the PSs, (13d) needs ceil((4 - g)/2) PSs.
    c = cluster([{"gpu": 2, "cpu": 3}, {"gpu": 2, "cpu": 2}, {"gpu": 2, "cpu": 2}], worker_bw=1, ps_bw=2)
    spec = job_spec(c, job(c))
    assert mincost.a_mincost2(spec, duals(c, 2), tau=2) is None  # no server holds 4 workers
    plan = mincost.a_mincost1(spec, duals(c, 2), tau=2)  # tau = 2: only L = 1 fits
    # n = s0 first: g = 2 workers there leave 1 CPU, enough for ceil(2/2) = 1 PS; two on s1.
    assert plan == Plan(0.0, 0, 1, "w", "p", ((0, 2), (1, 2)), ((0, 1),), False)


def test_mincost1_needs_more_pss_when_the_ps_bandwidth_is_small() -> None:
    # PS bandwidth 1 = worker bandwidth: 2 remote workers need 2 PSs; s0 has room for 2 workers and 1 PS
    # only, so g = 1 worker stays next to the PSs: ceil(3/1) = 3 PSs do not fit either; g = 2 needs 2
    # PSs (cpu 2 + 2 > 3): the PSs go where the CPUs are.
    c = cluster([{"gpu": 2, "cpu": 3}, {"gpu": 2, "cpu": 2}, {"gpu": 0, "cpu": 8}], worker_bw=1, ps_bw=1)
    plan = mincost.a_mincost1(job_spec(c, job(c)), duals(c, 2), tau=2)
    assert plan is not None
    assert plan.ps == ((2, 4),)  # every worker is remote to s2: 4 x 1 <= 4 x 1
    assert sum(n for _, n in plan.workers) == 4


def test_mincost_returns_nothing_when_no_window_fits_before_the_deadline() -> None:
    c = cluster([{"gpu": 1, "cpu": 8}])
    spec = job_spec(c, job(c, chunks=1, minibatches=5))  # one worker, 5 slots
    assert mincost.a_mincost2(spec, duals(c, 5), tau=5) is None  # needs t^- + 5 <= tau - 1
    assert mincost.a_mincost2(spec, duals(c, 6), tau=6) is not None


# ---- A_RAmincost1 / A_RAmincost2 -------------------------------------------------------------------


def test_ra_mincost_follows_the_printed_worker_count_order_or_its_reverse() -> None:
    c = cluster([{"gpu": 4, "cpu": 8}])
    spec = job_spec(c, job(c, arch="allreduce", chunks=4, minibatches=2))  # 8 mini-batches
    up = mincost.a_ramincost1(spec, duals(c, 10), tau=10, ascending=True)
    down = mincost.a_ramincost1(spec, duals(c, 10), tau=10, ascending=False)
    assert up is not None and up.workers == ((0, 1),) and up.length == 8  # Phi' = 1 first: 8 slots
    assert down is not None and down.workers == ((0, 4),) and down.length == 2


def test_tie_completion_takes_the_earliest_completing_of_equal_cost_schedules() -> None:
    # At zero prices every schedule costs 0; tie=completion prefers the one that ends first (the
    # most workers here), whatever the printed loop order; tie=loop keeps the first in loop order.
    c = cluster([{"gpu": 4, "cpu": 8}])
    spec = job_spec(c, job(c, arch="allreduce", chunks=4, minibatches=2))
    for solve in (mincost.a_ramincost1, lambda s, d, t, a: fast.ra_mincost(s, d, t, True, a)):
        first = solve(spec, duals(c, 10, tie="completion"), 10, True)
        assert first is not None and first.workers == ((0, 4),) and first.end == 2
        loop = solve(spec, duals(c, 10, tie="loop"), 10, True)
        assert loop is not None and loop.workers == ((0, 1),) and loop.end == 8
    # Equal costs, different ends: the later-ending candidate first in loop order loses.
    done = Plan(0.0, 3, 2, "w", None, ((0, 1),), (), True)
    assert mincost.cheaper(0.0, done, end=4, by_end=True) and not mincost.cheaper(0.0, done, end=5, by_end=True)
    assert not mincost.cheaper(0.0, done, end=4, by_end=False) and not mincost.cheaper(1.0, done, end=1, by_end=True)


def test_ra_mincost2_spreads_workers_cheapest_server_first() -> None:
    c = cluster([{"gpu": 2, "cpu": 8}, {"gpu": 2, "cpu": 8}, {"gpu": 2, "cpu": 8}])
    beta = np.zeros((2, 3, 4))
    beta[0, 0, :] = 1.0  # s0 is the most expensive
    spec = job_spec(c, job(c, arch="allreduce", chunks=4))
    plan = mincost.a_ramincost2(spec, duals(c, 4, beta=beta), tau=4, ascending=False)
    assert plan is not None and plan.workers == ((1, 2), (2, 2)) and plan.cost == 0.0


# ---- rounds -------------------------------------------------------------------------------------


def test_rounds_are_at_powers_of_two() -> None:
    assert [t for t in range(20) if _is_round(t)] == [1, 2, 4, 8, 16]
    assert [_next_round(t) for t in (0, 1, 3, 4, 100)] == [1, 2, 4, 8, 128]


def tiny_instance(arch: str = "ps", arrivals: tuple[int, ...] = (0, 3, 5)) -> Instance:
    c = cluster([{"gpu": 4, "cpu": 8}, {"gpu": 4, "cpu": 8}])
    rows = [
        {
            "job_id": f"j{i}",
            "arrival": a,
            "arch": arch,
            "epochs": 2,
            "chunks": 2,
            "minibatches": 3,
            "batch_time": 1,
            "weight": 10 + i,
        }
        for i, a in enumerate(arrivals)
    ]
    jobs = [job_from_row(r, c) for r in rows]
    return Instance(c, tuple(jobs))


@pytest.mark.parametrize("arch", ["ps", "allreduce"])
def test_a_job_waits_for_the_next_round_and_runs_its_window_unpreempted(arch: str) -> None:
    inst = tiny_instance(arch)
    doc = api.run(inst, "zhou")
    assert validate(inst, doc) == []
    rounds = doc["zhou"]["rounds"]
    assert [r["tau"] for r in rounds][:3] == [1, 2, 4]
    by_id = {j["job_id"]: j for j in doc["jobs"]}
    assert by_id["j1"]["start"] >= 4 and by_id["j2"]["start"] >= 8  # arrivals 3 and 5
    assert all(j["preemptions"] == 0 and j["completion"] is not None for j in doc["jobs"])


@pytest.mark.parametrize("start", ["paper", "early"])
def test_a_round_runs_after_the_previous_rounds_schedule(start: str) -> None:
    doc = api.run(tiny_instance(arrivals=(0, 0, 0, 0, 0, 0, 9, 20)), "zhou", {"start": start})
    rounds = [r for r in doc["zhou"]["rounds"] if r["scheduled"]]
    jobs = doc["zhou"]["jobs"]
    assert len(rounds) >= 2
    for i, r in enumerate(rounds):
        earlier_end = max((j["end"] for j in jobs.values() if j["round"] < doc["zhou"]["rounds"].index(r)), default=0)
        # paper: from (sub-rounds used) x tau_i; early: from tau_i; never before earlier rounds end.
        first = r["subrounds"] * r["tau"] if start == "paper" else r["tau"]
        assert r["start"] == max(first, earlier_end), (i, r)


# ---- prices document ----------------------------------------------------------------------------


def test_sparse_price_log_writes_the_same_document_as_price_log() -> None:
    rng = np.random.default_rng(3)
    full = PriceLog(["gpu", "cpu"], ["a", "b", "c"], 6, label="delta")
    sparse = SparsePriceLog(["gpu", "cpu"], ["a", "b", "c"], 6, label="delta")
    prices = np.zeros((2, 3, 6))
    for step in range(5):
        changes = []
        for _ in range(3):
            r, h, s = int(rng.integers(2)), int(rng.integers(3)), int(rng.integers(6))
            prices[r, h, s] = float(rng.uniform(0, 10))
            changes.append((r, h, s, prices[r, h, s]))
        full.record(step, f"j{step}", True, prices)
        sparse.record_changes(step, f"j{step}", True, changes)
    assert json.dumps(sparse.to_dict()) == json.dumps(full.to_dict())
    worded = SparsePriceLog(["gpu"], ["a"], 2, declined="not scheduled in this sub-round").to_dict()
    assert worded["declined"] == "not scheduled in this sub-round" and "declined" not in full.to_dict()


def test_a_run_on_the_preset_reports_delta_prices_for_every_decision() -> None:
    files = presets.build("zhou-ps", jobs=6, seed=2, size=0.1)
    c = parse_cluster(files.cluster)
    inst = Instance(c, parse_trace(files.trace, c, files.trace_name))
    doc = api.run(inst, "zhou")
    prices = doc["prices"]
    assert prices["schema"] == "mlsched.prices/3" and prices["label"] == "delta"
    assert len(prices["decisions"]) >= len(inst.jobs)
    assert all(len(v["mean"]) == len(prices["decisions"]) for v in prices["summary"].values())
    # a job A_maxweight leaves out of a sub-round is carried over, not rejected: the log says so
    assert prices["declined"] == "not scheduled in this sub-round"


def test_zhou_declines_rigid_jobs() -> None:
    c = cluster([{"gpu": 4, "cpu": 8}])
    inst = Instance(c, (job_from_row({"job_id": "r", "arrival": 0, "gpus": 1, "duration": 5}, c),))
    assert registry.get("zhou").unsupported(inst) is not None


def test_start_early_makes_the_same_decisions_as_paper_and_completes_no_later() -> None:
    inst = tiny_instance(arrivals=(0, 0, 0, 0, 0, 0, 9, 20))
    paper = api.run(inst, "zhou", {"start": "paper"})["zhou"]["jobs"]
    early = api.run(inst, "zhou", {"start": "early"})["zhou"]["jobs"]
    assert paper.keys() == early.keys()
    for job_id, p in paper.items():
        e = early[job_id]
        assert (e["round"], e["end"] - e["start"], e["cost"]) == (p["round"], p["end"] - p["start"], p["cost"])
        assert e["end"] <= p["end"]
    assert any(early[j]["end"] < paper[j]["end"] for j in paper)


def test_a_dropped_price_state_frees_its_tables_without_the_garbage_collector() -> None:
    """A_dual's sub-rounds and _hopeless drop a Duals after filling its numpy tables (tens of MB on
    the presets): they must go with it by reference counting, as numpy arrays never trigger a
    collection (zhou-maxweight on zhou-ps at 200 jobs peaked at 1.4 GB while they waited)."""
    import gc
    import weakref

    c = cluster([{"gpu": 4, "cpu": 8}, {"gpu": 4, "cpu": 8}])
    spec = job_spec(c, job(c, chunks=6))
    gc.disable()
    try:
        d = duals(c, 12)
        for solve in (fast.mincost1, fast.mincost2):
            assert solve(spec, d, 12) is not None  # fills the tables' caches, worker blocks included
        tables = weakref.ref(fast.tables_for(d))
        assert tables() is not None and tables().workers
        del d
        assert tables() is None
    finally:
        gc.enable()


@pytest.mark.parametrize(
    ("algorithm", "params", "slots"), [("zhou", {}, "1,048,576"), ("zhou-maxweight", {"tau": 100_000}, "100,000")]
)
def test_a_sub_round_beyond_the_price_array_bound_is_refused_with_its_size(
    algorithm: str, params: dict, slots: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A late arrival (zhou's next round is 2^20 slots) or a large tau: an error naming the
    sub-round, not an exhausted memory. The bound is lowered so that tiny instances reach it
    (2 servers x 2 resources x 100,000 slots > 200,000 entries)."""
    monkeypatch.setattr(online, "MAX_PRICE_CELLS", 200_000)
    inst = tiny_instance(arrivals=(0, 3, 1_000_000))
    with pytest.raises(InputError, match=f"a sub-round of {slots} slots on 2 servers") as caught:
        api.run(inst, algorithm, params)
    assert "more than the 200,000 this implementation allows" in caught.value.problem
    assert api.run(tiny_instance(arrivals=(0, 3, 1_000)), algorithm, {"tau": 300} if params else {})["metrics"]


@pytest.mark.parametrize("arch", ["ps", "allreduce"])
def test_the_weight_bar_declines_only_jobs_whose_cheapest_schedule_costs_at_least_their_weight(arch: str) -> None:
    """``fast.declines`` (tried by A_maxweight after a job was turned away) says True only where the
    transcription's best schedule is None or fails Alg. 3 line 9; it is tried on weights around the
    best cost, and both answers occur."""
    answers = []
    for seed in range(6):
        rng = np.random.default_rng(500 + seed)
        inst = random_instance(rng, arch)
        c, tau = inst.cluster, 9
        cap = np.array([[s.capacity.get(r, 0.0) for s in c.servers] for r in c.resource_names()])
        beta = np.floor(rng.uniform(0, 1, size=(*cap.shape, tau)) * cap[:, :, None])
        d = duals(c, tau, lam=40.0, beta=beta, tie="completion")
        zhou = online.Zhou(inst, _zhou_params(fast=False))
        for j in inst.jobs:
            best = zhou.best_schedule(job_spec(c, j), d, tau)
            for w in [0.5, 2.0, 8.0] + ([] if best is None else [best.cost * (1 - 1e-12), best.cost, best.cost * 1.01]):
                spec = job_spec(c, dataclasses.replace(j, weight=w))
                said = fast.declines(spec, d, tau, True)
                answers.append(said)
                if said:
                    assert best is None or not (w - best.cost > 0 or best.cost == 0)
    assert True in answers and False in answers


def _zhou_params(**over: Any) -> online.Params:
    from scheduling.algorithms.zhou import _params

    return _params(over)
