"""The change-based paths (fifo, srtf, tiresias; drf on rigid traces) give the same schedule as
the full transcriptions they replace."""

from __future__ import annotations

import dataclasses
import random

import pytest

from scheduling import registry
from scheduling.algorithms.baselines import fixed_configs
from scheduling.algorithms.common import Config, place
from scheduling.algorithms.priority import ListScheduler, _Queues, evict_until_fit, fifo_key
from scheduling.capacity import Ledger
from scheduling.engine import simulate
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import RIGID_WORKER_TYPE, Instance
from tests.golden.make_golden import RIGID_CLUSTER, rigid_trace
from tests.scenarios import preset_instance


def rigid(seed: int) -> Instance:
    cluster = cluster_from_dict(RIGID_CLUSTER)
    return Instance(cluster, parse_trace(rigid_trace(seed, 60), cluster, "trace.csv", "csv"))


# Rigid jobs (srtf's anchored running order), and elastic PS / all-reduce / multi-resource jobs
# on preset clusters small enough that evictions happen (srtf's refreshed running order).
INSTANCES = {
    "rigid-21": lambda: rigid(21),
    "rigid-22": lambda: rigid(22),
    "rigid-23": lambda: rigid(23),
    "demo": lambda: preset_instance("demo", 16, 9),
    "zhou-ps": lambda: preset_instance("zhou-ps", 14, 4),
    "zhou-allreduce": lambda: preset_instance("zhou-allreduce", 14, 5),
    "oasis": lambda: preset_instance("oasis", 16, 6, 0.2),
    "edge-cloud": lambda: preset_instance("edge-cloud", 16, 7, 0.1),
}
CASES = [
    ("fifo", {}),
    ("fifo", {"backfill": "true"}),
    ("srtf", {}),
    ("srtf", {"ties": "arrival"}),
    ("tiresias", {"order": "start", "queue_thresholds": "600,3000"}),
    ("drf", {}),
]


@pytest.mark.parametrize("restart_seconds", [0.0, 120.0])
@pytest.mark.parametrize(("algorithm", "params"), CASES)
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_the_change_based_path_schedules_as_the_full_walk(name, algorithm, params, restart_seconds):
    inst = INSTANCES[name]()
    spec = registry.get(algorithm)
    runs = []
    for incremental in (True, False):
        algo = spec.build(inst, spec.parse_params(params), 5)
        algo.incremental = incremental
        runs.append(simulate(inst, algo, restart_seconds=restart_seconds))
    fast, full = runs
    assert fast.jobs == full.jobs
    assert fast.placements == full.placements
    assert fast.progress == full.progress
    assert fast.restarts == full.restarts


# -- hand-computed cases of the preemptive walk (srtf on rigid jobs; 60-second slots) --------------


def two_servers(rows: str, servers: str = "ab") -> Instance:
    """Servers a and b (or those named) with 2 GPUs each; rows are job_id,arrival,gpus,duration in slots."""
    cluster = cluster_from_dict(
        {
            "slot_seconds": 60,
            "resources": ["gpu"],
            "servers": [{"id": s, "capacity": {"gpu": 2}} for s in servers],
        }
    )
    lines = ["job_id,arrival,gpus,duration"]
    for row in rows.split():
        job_id, arrival, gpus, slots = row.split(",")
        lines.append(f"{job_id},{arrival},{gpus},{60 * int(slots)}")
    return Instance(cluster, parse_trace("\n".join(lines) + "\n", cluster, "trace.csv", "csv"))


def srtf_runs(inst: Instance) -> list:
    spec = registry.get("srtf")
    runs = []
    for incremental in (True, False):
        algo = spec.build(inst, spec.parse_params({}), 5)
        algo.incremental = incremental
        runs.append(simulate(inst, algo))
    return runs


def segments(run) -> list[tuple[str, str, int, int, int]]:
    return sorted((p.job_id, p.server, p.count, p.start, p.end) for p in run.placements)


def test_a_short_arrival_evicts_only_the_lowest_priority_job():
    # m (10 slots) on a, l (30 slots) on b; the 1-GPU short job s arrives at slot 1 with no free
    # GPU: l, last in srtf order, is evicted and s takes its server; m stays where it is.
    # (Re-booking every job behind s instead would put s on a and move m to b.)
    for run in srtf_runs(two_servers("m,0,2,10 l,0,2,30 s,1,1,2")):
        assert segments(run) == [
            ("l", "b", 2, 0, 1),
            ("l", "b", 2, 3, 32),  # back once s completes, with its 29 slots of work left
            ("m", "a", 2, 0, 10),
            ("s", "b", 1, 1, 3),
        ]
        assert {j.job_id: j.preemptions for j in run.jobs} == {"m": 0, "l": 1, "s": 0}


def test_free_capacity_is_used_before_any_eviction():
    # l holds server a; the short job s fits on b: nothing is evicted or moved.
    for run in srtf_runs(two_servers("l,0,2,30 s,1,2,2")):
        assert segments(run) == [("l", "a", 2, 0, 30), ("s", "b", 2, 1, 3)]
        assert all(j.preemptions == 0 for j in run.jobs)


def test_a_hopeless_waiting_job_evicts_nothing():
    # At slot 1 the order is m (9 left), h (20), l (24 left). h needs all 4 GPUs; only l comes
    # after it, and evicting l would still leave h 2 GPUs short: l keeps running. By slot 10 l is
    # ahead of h, so h waits until both are done.
    for run in srtf_runs(two_servers("m,0,2,10 l,0,2,25 h,1,4,20")):
        assert segments(run) == [
            ("h", "a", 2, 25, 45),
            ("h", "b", 2, 25, 45),
            ("l", "b", 2, 0, 25),
            ("m", "a", 2, 0, 10),
        ]
        assert all(j.preemptions == 0 for j in run.jobs)


def test_an_evicted_job_placed_again_in_the_same_walk_keeps_its_own_server():
    # Servers a, b, c. Slot 0: j0 (3 GPUs) spreads over a (2) and b (1). Slot 1: j1 takes c, j2
    # (1 GPU) the last GPU of b. Slot 2 (j1 done, c free; order j3, j4, j0, j2 with j0 before j2
    # on arrival): j3 (3 GPUs) evicts j2 and takes b and c; j4 (1 GPU) evicts j0 and takes one GPU
    # of a; j0 no longer fits (suspended); j2 takes its own GPU on b back, although first-fit would
    # put it on a. Slot 3: j3 done, j0 resumes on the free GPUs of a, b and c.
    inst = two_servers("j0,0,3,9 j1,1,2,1 j2,1,1,8 j3,2,3,1 j4,2,1,3", servers="abc")
    for run in srtf_runs(inst):
        assert segments(run) == [
            ("j0", "a", 1, 3, 10),
            ("j0", "a", 2, 0, 2),
            ("j0", "b", 1, 0, 2),
            ("j0", "b", 1, 3, 10),
            ("j0", "c", 1, 3, 10),
            ("j1", "c", 2, 1, 2),
            ("j2", "b", 1, 1, 9),
            ("j3", "b", 1, 2, 3),
            ("j3", "c", 2, 2, 3),
            ("j4", "a", 1, 2, 5),
        ]
        assert {j.job_id: j.preemptions for j in run.jobs} == {"j0": 1, "j1": 0, "j2": 0, "j3": 0, "j4": 0}


def test_a_failed_eviction_leaves_the_ledger_as_it_was():
    inst = two_servers("m,0,2,10 l,0,2,30 h,0,4,20")
    jobs = {j.job_id: j for j in inst.jobs}
    ledger = Ledger(inst.cluster)
    pair = Config(RIGID_WORKER_TYPE, 2, None, 0)
    held = {job_id: place(ledger, jobs[job_id], pair) for job_id in ("m", "l")}
    assert held["m"] is not None and held["l"] is not None
    cfg = Config(RIGID_WORKER_TYPE, 4, None, 0)

    def state() -> tuple[float, ...]:
        return (ledger.role_free("worker", "gpu"), ledger.used("a", "gpu"), ledger.used("b", "gpu"))

    before = state()
    assert evict_until_fit(ledger, jobs["h"], cfg, [(jobs["l"], held["l"])]) is None
    assert state() == before == (0.0, 2.0, 2.0)
    fit = evict_until_fit(ledger, jobs["h"], cfg, [(jobs["l"], held["l"]), (jobs["m"], held["m"])])
    assert fit is not None and fit[2] == 2 and sorted(a.count for a in fit[1]) == [2, 2]
    assert fit[0].role_free("worker", "gpu") == 0.0
    assert state() == before


@pytest.mark.parametrize(
    ("name", "restart_seconds", "anchored"),
    [("rigid-21", 0.0, True), ("rigid-21", 120.0, True), ("demo", 0.0, False), ("demo", 120.0, False)],
)
def test_srtf_orders_running_rigid_jobs_by_finish_slot(name, restart_seconds, anchored):
    # The equality test above covers both modes of srtf's change path: the finish-slot bound on
    # rigid jobs (exact without restart cost, an upper bound during restart periods), and keys
    # refreshed before every walk on elastic jobs.
    inst = INSTANCES[name]()
    spec = registry.get("srtf")
    algo = spec.build(inst, spec.parse_params({}), 5)
    simulate(inst, algo, restart_seconds=restart_seconds)
    assert algo._state is not None and algo._state.anchored is anchored


# -- a blocked fifo queue: the change path skips walks that cannot start anything ------------------


def congested(seed: int, n: int = 90) -> Instance:
    """Rigid jobs of 1-8 GPUs on 4 x 2 GPUs, arriving faster than they are served: the head of the
    queue is blocked at most events, jobs arrive behind it, and completions often fall on an arrival
    slot."""
    rng = random.Random(seed)
    rows, t = [], 0
    for i in range(n):
        t += rng.choice([0, 0, 1, 1, 2])
        rows.append(f"c{i},{t},{rng.choice([1, 1, 2, 3, 4, 8])},{rng.randint(1, 6)}")
    return two_servers(" ".join(rows), servers="abcd")


def shortest_key(jv, cfg) -> tuple[float, ...]:
    return (jv.job.work_required,)  # a later arrival may come before the blocked head


@pytest.mark.parametrize("restart_seconds", [0.0, 120.0])
@pytest.mark.parametrize("backfill", [False, True])
@pytest.mark.parametrize("key", [fifo_key, shortest_key])
@pytest.mark.parametrize("seed", range(6))
def test_skipped_walks_of_a_blocked_queue_change_no_schedule(seed, key, backfill, restart_seconds, monkeypatch):
    # Without backfill, a non-preemptive change path skips the walk when no job completed and the
    # head of the waiting queue is the job the previous walk stopped at (_Queues.decide). The full
    # walk, which runs at every event, must give the same schedule.
    inst = congested(seed)
    walks: list[int] = []  # slots of the change path's walks
    decisions: list[int] = []  # slots of its decisions
    walk = _Queues._walk_in_order
    monkeypatch.setattr(_Queues, "_walk_in_order", lambda self, view: walks.append(view.t) or walk(self, view))

    def run(incremental: bool):
        configs = fixed_configs(inst, {"workers_min": 1, "workers_max": 1, "ps": 1}, None)  # type: ignore[arg-type]
        algo = ListScheduler(inst, configs, key, preemptive=False, backfill=backfill, incremental=incremental)
        if incremental:
            decide = algo.decide
            algo.decide = lambda view: decisions.append(view.t) or decide(view)  # type: ignore[method-assign]
        return simulate(inst, algo, restart_seconds=restart_seconds)

    fast, full = run(True), run(False)
    assert fast.jobs == full.jobs
    assert fast.placements == full.placements
    assert fast.progress == full.progress
    if not backfill:  # walks were skipped: most events of a blocked fifo queue, fewer with shortest_key
        assert 0 < len(walks) < len(decisions) - (20 if key is fifo_key else 1)


# -- jobs hidden until a ready slot (tiresias-l: until their data can be on a server) --------------


class HideUntilReady:
    """The gate as a wrapper: the scheduler sees a job only from its ready slot on, and the run
    wakes at the next ready slot (the transcription the change path's ``ready`` must match)."""

    def __init__(self, inner: ListScheduler, ready: dict[str, int]) -> None:
        self.inner, self.ready = inner, ready

    def decide(self, view):
        jobs = tuple(jv for jv in view.jobs if self.ready[jv.job.job_id] <= view.t)
        decision = self.inner.decide(dataclasses.replace(view, jobs=jobs))  # not direct: the full walk
        later = [self.ready[jv.job.job_id] for jv in view.jobs if self.ready[jv.job.job_id] > view.t]
        wake = [w for w in (decision.wake_at, min(later, default=None)) if w is not None]
        return dataclasses.replace(decision, wake_at=min(wake, default=None))

    def report(self):
        return {}


GATED = [
    ("fifo", {}),
    ("fifo", {"backfill": "true"}),
    ("srtf", {}),
    ("srtf", {"ties": "arrival"}),
    ("tiresias", {"order": "start", "queue_thresholds": "600,3000"}),
]


@pytest.mark.parametrize("restart_seconds", [0.0, 120.0])
@pytest.mark.parametrize(("algorithm", "params"), GATED)
@pytest.mark.parametrize("name", ["rigid-21", "rigid-22", "demo", "zhou-ps", "oasis", "edge-cloud"])
def test_jobs_hidden_until_ready_schedule_as_the_gating_wrapper(name, algorithm, params, restart_seconds):
    inst = INSTANCES[name]()
    rng = random.Random(f"{name}/{algorithm}")
    # Most jobs wait 0-12 slots after arriving before the walk may see them; a few are ready at once.
    ready = {j.job_id: j.arrival + rng.choice([0, 0, 1, 3, 12]) for j in inst.jobs}
    spec = registry.get(algorithm)
    runs = []
    for gated_inside in (True, False):
        algo = spec.build(inst, spec.parse_params(params), 5)
        if gated_inside:
            algo.ready = ready  # the change path (and decide_full, were the view not direct)
            runs.append(simulate(inst, algo, restart_seconds=restart_seconds))
        else:
            runs.append(simulate(inst, HideUntilReady(algo, ready), restart_seconds=restart_seconds))
    fast, wrapped = runs
    assert any(ready[j.job_id] > j.arrival for j in inst.jobs)
    assert fast.jobs == wrapped.jobs
    assert fast.placements == wrapped.placements
    assert fast.progress == wrapped.progress
    assert fast.restarts == wrapped.restarts
    assert all(r.start is None or r.start >= ready[r.job_id] for r in fast.jobs)


@pytest.mark.parametrize("restart_seconds", [0.0, 120.0])
@pytest.mark.parametrize("seed", [7, 8, 9])
def test_tiresias_l_change_path_schedules_as_its_full_walk(seed, restart_seconds):
    inst = preset_instance("edge-cloud", 30, seed, 0.1)
    spec = registry.get("tiresias-l")
    runs = []
    for incremental in (True, False):
        algo = spec.build(inst, spec.parse_params({"queue_thresholds": "3600,36000"}), 5)
        assert algo.ready is not None
        algo.incremental = incremental
        runs.append(simulate(inst, algo, restart_seconds=restart_seconds))
    fast, full = runs
    assert fast.jobs == full.jobs
    assert fast.placements == full.placements
    assert fast.progress == full.progress
    assert fast.restarts == full.restarts


class ListsChecked:
    """Passes the engine's view to drf unchanged and checks, after each change-path decision, that
    its per-(shape, workers) lists hold exactly the jobs left waiting, in arrival order."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.checked = 0

    def decide(self, view):
        decision = self.inner.decide(view)
        state = self.inner._queues
        if state is not None:
            lists = [ranks for of_group in state.queues.values() for ranks in of_group.values()]
            assert all(ranks and ranks == sorted(ranks) for ranks in lists)
            queued = sorted(state.ids[r] for ranks in lists for r in ranks)
            running = view.running()
            left = {jv.job.job_id for jv in view.jobs if jv.job.job_id not in running} - set(decision.changes)
            assert queued == sorted(left) == sorted(state.rank) == sorted(state.ids.values())
            self.checked += 1
        return decision

    def report(self):
        return self.inner.report()


def test_drf_on_a_long_congested_rigid_run_in_groups():
    """drf's rigid change path with long queues in five groups (the jobs that cannot fit passed
    over per (shape, workers) list): the full walk's schedule."""
    rng = random.Random(5)
    cluster = cluster_from_dict(
        {"slot_seconds": 60, "resources": ["gpu"], "servers": [{"id": "s", "count": 3, "capacity": {"gpu": 4}}]}
    )
    rows, t = ["job_id,arrival,gpus,duration,group"], 0
    for i in range(400):
        t += rng.choice([0, 0, 0, 1, 2])
        rows.append(f"r{i},{t},{rng.choice([1, 1, 2, 3, 4, 8, 12])},{60 * rng.randint(1, 30)},g{rng.randrange(5)}")
    inst = Instance(cluster, parse_trace("\n".join(rows) + "\n", cluster, "trace.csv", "csv"))
    spec = registry.get("drf")
    runs, checked = [], 0
    for incremental in (True, False):
        algo = spec.build(inst, spec.parse_params({}), 5)
        algo.incremental = incremental
        wrapped = ListsChecked(algo)
        runs.append(simulate(inst, wrapped, restart_seconds=60.0))
        checked += wrapped.checked
    fast, full = runs
    assert fast.jobs == full.jobs and fast.placements == full.placements and fast.progress == full.progress
    assert checked > 300 and max(j.start - j.arrival for j in fast.jobs) > 100  # long queues
