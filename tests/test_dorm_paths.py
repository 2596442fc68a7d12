"""What Dorm's placement must get right, beyond the comparisons of its paths (tests/twins/dorm.py:
the round-robin plans against the stepwise rule, the sparse MILP against the dense one): the
stepwise rule meets jobs it must shrink, and a round-robin try that fails leaves the ledger and the
round-robin position exactly as they were."""

from __future__ import annotations

from scheduling import results
from scheduling.algorithms.oasis.baselines import RoundRobin
from scheduling.capacity import Ledger
from scheduling.engine import simulate
from scheduling.loaders import cluster_from_dict
from scheduling.model import Job
from scheduling.validator import validate
from tests.twins.dorm import LAYOUTS, N30, SPEC, TIME, Case


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


def test_the_stepwise_rule_shrinks_jobs_for_want_of_workers_and_of_ps_room():
    # What the plans must get right: jobs that the MILP sizes beyond what round-robin places,
    # limited by the worker pool in some tries and by the PS pool in others.
    workers = ps = 0
    for layout in sorted(LAYOUTS):
        inst = Case(*N30, layout).instance()
        parsed = SPEC.parse_params(TIME)
        algo = SPEC.build(inst, parsed, 1)
        algo.stepwise = True
        tries = FailedTries(algo.rr)
        assert validate(inst, results.build(inst, simulate(inst, algo), "dorm", parsed, 1)) == []
        workers += tries.workers
        ps += tries.ps
    assert workers > 0 and ps > 0


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
