"""Twins of Dorm (scheduling/algorithms/oasis/baselines.py): its placement (``Dorm._place``: one or
two round-robin plans per job) against the rule it stands for (``stepwise``: a full try per worker
count, from the MILP's down), at every decision of whole runs and for one job at a time on random
ledgers (the same allocation, ledger and round-robin position); and the sparse MILP it builds
against the dense one, at every solve of a run.

The named cases are those these comparisons were first written with (tests/test_dorm_paths.py
keeps what is not a comparison of two paths)."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import numpy as np
from hypothesis import strategies as st

from scheduling import registry, results
from scheduling.algorithms.oasis.baselines import Dorm
from scheduling.capacity import Ledger
from scheduling.engine import Decision, View, simulate
from scheduling.model import Instance
from scheduling.validator import validate
from tests.scenarios import preset_instance
from tests.twins.core import Twin, first_difference

SPEC = registry.get("dorm")
# The MILP stops at a wall-clock time limit; with time to finish, both runs solve the same problems
# to the same answers (tests/test_lookahead.py PARAMS).
TIME = {"time_limit": "600"}

LAYOUTS: dict[str, tuple[int, int] | None] = {
    "as-generated": None,
    "few-ps-servers": (8, 2),
    "few-worker-servers": (2, 6),
}
DEFAULT: dict[str, str] = {}  # fairness 0.5, adjust 0.5
NO_FAIRNESS = {"fairness": "0", "adjust": "1"}
FULL_FAIRNESS = {"fairness": "1", "adjust": "0.25"}
NO_RESIZING = {"fairness": "0.25", "adjust": "0"}
PARAMS = {"default": DEFAULT, "no-fairness": NO_FAIRNESS, "full-fairness": FULL_FAIRNESS, "no-resizing": NO_RESIZING}


@dataclasses.dataclass(frozen=True)
class Case:
    """The oasis preset's instance (jobs, seed, size) on a server layout, with Dorm's parameters."""

    jobs: int
    seed: int
    size: float
    layout: str = "as-generated"
    params: str = "default"

    def instance(self) -> Instance:
        inst = preset_instance("oasis", self.jobs, self.seed, self.size)
        layout = LAYOUTS[self.layout]
        return inst if layout is None else fewer_servers(inst, *layout)


def fewer_servers(inst: Instance, workers: int, ps: int) -> Instance:
    """The instance on its first ``workers`` worker servers and ``ps`` PS servers: a tight pool, so
    that jobs shrink below the MILP's count (it sees only the pools' summed capacity)."""
    kept = [s for s in inst.cluster.servers if s.pool == "worker"][:workers]
    kept += [s for s in inst.cluster.servers if s.pool == "ps"][:ps]
    return Instance(dataclasses.replace(inst.cluster, servers=tuple(kept)), inst.jobs)


CASES = st.builds(
    Case,
    st.integers(8, 16),
    st.integers(0, 10**6),
    st.sampled_from([0.1, 0.2]),
    st.sampled_from(sorted(LAYOUTS)),
    st.sampled_from(sorted(PARAMS)),
)

# (jobs, seed, size) of the oasis preset, as first written
N20, N24, N30, N30B, N40 = (20, 1, 0.1), (24, 2, 0.2), (30, 3, 0.2), (30, 4, 0.3), (40, 5, 0.2)
NAMED_RUNS = [
    (N20, "as-generated", "default"),
    (N24, "as-generated", "no-fairness"),
    (N30, "as-generated", "full-fairness"),
    (N30B, "as-generated", "no-resizing"),
    (N20, "few-worker-servers", "full-fairness"),
    (N24, "few-worker-servers", "no-resizing"),
    (N30, "few-worker-servers", "default"),
    (N30B, "few-worker-servers", "no-fairness"),
    (N40, "few-worker-servers", "no-resizing"),
    (N20, "few-ps-servers", "no-fairness"),
    (N24, "few-ps-servers", "full-fairness"),
    (N30, "few-ps-servers", "no-resizing"),
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

    def report(self) -> Any:
        return self.inner.report()


def whole_run(stepwise: bool):
    """Every decision (allocations, admissions, rejections) and the validated result document."""

    def go(case: Case) -> tuple[list[Decision], dict[str, Any]]:
        inst = case.instance()
        parsed = SPEC.parse_params({**PARAMS[case.params], **TIME})
        algo = SPEC.build(inst, parsed, 1)
        algo.stepwise = stepwise
        recorder = Recorder(algo)
        doc = results.build(inst, simulate(inst, recorder), "dorm", parsed, 1)
        assert validate(inst, doc) == []
        return recorder.decisions, doc

    return go


def run_features(outcome: tuple[list[Decision], dict[str, Any]]) -> set[str]:
    _, doc = outcome
    jobs = doc["jobs"]
    seen = {"queued"} if any(j["start"] is not None and j["start"] > j["arrival"] for j in jobs) else set()
    return seen | ({"preempted"} if any(j["preemptions"] for j in jobs) else set())


# -- one job at a time, on random ledgers: many more shrinking jobs than whole runs give ----------


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


def one_job(stepwise: bool):
    """150 placements of a random job (n and m drawn up to its worker limit) on random ledgers from
    a random round-robin position: each placement, the ledger after it and the next position."""

    def go(seed: int) -> list[Any]:
        rng = random.Random(seed)
        layout = rng.choice(sorted(LAYOUTS))
        inst = Case(*N40, layout).instance()
        algo = Dorm(inst, SPEC.parse_params(TIME), np.random.default_rng(0))
        algo.stepwise = stepwise
        out = []
        for _ in range(150):
            ledger = random_ledger(inst, rng)
            algo.rr.next = {r: rng.randrange(len(algo.rr.pools[r])) for r in ("worker", "ps")}
            job = rng.choice(inst.jobs)
            n, m = rng.randint(0, job.max_workers()), rng.randint(0, job.max_workers())
            placed = algo._place(ledger, job, n, m)
            used = [ledger.used(s.id, r) for s in inst.cluster.servers for r in inst.cluster.resource_names()]
            out.append((n, placed, used, dict(algo.rr.next)))
        return out

    return go


def one_job_features(outcome: list[Any]) -> set[str]:
    shrunk = sum(
        placed is not None and sum(a.count for a in placed if a.role == "worker") < n for n, placed, _, _ in outcome
    )
    return {"shrunk"} if shrunk > 10 else set()


# -- the sparse MILP -------------------------------------------------------------------------------


def solves(dense: bool):
    """At every solve of a run: the CSC arrays of the constraint matrix (the sparse build, or what
    ``scipy.optimize.milp`` makes of the dense one), the objective, bounds and right-hand sides."""

    def go(case: Case) -> list[Any]:
        from scipy.sparse import csc_array

        inst = case.instance()
        algo = SPEC.build(inst, SPEC.parse_params({**PARAMS[case.params], **TIME}), 1)
        model, seen = algo.model, []

        def recorded(jobs: Any, current: Any, fair: Any) -> Any:
            obj, matrix, hi, bounds = model(jobs, current, fair, dense=dense)
            if dense:
                matrix = csc_array(matrix)
            else:
                assert matrix.has_sorted_indices
            seen.append(
                (
                    matrix.shape,
                    *(getattr(matrix, name).tolist() for name in ("indptr", "indices", "data")),
                    *(np.asarray(a).tolist() for a in (obj, hi, bounds.lb, bounds.ub)),
                )
            )
            return obj, matrix, hi, bounds

        algo.model = recorded
        simulate(inst, algo)
        return seen

    return go


def solve_features(outcome: list[Any]) -> set[str]:
    return {"ten solves"} if len(outcome) >= 10 and any(s[3] for s in outcome) else set()


def same(fast: Any, reference: Any) -> str | None:
    return first_difference(fast, reference, "outcome")


TWINS = [
    Twin(
        "dorm",
        "Dorm._place's round-robin plans vs the stepwise rule: every decision of whole runs",
        CASES,
        whole_run(False),
        whole_run(True),
        same,
        examples=4,
        features=run_features,
        must_see=frozenset({"queued"}),
        named={
            f"oasis-{n}-seed{s}-size{z}-{layout}-{p}": Case(n, s, z, layout, p) for (n, s, z), layout, p in NAMED_RUNS
        },
    ),
    Twin(
        "dorm-one-job",
        "Dorm._place vs the stepwise rule for one job on random ledgers (allocation, ledger, position)",
        st.integers(0, 10**6),
        one_job(False),
        one_job(True),
        same,
        examples=4,
        features=one_job_features,
        must_see=frozenset({"shrunk"}),
        named={f"seed {seed}": seed for seed in range(6)},
    ),
    Twin(
        "dorm-sparse-milp",
        "Dorm.model's sparse constraint matrix vs the dense build, at every solve",
        CASES,
        solves(False),
        solves(True),
        same,
        examples=3,
        features=solve_features,
        must_see=frozenset({"ten solves"}),
        named={
            f"oasis-30-seed3-size0.2-few-worker-servers-{p}": Case(*N30, "few-worker-servers", p)
            for p in ("default", "no-fairness", "full-fairness")
        },
    ),
]
