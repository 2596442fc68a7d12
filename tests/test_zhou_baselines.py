"""The shared baselines in Zhou et al.'s model: constraint (2i) on clusters that declare it, and
DRF with fixed per-job sizes (the model's y_jhm hold for a job's whole run)."""

from __future__ import annotations

import copy
import dataclasses
from collections import defaultdict
from typing import Any

import pytest

from scheduling import api, presets
from scheduling.algorithms.common import Config, ideal_config, place
from scheduling.capacity import Ledger
from scheduling.loaders import cluster_from_dict, job_from_row, parse_cluster, parse_trace
from scheduling.model import Cluster, Instance, Job
from scheduling.speed import PS_RESERVATION, reservation_shortfall
from scheduling.validator import ps_reservations, validate


def cluster(servers: list[dict[str, float]], reserve: bool = True, ps_bw: float = 2.0) -> Cluster:
    """Worker type "w" (1 GPU, 1 CPU, 1 Gbps) and PS type "p" (1 CPU, ``ps_bw`` Gbps)."""
    return cluster_from_dict(
        {
            "slot_seconds": 1,
            "resources": ["gpu", "cpu"],
            "servers": [{"id": f"s{i}", "capacity": c} for i, c in enumerate(servers)],
            "worker_types": [{"id": "w", "demand": {"gpu": 1, "cpu": 1}, "bandwidth_gbps": 1}],
            "ps_types": [{"id": "p", "demand": {"cpu": 1}, "bandwidth_gbps": ps_bw}],
            "network": {PS_RESERVATION: 1} if reserve else {},
        }
    )


def ps_job(c: Cluster, **row: Any) -> Job:
    base = {"job_id": "j", "arrival": 0, "arch": "ps", "epochs": 1, "chunks": 8, "minibatches": 1, "batch_time": 1}
    return job_from_row({**base, **row}, c)


def counts(allocs: Any) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = defaultdict(int)
    for a in allocs:
        out[(a.server, a.role)] += a.count
    return dict(out)


def test_place_adds_pss_on_the_ps_server_until_they_carry_the_remote_workers() -> None:
    # Two GPUs per server: 6 workers need 3 servers. With the PSs on s0 beside 2 workers, the 4
    # remote 1-Gbps workers need 4 Gbps, i.e. two 2-Gbps PSs, not the one asked for.
    c = cluster([{"gpu": 2, "cpu": 8}] * 3)
    placed = place(Ledger(c), ps_job(c), Config("w", 6, "p", 1))
    assert placed is not None
    assert counts(placed) == {("s0", "ps"): 2, ("s0", "worker"): 2, ("s1", "worker"): 2, ("s2", "worker"): 2}
    assert reservation_shortfall(c, ps_job(c), placed) is None


def test_without_the_declaration_place_keeps_the_one_ps_asked_for() -> None:
    c = cluster([{"gpu": 2, "cpu": 8}] * 3, reserve=False)
    placed = place(Ledger(c), ps_job(c), Config("w", 6, "p", 1))
    assert placed is not None
    assert counts(placed)[("s0", "ps")] == 1
    assert reservation_shortfall(c, ps_job(c), placed) is not None  # (2i) would not hold


def test_place_fails_when_no_server_can_hold_the_pss_the_remote_workers_need() -> None:
    # Three CPUs per server, shared by PSs and workers beside them; the other two servers hold at
    # most 4 remote workers, which need two PSs: 2 PSs + 1 worker on s0 and 4 remote make 5.
    c = cluster([{"gpu": 2, "cpu": 3}] * 3)
    placed = place(Ledger(c), ps_job(c), Config("w", 5, "p", 1))
    assert placed is not None and counts(placed)[("s0", "ps")] == 2
    assert place(Ledger(c), ps_job(c), Config("w", 6, "p", 1)) is None


def test_the_ideal_case_under_2i_holds_no_more_workers_than_an_empty_cluster_can_serve() -> None:
    c = cluster([{"gpu": 2, "cpu": 3}] * 3)
    cfg = ideal_config(c, ps_job(c), 6)
    assert cfg.workers == 5 and place(Ledger(c), ps_job(c), cfg) is not None


def zhou_ps(jobs: int, seed: int, window: int | None = None) -> Instance:
    files = presets.build("zhou-ps", jobs=jobs, seed=seed)
    c = parse_cluster(files.cluster)
    inst = Instance(c, parse_trace(files.trace, c, files.trace_name))
    if window is None:
        return inst
    moved = [dataclasses.replace(j, arrival=j.arrival * window // presets.ZHOU_T) for j in inst.jobs]
    return Instance(c, tuple(sorted(moved, key=lambda j: (j.arrival, j.job_id))))


def test_the_zhou_ps_preset_declares_2i() -> None:
    assert zhou_ps(5, 0).cluster.network.get(PS_RESERVATION) == 1


@pytest.mark.parametrize("algorithm", ["fifo", "drf", "antman", "tiresias", "srtf", "zhou"])
def test_every_algorithm_meets_2i_on_the_zhou_ps_preset(algorithm: str) -> None:
    inst = zhou_ps(12, 3, window=10)
    doc = api.run(inst, algorithm, seed=3)  # validates, (2i) included
    assert ps_reservations(inst, doc) == []
    assert doc["metrics"]["completed"] == 12


def test_the_validator_catches_a_schedule_that_breaks_2i() -> None:
    # The same jobs on the cluster without the declaration: fifo then keeps one PS per job and
    # spreads wide jobs, which the declaring cluster does not allow.
    inst = zhou_ps(12, 3, window=10)
    doc = api.run(inst, "fifo", seed=3)
    network = {k: v for k, v in inst.cluster.network.items() if k != PS_RESERVATION}
    free = Instance(dataclasses.replace(inst.cluster, network=network), inst.jobs)
    loose = api.run(free, "fifo", seed=3)
    assert ps_reservations(inst, doc) == []
    problems = validate(inst, loose)
    assert any("(2i)" in p for p in problems), problems


def test_the_validator_holds_zhou_to_2i_even_without_the_declaration() -> None:
    inst = zhou_ps(12, 3, window=10)
    doc = api.run(inst, "zhou", seed=3)
    assert ps_reservations(inst, doc, always=True) == []
    bad = copy.deepcopy(doc)
    # A hundred more workers on a server without the job's PSs: far more remote bandwidth than
    # its PSs reserve.
    ps_servers = {(p["job_id"], p["server"]) for p in doc["placements"] if p["role"] == "ps"}
    seg = next(p for p in bad["placements"] if p["role"] == "worker" and (p["job_id"], p["server"]) not in ps_servers)
    seg["count"] += 100
    assert ps_reservations(inst, bad, always=True) != []


def sizes(doc: dict[str, Any]) -> dict[str, set[tuple[str, str, int]]]:
    """Per job, the set of (server, role, count) rows it ever held."""
    out: dict[str, set[tuple[str, str, int]]] = defaultdict(set)
    for p in doc["placements"]:
        out[p["job_id"]].add((p["server"], p["role"], p["count"]))
    return out


def test_drf_of_record_keeps_each_jobs_first_allocation_and_re_dividing_is_the_named_variant() -> None:
    inst = zhou_ps(30, 1, window=1)  # every job at slot 0: DRF shares the cluster, then jobs leave
    fixed = api.run(inst, "drf", {}, seed=1)  # the default: Zhou et al.'s y_jhm, fixed once started
    assert fixed["params"]["fixed"] is True
    resized = api.run(inst, "drf", {"fixed": False}, seed=1)
    for job_id, rows in sizes(fixed).items():
        spans = {(p["start"], p["end"]) for p in fixed["placements"] if p["job_id"] == job_id}
        assert len(spans) == 1, (job_id, rows)  # one interval: never resized, never suspended
    spans_resized: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for p in resized["placements"]:
        spans_resized[p["job_id"]].add((p["start"], p["end"]))
    assert any(len(s) > 1 for s in spans_resized.values())
    assert fixed["metrics"]["preemptions"] == 0


def test_drf_without_resizing_gives_waiting_jobs_the_capacity_that_frees_up() -> None:
    # One server with 2 GPUs and three jobs at slot 0: two start with one worker each (the filling
    # order), the third waits; when a job completes, the third takes its place and the survivor
    # does not grow, whereas with resizing the survivor takes the freed GPU as well.
    c = cluster([{"gpu": 2, "cpu": 8}], reserve=False)
    jobs = tuple(ps_job(c, job_id=f"j{i}", chunks=2 + 2 * i) for i in range(3))
    inst = Instance(c, jobs)
    doc = api.run(inst, "drf", {"fixed": True}, seed=0)
    start = {r["job_id"]: r["start"] for r in doc["jobs"]}
    done = {r["job_id"]: r["completion"] for r in doc["jobs"]}
    assert start["j0"] == start["j1"] == 0 and start["j2"] == done["j0"]
    assert {p["count"] for p in doc["placements"] if p["job_id"] == "j1" and p["role"] == "worker"} == {1}
    resized = api.run(inst, "drf", {"fixed": False}, seed=0)
    assert max(p["count"] for p in resized["placements"] if p["job_id"] == "j2" and p["role"] == "worker") == 2
