"""Hand-computed cases of srtf's preemptive walk (rigid jobs; 60-second slots), each checked on
both paths: the change-based ``decide`` and the full walk ``decide_full``. Their equality on
generated instances, and the other list schedulers', is in tests/test_fast_twins.py."""

from __future__ import annotations

from scheduling import registry
from scheduling.algorithms.common import Config, place
from scheduling.algorithms.priority import evict_until_fit
from scheduling.capacity import Ledger
from scheduling.engine import simulate
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import RIGID_WORKER_TYPE, Instance


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
