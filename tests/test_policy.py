"""The author's interface (scheduling/policy.py): order, placement and admission as separate pieces
on the list scheduler; every schedule it gives passes the validator (api.run checks each)."""

from __future__ import annotations

import itertools

import pytest

from scheduling import api, policy, registry
from scheduling.algorithms.priority import fifo_key
from scheduling.errors import InputError
from tests.golden.make_golden import fingerprint, instances, load, old_frame

INSTANCES = dict(instances())


@pytest.fixture
def add(monkeypatch: pytest.MonkeyPatch):
    """Register an entry for this test only."""

    def add(spec: registry.AlgorithmSpec) -> str:
        monkeypatch.setitem(registry.REGISTRY, spec.name, spec)
        return spec.name

    return add


def test_fifo_written_as_an_order_gives_fifos_recorded_schedules(add):
    name = add(policy.list_algorithm("fifo-as-order", "FIFO.", fifo_key, backfill=False))
    recorded = load()
    for inst_name, inst in INSTANCES.items():
        params = old_frame(name, inst, {})  # in the frame the fingerprints were recorded in, as run_case runs fifo
        doc = api.run(inst, name, params, seed=3, restart_seconds=0)
        assert fingerprint(doc) == recorded[f"{inst_name}/fifo"], inst_name


def test_an_admission_rejects_the_jobs_it_refuses_at_arrival_and_they_never_run(add):
    name = add(
        policy.list_algorithm(
            "small-only", "Small jobs only.", lambda job, config: job.job.arrival, admission=lambda j, c: c.workers <= 2
        )
    )
    refused_somewhere = False
    for inst_name, inst in INSTANCES.items():
        doc = api.run(inst, name, {}, seed=3)
        refused = {j["job_id"] for j in doc["jobs"] if not j["admitted"]}
        assert not refused & {p["job_id"] for p in doc["placements"]}, inst_name
        refused_somewhere |= bool(refused)
    assert refused_somewhere


def test_a_preemptive_order_gives_valid_schedules_with_preemptions(add):
    # Least attained service first: a running job falls behind the jobs that have had less.
    name = add(policy.list_algorithm("las", "LAS.", lambda job, config: job.attained_gpu_slots, preemptive=True))
    preemptions = sum(api.run(inst, name, {}, seed=3)["metrics"]["preemptions"] for inst in INSTANCES.values())
    assert preemptions > 0


def test_a_placement_other_than_pool_is_passed_on_or_refused_by_name(add):
    name = add(policy.list_algorithm("packed-first", "Packed.", fifo_key, placement="consolidated"))
    inst = INSTANCES["rigid-40-s11"]
    if policy.placement_available("consolidated"):
        assert api.run(inst, name, {}, seed=3)["params"]["placement"] == "consolidated"
    else:
        with pytest.raises(InputError, match="placement 'consolidated' is not offered"):
            api.run(inst, name, {}, seed=3)
    assert api.run(inst, name, {"placement": "pool"}, seed=3)["params"]["placement"] == "pool"


def test_an_unknown_placement_or_a_bad_name_is_refused_when_declared():
    with pytest.raises(ValueError, match="placement 'nearest'"):
        policy.list_algorithm("x", "X.", fifo_key, placement="nearest")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="letters, digits"):
        registry.register(policy.list_algorithm("two words", "X.", fifo_key))
    with pytest.raises(ValueError, match="already registered"):
        registry.register(policy.list_algorithm("fifo", "X.", fifo_key))


def dlas_through_the_interface(instance, params, rng):  # type: ignore[no-untyped-def]
    """tiresias order=queue written as an order with a memory on list_scheduler, walked in full at
    every event (no change-based path)."""
    from scheduling.algorithms.baselines import parse_thresholds
    from scheduling.algorithms.tiresias import DlasQueues

    order = DlasQueues(instance, parse_thresholds(params["queue_thresholds"]), params["promote_knob"])
    return policy.list_scheduler(instance, params, rng, order, placement=params["placement"], preemptive=True)


def test_tiresias_queue_discipline_as_an_order_with_a_memory_gives_tiresias_recorded_schedules(add):
    tiresias = registry.get("tiresias")
    name = add(
        policy.AlgorithmSpec(
            "dlas-as-order", "DLAS.", "", "", factory=dlas_through_the_interface, params=tiresias.params
        )
    )
    recorded = load()
    for inst_name, inst in INSTANCES.items():
        params = old_frame(name, inst, {})
        doc = api.run(inst, name, params, seed=3, restart_seconds=0)
        assert fingerprint(doc) == recorded[f"{inst_name}/tiresias"], inst_name


class RoundRobin:
    """An author's order with a memory: the jobs that ran go behind the others after each decision,
    which comes back every ``quantum`` slots while a job waits."""

    def __init__(self, quantum: int) -> None:
        self.quantum = quantum
        self.line: list[str] = []
        self.seen: list[int] = []

    def __call__(self, job, config):  # type: ignore[no-untyped-def]
        return self.line.index(job.job.job_id)

    def observe(self, view, config):  # type: ignore[no-untyped-def]
        present = {jv.job.job_id for jv in view.jobs}
        self.line = [j for j in self.line if j in present]
        self.line += [jv.job.job_id for jv in view.jobs if jv.job.job_id not in self.line]
        self.seen.append(view.t)

    def decided(self, view, allocations):  # type: ignore[no-untyped-def]
        ran = {a.job_id for a in allocations}
        self.line = [j for j in self.line if j not in ran] + [j for j in self.line if j in ran]
        return view.t + self.quantum if len(ran) < len(self.line) else None


def test_an_order_with_a_memory_is_told_every_decision_and_its_wake_up_is_kept(add):
    orders: list[RoundRobin] = []

    def make(instance, params, rng):  # type: ignore[no-untyped-def]
        orders.append(RoundRobin(quantum=3))
        return policy.list_scheduler(instance, params, rng, orders[-1], preemptive=True)

    name = add(policy.AlgorithmSpec("round-robin", "RR.", "", "", factory=make, params=policy.WORKER_PARAMS))
    doc = api.run(INSTANCES["rigid-40-s11"], name, {}, seed=3)  # validated by api.run
    assert doc["metrics"]["completed"] == 40 and doc["metrics"]["preemptions"] > 0
    seen = orders[-1].seen
    assert seen == sorted(seen) and any(b - a == 3 for a, b in itertools.pairwise(seen))


def test_an_order_with_a_memory_is_refused_by_list_algorithm_which_would_share_it_between_runs():
    with pytest.raises(ValueError, match="holds one run's state"):
        policy.list_algorithm("rr", "RR.", RoundRobin(quantum=3), preemptive=True)
