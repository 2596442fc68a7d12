"""Named placements (pool, consolidated, packed) on tiny hand-computed cases, and the list
scheduler's two paths under each."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling import api, registry
from scheduling.algorithms.common import Config, FitMemo
from scheduling.algorithms.placement import PLACEMENTS, consolidated, packed
from scheduling.capacity import Ledger
from scheduling.engine import simulate
from scheduling.errors import UnsupportedInstance
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import RIGID_WORKER_TYPE, Cluster, Instance
from scheduling.validator import validate
from tests.scenarios import preset_instance
from tests.test_properties import instances


def gpu_cluster(*sizes: int) -> Cluster:
    """Servers s0, s1, ... with the given GPUs each (60-second slots)."""
    return cluster_from_dict(
        {
            "slot_seconds": 60,
            "resources": ["gpu"],
            "servers": [{"id": f"s{i}", "capacity": {"gpu": g}} for i, g in enumerate(sizes)],
        }
    )


def rigid_instance(cluster: Cluster, rows: str) -> Instance:
    """Rows are job_id,arrival,gpus,duration in slots."""
    lines = ["job_id,arrival,gpus,duration"]
    for row in rows.split():
        job_id, arrival, gpus, slots = row.split(",")
        lines.append(f"{job_id},{arrival},{gpus},{60 * int(slots)}")
    return Instance(cluster, parse_trace("\n".join(lines) + "\n", cluster, "trace.csv", "csv"))


def book(ledger: Ledger, server: str, gpus: int) -> None:
    ledger.book(server, {"gpu": 1.0}, gpus)


def put(placement, ledger: Ledger, inst: Instance, job_id: str) -> list[tuple[str, int]] | None:
    job = next(j for j in inst.jobs if j.job_id == job_id)
    assert job.gpus is not None
    placed = placement(ledger, job, Config(RIGID_WORKER_TYPE, job.gpus))
    return None if placed is None else [(a.server, a.count) for a in placed]


def runs(inst: Instance, algorithm: str, params: dict[str, str]) -> list:
    """The change-based and the full path's runs (the same schedule expected)."""
    spec = registry.get(algorithm)
    out = []
    for incremental in (True, False):
        algo = spec.build(inst, spec.parse_params(params), 5)
        algo.incremental = incremental
        out.append(simulate(inst, algo))
    return out


def segments(run) -> list[tuple[str, str, int, int, int]]:
    return sorted((p.job_id, p.server, p.count, p.start, p.end) for p in run.placements)


# -- consolidated: the Tiresias simulator's yarn ----------------------------------------------------


def test_consolidated_waits_for_one_server_rather_than_split_an_eight_gpu_job():
    # a, b fill s0 and c, d fill s1 (4 GPUs each); a and c end at slots 2 and 3, leaving 4 + 4 free
    # GPUs when e (8 GPUs) arrives at slot 4. pool splits e over both servers at once; consolidated
    # waits until b ends at slot 6 and puts e on s0 whole.
    inst = rigid_instance(gpu_cluster(8, 8), "a,0,4,2 b,0,4,6 c,0,4,3 d,0,4,8 e,4,8,5")
    pooled = runs(inst, "fifo", {})[0]
    assert [s for s in segments(pooled) if s[0] == "e"] == [("e", "s0", 4, 4, 9), ("e", "s1", 4, 4, 9)]
    for run in runs(inst, "fifo", {"placement": "consolidated"}):
        assert [s for s in segments(run) if s[0] == "e"] == [("e", "s0", 8, 6, 11)]


def test_a_sixteen_gpu_job_takes_two_whole_idle_servers():
    # a holds one GPU of s0: pool spreads x first-fit (7 on s0, 8 on s1, 1 on s2); consolidated
    # takes the idle s1 and s2 whole.
    inst = rigid_instance(gpu_cluster(8, 8, 8), "a,0,1,10 x,1,16,3")
    assert [s for s in segments(runs(inst, "fifo", {})[0]) if s[0] == "x"] == [
        ("x", "s0", 7, 1, 4),
        ("x", "s1", 8, 1, 4),
        ("x", "s2", 1, 1, 4),
    ]
    for run in runs(inst, "fifo", {"placement": "consolidated"}):
        assert [s for s in segments(run) if s[0] == "x"] == [("x", "s1", 8, 1, 4), ("x", "s2", 8, 1, 4)]


def test_a_sixteen_gpu_job_waits_while_only_one_server_is_idle():
    inst = rigid_instance(gpu_cluster(8, 8, 8), "x,0,16,1")
    ledger = Ledger(inst.cluster)
    book(ledger, "s0", 1)
    book(ledger, "s2", 1)
    assert put(consolidated, ledger, inst, "x") is None  # 22 GPUs free, one idle server
    assert ledger.used("s1", "gpu") == 0  # nothing booked by the failed attempt


def test_a_job_of_one_and_a_half_servers_takes_an_idle_server_and_the_first_with_room_for_the_rest():
    # Tiresias' try_cross_node_alloc: floor(12 / 8) = 1 whole idle server (s1, the first), and the
    # first other server with 4 free GPUs (s0 has 3, s2 has 5).
    inst = rigid_instance(gpu_cluster(8, 8, 8), "x,0,12,1")
    ledger = Ledger(inst.cluster)
    book(ledger, "s0", 5)
    book(ledger, "s2", 3)
    assert put(consolidated, ledger, inst, "x") == [("s1", 8), ("s2", 4)]


def test_consolidated_is_not_monotone_on_unequal_servers_so_its_failures_are_not_remembered():
    # s0 (8 GPUs) has 4 free and four idle 2-GPU servers: 5 GPUs fit no one server, yet 9 fit
    # (the four small servers whole and 1 GPU on s0). A memo that skipped 9 after 5 failed would err.
    inst = rigid_instance(gpu_cluster(8, 2, 2, 2, 2), "five,0,5,1 nine,0,9,1")
    ledger = Ledger(inst.cluster)
    book(ledger, "s0", 4)
    assert put(consolidated, ledger.copy(), inst, "five") is None
    assert put(consolidated, ledger.copy(), inst, "nine") == [("s1", 2), ("s2", 2), ("s3", 2), ("s4", 2), ("s0", 1)]
    assert not PLACEMENTS["consolidated"].monotone(inst.cluster)
    assert PLACEMENTS["consolidated"].monotone(gpu_cluster(8, 8))
    memo = FitMemo(ledger, placement=consolidated, remember=False)
    jobs = {j.job_id: j for j in inst.jobs}
    assert memo.place(jobs["five"], Config(RIGID_WORKER_TYPE, 5)) is None
    assert memo.place(jobs["nine"], Config(RIGID_WORKER_TYPE, 9)) is not None


def test_a_backfilling_walk_under_consolidated_still_tries_a_larger_job_after_a_smaller_one_failed():
    # The case above in a schedule: a holds 4 GPUs of s0; five does not fit, nine behind it does.
    inst = rigid_instance(gpu_cluster(8, 2, 2, 2, 2), "a,0,4,10 five,1,5,2 nine,1,9,2")
    for run in runs(inst, "fifo", {"backfill": "true", "placement": "consolidated"}):
        assert {j.job_id: j.start for j in run.jobs} == {"a": 0, "five": 10, "nine": 1}


def test_srtf_under_consolidated_re_places_every_job_from_an_empty_cluster():
    # l (3 GPUs, long) sits on s0 beside m (4 GPUs); s (6 GPUs, short) arrives once m has ended.
    # The re-placement in srtf order puts s first, on s0, and l after it on s1: l moves (not a
    # preemption), and back when s ends, as the simulator's loop does. pool's walk keeps l where it
    # is and puts s on s1.
    inst = rigid_instance(gpu_cluster(8, 8), "m,0,4,2 l,0,3,20 s,3,6,2")
    assert [s for s in segments(runs(inst, "srtf", {})[0]) if s[0] != "m"] == [
        ("l", "s0", 3, 0, 20),
        ("s", "s1", 6, 3, 5),
    ]
    for run in runs(inst, "srtf", {"placement": "consolidated"}):
        assert segments(run) == [
            ("l", "s0", 3, 0, 3),
            ("l", "s0", 3, 5, 20),  # s has ended: re-placed first-fit, l is back on s0
            ("l", "s1", 3, 3, 5),
            ("m", "s0", 4, 0, 2),
            ("s", "s0", 6, 3, 5),
        ]
        assert all(j.preemptions == 0 for j in run.jobs)


# -- packed: best-fit ------------------------------------------------------------------------------


def test_packed_chooses_the_fullest_server_that_holds_the_job():
    inst = rigid_instance(gpu_cluster(8, 8, 8), "c,0,2,1")
    ledger = Ledger(inst.cluster)
    book(ledger, "s0", 3)  # 5 free
    book(ledger, "s1", 6)  # 2 free
    assert put(PLACEMENTS["pool"].place, ledger.copy(), inst, "c") == [("s0", 2)]  # first fit
    assert put(packed, ledger.copy(), inst, "c") == [("s1", 2)]


def test_packed_spreads_a_job_no_server_holds_over_the_emptiest_servers_first():
    inst = rigid_instance(gpu_cluster(8, 8, 8), "x,0,9,1")
    ledger = Ledger(inst.cluster)
    book(ledger, "s0", 6)  # 2 free
    book(ledger, "s1", 1)  # 7 free
    book(ledger, "s2", 3)  # 5 free
    assert put(packed, ledger, inst, "x") == [("s1", 7), ("s2", 2)]


# -- the option itself -----------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["fifo", "srtf", "tiresias"])
def test_the_rigid_baselines_declare_the_placement_parameter(algorithm):
    param = next(p for p in registry.get(algorithm).params if p.name == "placement")
    assert param.default == "pool"
    assert param.choices == ("pool", "consolidated", "packed")


def test_a_placement_that_places_no_parameter_servers_refuses_ps_jobs():
    inst = preset_instance("zhou-ps", 6, 1)
    with pytest.raises(UnsupportedInstance, match="parameter servers"):
        api.run(inst, "fifo", {"placement": "consolidated"})


def random_rigid(seed: int, sizes: tuple[int, ...]) -> Instance:
    """Arbitrary GPU counts (not only powers of two), so that placements fragment differently."""
    rng = random.Random(seed)
    cluster = gpu_cluster(*sizes)
    largest = sum(sizes) if seed % 2 else max(sizes)
    rows, t = [], 0
    for i in range(40):
        t += rng.randrange(0, 4)
        rows.append(f"j{i},{t},{rng.randint(1, largest)},{rng.randint(1, 30)}")
    return rigid_instance(cluster, " ".join(rows))


CASES = [
    ("fifo", {}),
    ("fifo", {"backfill": "true"}),
    ("srtf", {}),
    ("srtf", {"ties": "arrival"}),
    ("tiresias", {"order": "start", "queue_thresholds": "600,3000"}),
    ("tiresias", {"queue_thresholds": "600,3000"}),
]


@pytest.mark.parametrize("placement", ["consolidated", "packed"])
@pytest.mark.parametrize(("algorithm", "params"), CASES)
@pytest.mark.parametrize("sizes", [(8, 8, 8, 8), (8, 4, 4, 2, 2)])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_change_based_path_schedules_as_the_full_walk_under_each_placement(
    placement, algorithm, params, sizes, seed
):
    inst = random_rigid(seed, sizes)
    try:
        fast, full = runs(inst, algorithm, {**params, "placement": placement})
    except UnsupportedInstance:
        assert placement == "consolidated" and sizes == (8, 4, 4, 2, 2)  # a job no empty cluster holds so
        return
    assert fast.jobs == full.jobs
    assert fast.placements == full.placements
    assert fast.progress == full.progress


@pytest.mark.parametrize("placement", list(PLACEMENTS))
@pytest.mark.parametrize("algorithm", ["fifo", "srtf", "tiresias"])
def test_every_placement_gives_a_valid_result_that_records_it(placement, algorithm):
    for seed in (4, 5):
        inst = random_rigid(seed, (8, 8, 8, 8))
        doc = api.run(inst, algorithm, {"placement": placement})
        assert validate(inst, doc) == []
        assert doc["params"]["placement"] == placement
        assert all(j["completion"] is not None for j in doc["jobs"])


def test_pool_is_the_default_and_unchanged():
    inst = random_rigid(6, (8, 8, 8, 8))
    for algorithm in ("fifo", "srtf", "tiresias"):
        assert api.run(inst, algorithm)["placements"] == api.run(inst, algorithm, {"placement": "pool"})["placements"]


def test_consolidated_places_only_allocations_of_whole_jobs_on_one_server_when_they_fit_one():
    inst = random_rigid(7, (8, 8, 8, 8))
    doc = api.run(inst, "srtf", {"placement": "consolidated"})
    gpus = {j.job_id: j.gpus for j in inst.jobs}
    for p in doc["placements"]:
        if gpus[p["job_id"]] <= 8:
            assert p["count"] == gpus[p["job_id"]]
        else:
            assert p["count"] == 8 or p["count"] == gpus[p["job_id"]] % 8


@pytest.mark.parametrize("placement", ["consolidated", "packed"])
@pytest.mark.parametrize("algorithm", ["fifo", "srtf", "tiresias"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances(), seed=st.integers(0, 2**16))
def test_every_placement_passes_the_validator_on_random_small_instances(placement, algorithm, inst, seed):
    try:
        doc = api.run(inst, algorithm, {"placement": placement}, seed=seed)  # ScheduleError if invalid
    except UnsupportedInstance:
        return  # a job with PSs, or one no empty cluster holds under this placement
    assert validate(inst, doc) == []
    assert all(j["completion"] is not None for j in doc["jobs"]), "every job fits, so every job completes"
