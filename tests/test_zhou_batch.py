"""Fig. 8's two algorithms on the offline batch problem (7): `zhou-maxweight` (A_maxweight, Alg. 3,
alone) and `jain-greedy` (Jain et al.'s greedy), as engine algorithms whose results the validator
checks (scheduling/algorithms/zhou/batch.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from scheduling import api, presets
from scheduling.algorithms.zhou.duals import Duals
from scheduling.algorithms.zhou.online import Params, Zhou
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance
from tests.test_zhou_baselines import cluster, ps_job


def timeline(doc: dict[str, Any]) -> dict[str, tuple[int | None, int | None]]:
    return {j["job_id"]: (j["start"], j["completion"]) for j in doc["jobs"]}


def two_jobs(weights: tuple[float, float]) -> Instance:
    """One 4-GPU server; each job takes at most 2 one-GPU workers and then 4 slots."""
    c = cluster([{"gpu": 4, "cpu": 8}])
    a, b = (ps_job(c, job_id=name, weight=w, chunks=2, epochs=4) for name, w in zip("ab", weights, strict=True))
    return Instance(c, (a, b))


def test_the_greedy_takes_the_denser_job_first_and_rejects_what_misses_the_deadline() -> None:
    # Two 4-slot jobs that cannot run side by side on 2 GPUs: with tau = 8 the second would end at
    # slot 8, past the last usable slot (tau - 1, docs/algorithms-zhou.md item 1), so it is rejected.
    c = cluster([{"gpu": 2, "cpu": 8}])
    inst = Instance(c, (ps_job(c, job_id="a", weight=1), ps_job(c, job_id="b", weight=5)))
    doc = api.run(inst, "jain-greedy", {"tau": 8})
    assert timeline(doc) == {"a": (None, None), "b": (0, 4)}  # b is denser (same size, 5x the weight)
    assert doc["batch"]["rejected"] == ["a"] and doc["batch"]["batches"] == [{"t": 0, "jobs": 2, "scheduled": 1}]
    # A_maxweight takes the batch in arrival order: a first, at zero prices.
    assert timeline(api.run(inst, "zhou-maxweight", {"tau": 8})) == {"a": (0, 4), "b": (None, None)}
    # With one slot more both fit, one after the other.
    assert timeline(api.run(inst, "jain-greedy", {"tau": 9})) == {"a": (4, 8), "b": (0, 4)}


def test_maxweight_turns_away_a_job_whose_priced_cost_exceeds_its_weight_the_greedy_does_not() -> None:
    # tau = 6: b must share slots with a (half the GPUs taken, delta = lambda^0.5 - 1 per GPU-slot),
    # so u_b = 1 - cost < 0 (Alg. 3 line 9); the greedy places it beside a.
    inst = two_jobs((5.0, 1.0))
    doc = api.run(inst, "zhou-maxweight", {"tau": 6})
    assert timeline(doc) == {"a": (0, 4), "b": (None, None)}
    assert doc["batch"]["lambda"] == pytest.approx(2 * 300 * 1 * 2 * 1 + 1)  # 2 T H R F + 1, R = gpu, cpu
    assert [d["job"] for d in doc["prices"]["decisions"]] == ["a", "b"]
    assert "declined" not in doc["prices"]  # b's admitted=false is final here: a rejection
    assert timeline(api.run(inst, "jain-greedy", {"tau": 6})) == {"a": (0, 4), "b": (0, 4)}
    # With room after a, b's schedule costs nothing and is taken.
    assert timeline(api.run(inst, "zhou-maxweight", {"tau": 12})) == {"a": (0, 4), "b": (4, 8)}
    # A weight above the price admits it, in the cheapest window: overlapping a for 3 slots, not 4
    # (the greedy's earliest-completing window is (0, 4)).
    assert timeline(api.run(two_jobs((5.0, 1e4)), "zhou-maxweight", {"tau": 6})) == {"a": (0, 4), "b": (1, 5)}


def preset_batch(jobs: int, seed: int) -> Instance:
    files = presets.build("zhou-ps", jobs=jobs, seed=seed, size=0.1)
    c = parse_cluster(files.cluster)
    trace = parse_trace(files.trace, c, files.trace_name)
    return Instance(c, tuple(dataclasses.replace(j, arrival=0) for j in trace))


@pytest.mark.parametrize("seed", [0, 1])
def test_maxweight_completes_exactly_the_jobs_alg3_admits_in_one_call(seed: int) -> None:
    inst, tau = preset_batch(12, seed), 40
    doc = api.run(inst, "zhou-maxweight", {"tau": tau})  # validated, (2i) included
    zhou = Zhou(
        inst, Params(F=1.0, lam=0.0, T=300, alpha=0, order="arrival", start="early", ra_order="ascending", fast=True)
    )
    shape = (len(zhou.resources), len(zhou.server_ids), tau)
    duals = Duals(zhou.capacity, zhou.worker_ok, zhou.ps_ok, zhou.lam, np.zeros(shape), zhou.p.tie)
    chosen = zhou.a_maxweight(list(inst.jobs), duals, tau, lambda *_: None)
    done = {j["job_id"] for j in doc["jobs"] if j["completion"] is not None}
    assert done == set(chosen) and 0 < len(done) < len(inst.jobs)
    assert all(j["completion"] <= tau - 1 for j in doc["jobs"] if j["completion"] is not None)
    assert {j: doc["batch"]["jobs"][j]["start"] for j in done} == {j: p.start for j, p in chosen.items()}


def test_later_batches_use_only_what_earlier_batches_left() -> None:
    # Jobs arriving at 0 and at 2 on the same 2-GPU server: the second batch may not overbook the
    # first's window (the validator would reject the run) and starts after it.
    c = cluster([{"gpu": 2, "cpu": 8}])
    inst = Instance(c, (ps_job(c, job_id="a"), ps_job(c, job_id="b", arrival=2)))
    for algo in ("jain-greedy", "zhou-maxweight"):
        doc = api.run(inst, algo, {"tau": 20})
        assert timeline(doc) == {"a": (0, 4), "b": (4, 8)}, algo
        assert [b["t"] for b in doc["batch"]["batches"]] == [0, 2]
    # zhou-maxweight's price log (doc, the last run) is in absolute slots: b's decision at slot 2
    # raised the prices of its window, slots 4-7 (sub-round slots 2-5 of the batch that starts at 2),
    # to those a's raised in 0-3.
    slots = [sorted({s for c in d["changes"] for s in range(c[2], c[2] + c[3])}) for d in doc["prices"]["decisions"]]
    decisions = [(d["t"], d["job"], s) for d, s in zip(doc["prices"]["decisions"], slots, strict=True)]
    assert decisions == [(0, "a", [0, 1, 2, 3]), (2, "b", [4, 5, 6, 7])]
    values = [sorted({(c[0], c[4]) for c in d["changes"]}) for d in doc["prices"]["decisions"]]
    assert values[0] == values[1] and values[0][0] == (0, 2 * 300 * 1 * 2 * 1)  # gpu full: lambda - 1


def test_the_greedy_takes_the_earliest_completing_of_both_subroutines() -> None:
    # Alg. 5 (one server) fits 2 workers and ends at 4; Alg. 4 spreads 4 workers over both servers
    # (PS on s0, 2 remote 1-Gbps workers on a 2-Gbps PS, (2i)) and ends at 2. At zero prices both
    # cost 0, and the greedy, like A_maxweight's lines 5-7 under tie=completion, keeps the earlier.
    c = cluster([{"gpu": 2, "cpu": 8}, {"gpu": 2, "cpu": 8}])
    inst = Instance(c, (ps_job(c, job_id="a"),))
    for algo in ("jain-greedy", "zhou-maxweight"):
        doc = api.run(inst, algo, {"tau": 20})
        assert timeline(doc) == {"a": (0, 2)}, algo
        workers = {p["server"]: p["count"] for p in doc["placements"] if p["role"] == "worker"}
        assert workers == {"s0": 2, "s1": 2}, algo


def test_zero_weight_jobs_run_only_where_they_cost_nothing_under_maxweight_and_wherever_they_fit_in_the_greedy() -> (
    None
):
    # docs/algorithms-zhou.md item 9: u_j = 0, so only a free schedule is taken.
    inst = two_jobs((0.0, 0.0))
    assert timeline(api.run(inst, "zhou-maxweight", {"tau": 12})) == {"a": (0, 4), "b": (4, 8)}
    doc = api.run(inst, "zhou-maxweight", {"tau": 6})  # b could only share a's slots, at a price
    assert timeline(doc) == {"a": (0, 4), "b": (None, None)} and doc["batch"]["rejected"] == ["b"]
    assert timeline(api.run(inst, "jain-greedy", {"tau": 6})) == {"a": (0, 4), "b": (0, 4)}


@pytest.mark.parametrize("algo", ["zhou", "zhou-maxweight", "jain-greedy"])
def test_a_trace_may_mix_ps_and_allreduce_jobs(algo: str) -> None:
    # Every other zhou-ps job made all-reduce (one U_j for eq. (14)): each kind gets its own
    # subroutines (Algs. 4/5 with PSs, Algs. 6/7 without), every job completes, the run validates.
    files = presets.build("zhou-ps", jobs=12, seed=3, size=0.1)
    c = parse_cluster(files.cluster)
    trace = parse_trace(files.trace, c, files.trace_name)
    jobs = [
        dataclasses.replace(j, arch="allreduce", ps_update={"*": 2e-5}) if i % 2 else j for i, j in enumerate(trace)
    ]
    doc = api.run(Instance(c, tuple(jobs)), algo)
    assert doc["metrics"]["completed"] == 12
    roles: dict[str, set[str]] = {}
    for p in doc["placements"]:
        roles.setdefault(p["job_id"], set()).add(p["role"])
    assert {j.job_id: roles[j.job_id] for j in jobs} == {
        j.job_id: {"worker"} if j.arch == "allreduce" else {"worker", "ps"} for j in jobs
    }
