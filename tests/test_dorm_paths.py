"""Dorm's placement (``Dorm._place``: one or two round-robin plans per job) chooses the same
workers, PSs and servers as the rule it stands for (``stepwise``: a full try per worker count,
from the MILP's down), at every decision; and a round-robin try that fails leaves the ledger and
the round-robin position exactly as they were."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from scheduling import registry, results
from scheduling.algorithms.oasis.baselines import Dorm, RoundRobin
from scheduling.capacity import Ledger
from scheduling.engine import Decision, View, simulate
from scheduling.loaders import cluster_from_dict
from scheduling.model import Instance, Job
from scheduling.validator import validate
from tests.scenarios import preset_instance

SPEC = registry.get("dorm")
# The MILP stops at a wall-clock time limit; with time to finish, both runs solve the same problems
# to the same answers (tests/test_lookahead.py PARAMS).
TIME = {"time_limit": "600"}


def fewer_servers(inst: Instance, workers: int, ps: int) -> Instance:
    """The instance on its first ``workers`` worker servers and ``ps`` PS servers: a tight pool, so
    that jobs shrink below the MILP's count (it sees only the pools' summed capacity)."""
    kept = [s for s in inst.cluster.servers if s.pool == "worker"][:workers]
    kept += [s for s in inst.cluster.servers if s.pool == "ps"][:ps]
    return Instance(dataclasses.replace(inst.cluster, servers=tuple(kept)), inst.jobs)


# (jobs, seed, size) of the oasis preset; server layouts; Dorm's parameters.
INSTANCES = {
    "oasis-20-seed1-size0.1": (20, 1, 0.1),
    "oasis-24-seed2-size0.2": (24, 2, 0.2),
    "oasis-30-seed3-size0.2": (30, 3, 0.2),
    "oasis-30-seed4-size0.3": (30, 4, 0.3),
    "oasis-40-seed5-size0.2": (40, 5, 0.2),
}
LAYOUTS = {"as-generated": None, "few-ps-servers": (8, 2), "few-worker-servers": (2, 6)}
DEFAULT: dict[str, str] = {}  # fairness 0.5, adjust 0.5
NO_FAIRNESS = {"fairness": "0", "adjust": "1"}
FULL_FAIRNESS = {"fairness": "1", "adjust": "0.25"}
NO_RESIZING = {"fairness": "0.25", "adjust": "0"}
CASES = [  # a few seconds each (the MILPs of long queues take most of it)
    ("oasis-20-seed1-size0.1", "as-generated", DEFAULT),
    ("oasis-24-seed2-size0.2", "as-generated", NO_FAIRNESS),
    ("oasis-30-seed3-size0.2", "as-generated", FULL_FAIRNESS),
    ("oasis-30-seed4-size0.3", "as-generated", NO_RESIZING),
    ("oasis-20-seed1-size0.1", "few-worker-servers", FULL_FAIRNESS),
    ("oasis-24-seed2-size0.2", "few-worker-servers", NO_RESIZING),
    ("oasis-30-seed3-size0.2", "few-worker-servers", DEFAULT),
    ("oasis-30-seed4-size0.3", "few-worker-servers", NO_FAIRNESS),
    ("oasis-40-seed5-size0.2", "few-worker-servers", NO_RESIZING),
    ("oasis-20-seed1-size0.1", "few-ps-servers", NO_FAIRNESS),
    ("oasis-24-seed2-size0.2", "few-ps-servers", FULL_FAIRNESS),
    ("oasis-30-seed3-size0.2", "few-ps-servers", NO_RESIZING),
]


class Recorder:
    """Passes the views to Dorm and keeps every decision."""

    def __init__(self, inner: Dorm) -> None:
        self.inner = inner
        self.decisions: list[Decision] = []

    def decide(self, view: View) -> Decision:
        decision = self.inner.decide(view)
        self.decisions.append(decision)
        return decision

    def report(self):
        return self.inner.report()


class FailedTries:
    """Counts the stepwise rule's failed tries by the part that did not fit (``rr.place`` wrapped)."""

    def __init__(self, rr: RoundRobin) -> None:
        self.rr, self.place = rr, rr.place
        self.workers = self.ps = 0
        rr.place = self  # type: ignore[method-assign]

    def __call__(self, ledger, job, parts):
        workers, _ps = self.rr.plan(ledger, job, parts)
        placed = self.place(ledger, job, parts)
        if placed is None and len(workers) < parts[0][1]:
            self.workers += 1
        elif placed is None:
            self.ps += 1
        return placed


def instance(name: str, layout: str) -> Instance:
    inst = preset_instance("oasis", *INSTANCES[name])
    return inst if LAYOUTS[layout] is None else fewer_servers(inst, *LAYOUTS[layout])


def run(inst: Instance, params: dict[str, str], stepwise: bool):
    """Every decision, the result document and the failed tries (of the stepwise rule) of one run."""
    parsed = SPEC.parse_params({**params, **TIME})
    algo = SPEC.build(inst, parsed, 1)
    algo.stepwise = stepwise
    tries = FailedTries(algo.rr)
    recorder = Recorder(algo)
    doc = results.build(inst, simulate(inst, recorder), "dorm", parsed, 1)
    assert validate(inst, doc) == []
    return recorder.decisions, doc, tries


@pytest.mark.parametrize(
    ("name", "layout", "params"), CASES, ids=[f"{n}-{lay}-{','.join(p.values()) or 'default'}" for n, lay, p in CASES]
)
def test_the_plans_place_as_the_stepwise_rule_at_every_decision(name, layout, params):
    inst = instance(name, layout)
    fast, fast_doc, _ = run(inst, params, stepwise=False)
    rule, rule_doc, _ = run(inst, params, stepwise=True)
    assert fast == rule  # allocations, admissions and rejections of every decision
    assert fast_doc == rule_doc


def test_the_stepwise_rule_shrinks_jobs_for_want_of_workers_and_of_ps_room():
    # What the plans must get right: jobs that the MILP sizes beyond what round-robin places,
    # limited by the worker pool in some tries and by the PS pool in others.
    workers = ps = 0
    for layout in sorted(LAYOUTS):
        _, _, tries = run(instance("oasis-30-seed3-size0.2", layout), {}, stepwise=True)
        workers += tries.workers
        ps += tries.ps
    assert workers > 0 and ps > 0


# ---- One job at a time, on random ledgers: many more shrinking jobs than whole runs give ------


def random_ledger(inst: Instance, rng: random.Random) -> Ledger:
    """The cluster with a random share of it taken by instances of random jobs."""
    ledger = Ledger(inst.cluster)
    for _ in range(rng.randint(0, 60)):
        job = rng.choice(inst.jobs)
        role = rng.choice(["worker", "ps"])
        demand = job.worker_demand if role == "worker" else job.ps_demand
        servers = [s.id for s in inst.cluster.servers if s.pool == role]
        ledger.take(rng.choice(servers), role, demand or {}, rng.randint(1, 3))
    return ledger


def used(ledger: Ledger, inst: Instance) -> list[float]:
    return [ledger.used(s.id, r) for s in inst.cluster.servers for r in inst.cluster.resource_names()]


@pytest.mark.parametrize("seed", range(6))
def test_one_job_placed_on_a_random_ledger_as_the_stepwise_rule(seed):
    rng = random.Random(seed)
    inst = instance("oasis-40-seed5-size0.2", rng.choice(sorted(LAYOUTS)))
    params = SPEC.parse_params(TIME)
    fast, rule = Dorm(inst, params, np.random.default_rng(0)), Dorm(inst, params, np.random.default_rng(0))
    rule.stepwise = True
    shrunk = 0
    for _ in range(150):
        ledger = random_ledger(inst, rng)
        start = {r: rng.randrange(len(fast.rr.pools[r])) for r in ("worker", "ps")}
        fast.rr.next, rule.rr.next = dict(start), dict(start)
        job = rng.choice(inst.jobs)
        n, m = rng.randint(0, job.max_workers()), rng.randint(0, job.max_workers())
        mine, theirs = ledger.copy(), ledger.copy()
        placed = fast._place(mine, job, n, m)
        assert placed == rule._place(theirs, job, n, m)
        assert used(mine, inst) == used(theirs, inst)
        assert fast.rr.next == rule.rr.next
        shrunk += placed is not None and sum(a.count for a in placed if a.role == "worker") < n
    assert shrunk > 10


# ---- A failed try changes nothing ---------------------------------------------------------------


def test_a_failed_round_robin_try_leaves_the_ledger_bit_for_bit():
    # Releasing what a failed try booked would subtract 0.1 three times from 0.4 = 0.1 + 3 x 0.1
    # and leave 0.10000000000000003, not 0.1: the PS pool here is too small for the try's PSs.
    cluster = cluster_from_dict(
        {
            "slot_seconds": 60,
            "resources": ["bw"],
            "servers": [
                {"id": "w", "pool": "worker", "capacity": {"bw": 1.0}},
                {"id": "p", "pool": "ps", "capacity": {"bw": 0.3}},
            ],
        }
    )
    job = Job(job_id="j", arrival=0, worker_demand={"bw": 0.1}, ps_demand={"bw": 0.2})
    rr = RoundRobin(cluster)
    ledger = Ledger(cluster)
    assert rr.place(ledger, job, [("worker", 1), ("ps", 1)]) is not None
    before, position = (ledger.used("w", "bw"), ledger.used("p", "bw")), dict(rr.next)
    assert rr.place(ledger, job, [("worker", 3), ("ps", 1)]) is None  # 0.2 + 0.2 > 0.3 on p
    assert (ledger.used("w", "bw"), ledger.used("p", "bw")) == before == (0.1, 0.2)
    assert rr.next == position
    assert rr.place(ledger, job, [("worker", 3), ("ps", 0)]) is not None
    assert ledger.used("w", "bw") == 0.1 + 0.1 + 0.1 + 0.1  # the sums of instance-by-instance takes


@pytest.mark.parametrize(
    "params", [DEFAULT, NO_FAIRNESS, FULL_FAIRNESS], ids=["default", "no-fairness", "full-fairness"]
)
def test_the_sparse_milp_is_the_dense_one_highs_receives_at_every_solve(params):
    """``Dorm.model`` builds its constraint matrix from the non-zero entries: at every solve of a
    run, the same CSC arrays (what ``scipy.optimize.milp`` makes of the dense matrix) and the same
    objective, bounds and right-hand sides as the dense build."""
    from scipy.sparse import csc_array

    inst = instance("oasis-30-seed3-size0.2", "few-worker-servers")
    algo = SPEC.build(inst, SPEC.parse_params({**params, **TIME}), 1)
    model, compared = algo.model, []

    def both(jobs, current, fair, dense=False):
        obj, matrix, hi, bounds = model(jobs, current, fair)
        d_obj, d_matrix, d_hi, d_bounds = model(jobs, current, fair, dense=True)
        want = csc_array(d_matrix)
        assert matrix.shape == want.shape and matrix.has_sorted_indices
        for name in ("indptr", "indices", "data"):
            assert np.array_equal(getattr(matrix, name), getattr(want, name)), name
        assert np.array_equal(obj, d_obj) and np.array_equal(hi, d_hi)
        assert np.array_equal(bounds.lb, d_bounds.lb) and np.array_equal(bounds.ub, d_bounds.ub)
        compared.append(matrix.nnz)
        return obj, matrix, hi, bounds

    algo.model = both
    simulate(inst, algo)
    assert len(compared) >= 10 and max(compared) > 0
