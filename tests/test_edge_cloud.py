"""Edge-cloud paper (seeds/003): Q_jdsw of eq. (5), HAPRF queue insertion, dispatch and A_online runs."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scheduling import api, presets, records, registry, results
from scheduling.algorithms.edge.greedy import Chunk, Pending, WorkerQueue, q_cloud, q_edge, start_slot
from scheduling.algorithms.edge.online import EdgeCloud
from scheduling.engine import simulate
from scheduling.errors import UnsupportedInstance
from scheduling.loaders import cluster_from_dict, job_from_row
from scheduling.model import Instance
from scheduling.speed import chunk_slots, processing_capacity
from scheduling.validator import validate


def chunk(job: str, gamma: float, remaining: int, seq: int, release: int = 0, chunks: int = 1) -> Chunk:
    return Chunk(job, 0, gamma, 1.0 / chunks, release, remaining, seq)


def tiny(servers: list[tuple[str, int, int]], jobs: list[dict[str, Any]], cloud_delay: int = 10) -> Instance:
    """Edge servers (id, workers of type w1, upload delay) with one PS slot each, and a cloud.

    Slots are 1 s long and jobs have m_j = 1 s, G_j = 0, q_j = 0, so n_j = 1 mini-batch per slot and a
    chunk takes E_j B_j slots."""
    spec = {
        "slot_seconds": 1,
        "resources": ["gpu", "worker_slot", "ps_slot", "worker_slot_w1"],
        "servers": [
            {
                "id": sid,
                "site": "edge",
                "upload_delay": delay,
                "capacity": {"gpu": n, "worker_slot": n, "worker_slot_w1": n, "ps_slot": 1},
            }
            for sid, n, delay in servers
        ]
        + [{"id": "cloud", "site": "cloud", "unlimited": True, "capacity": {}, "upload_delay": cloud_delay}],
        "worker_types": [{"id": "w1", "demand": {"gpu": 1, "worker_slot": 1, "worker_slot_w1": 1}}],
        "ps_types": [{"id": "ps", "demand": {"ps_slot": 1}}],
    }
    cluster = cluster_from_dict(spec)
    rows = [{"arch": "ps", "batch_time": {"w1": 1}, "gradient_mb": 0, **j} for j in jobs]
    return Instance(cluster, tuple(sorted((job_from_row(r, cluster) for r in rows), key=lambda j: j.arrival)))


# ---- eq. (5), term by term -------------------------------------------------------------------


def test_q_adds_dispatch_waiting_processing_and_postponement_terms_of_eq_5() -> None:
    # Job j: D_j = 4, E_j B_j / n_jsw = 6 slots, Delta_js = 2, gamma_jd = 0.2. Pending at t0:
    # a (gamma 0.5, 3 slots left, D = 2) and b (gamma 0.2, 5 left, D = 5) wait ahead (gamma' >= gamma);
    # c (gamma 0.1, 4 left, D = 10) is postponed.
    pending = [Pending(0.5, 3, 2), Pending(0.2, 5, 5), Pending(0.1, 4, 10)]
    q = q_edge(delta=2, chunks=4, slots=6, gamma=0.2, pending=pending)
    assert q.dispatch == pytest.approx(2 / 4)  # (1/D_j) Delta_js
    assert q.waiting == pytest.approx((3 + 5) / 4)  # (1/D_j) sum of p_hat over A1
    assert q.processing == pytest.approx(6 / 4)  # (1/D_j) E_j B_j / n_jsw
    assert q.postponed == pytest.approx(6 * (1 / 10))  # (E_j B_j / n_jsw) sum of 1/D_j' over A2
    assert q.total == pytest.approx(0.5 + 2 + 1.5 + 0.6)


def test_q_of_the_cloud_has_only_the_dispatch_and_processing_terms() -> None:
    q = q_cloud(delta=12, chunks=3, slots=9)
    assert (q.dispatch, q.waiting, q.processing, q.postponed) == (pytest.approx(4), 0, pytest.approx(3), 0)


def test_q_sees_the_queue_as_it_will_be_when_the_chunk_arrives() -> None:
    # At t = 0 chunk x (gamma 0.3, 5 slots) runs ahead of y (gamma 0.1, 4 slots). A new chunk with
    # Delta = 2 arrives at t0 = 2, when x has 3 slots left: A(t0) = {x: 3, y: 4}.
    q = WorkerQueue("s", "w1", 0, upload_delay=2)
    q.insert(chunk("x", 0.3, 5, 0, chunks=2))
    q.insert(chunk("y", 0.1, 4, 1, chunks=8))
    assert [(c.job_id, left) for c, left in q.project(0, 2)] == [("x", 3), ("y", 4)]
    pending = [Pending(c.gamma, left, round(1 / c.weight)) for c, left in q.project(0, 2)]
    terms = q_edge(2, chunks=2, slots=6, gamma=0.2, pending=pending)
    assert terms.total == pytest.approx(2 / 2 + 3 / 2 + 6 / 2 + 6 * (1 / 8))
    assert start_slot(q, 0, 2, 0.2) == 2 + 3  # t* = t0 + remaining time of A1


def test_projection_skips_chunks_whose_data_has_not_arrived() -> None:
    q = WorkerQueue("s", "w1", 0, upload_delay=1)
    q.insert(chunk("late", 0.9, 4, 0, release=3))
    q.insert(chunk("now", 0.1, 10, 1))
    # Slots 0-2 train "now"; from slot 3 "late" preempts it; by t0 = 5 "late" has 2 slots left.
    assert [(c.job_id, left) for c, left in q.project(0, 5)] == [("late", 2), ("now", 7)]


# ---- HAPRF queue insertion --------------------------------------------------------------------


def test_insertion_puts_a_chunk_behind_every_chunk_with_a_rate_at_least_its_own() -> None:
    q = WorkerQueue("s", "w1", 0, upload_delay=0)
    for name, gamma, seq in [("a", 0.2, 0), ("b", 0.5, 1), ("c", 0.2, 2), ("d", 0.1, 3), ("e", 0.2, 4)]:
        q.insert(chunk(name, gamma, 1, seq))
    assert [c.job_id for c in q.chunks] == ["b", "a", "c", "e", "d"]


def test_a_higher_rate_chunk_preempts_the_running_one_and_postpones_it_by_its_processing_time() -> None:
    q = WorkerQueue("s", "w1", 0, upload_delay=0)
    low = chunk("low", 0.1, 6, 0)
    q.insert(low)
    assert q.running(0) is low and q.next_change(0) == 6
    q.advance(low, 2)  # slots 0-1
    high = chunk("high", 0.5, 3, 1, release=2)
    q.insert(high)
    assert q.running(2) is high and q.next_change(2) == 5
    q.advance(high, 3)
    assert q.running(5) is low and q.next_change(5) == 9  # 6 + 3: postponed by the new chunk's 3 slots


# ---- A_greedy (Alg. 2) on a tiny cluster ------------------------------------------------------


def test_each_chunk_goes_to_the_worker_with_the_smallest_q() -> None:
    # Two edge servers with one worker each (delays 1 and 3), cloud delay 10. Job: D = 2, E B = 4.
    # Q(s1) = 1/2 + 4/2 = 2.5, Q(s2) = 3/2 + 4/2 = 3.5, Q(cloud) = 10/2 + 4/2 = 7: chunk 1 -> s1.
    # Then Q(s1) = 1/2 + 4/2 (chunk 1 waits ahead) + 4/2 = 4.5 > Q(s2): chunk 2 -> s2.
    inst = tiny([("s1", 1, 1), ("s2", 1, 3)], [{"job_id": "j", "arrival": 0, "chunks": 2, "minibatches": 4}])
    algo = EdgeCloud(inst, np.random.default_rng(0))
    d = algo.dispatch(inst.jobs[0], 0)
    assert [w.server if w else "cloud" for w in d.workers] == ["s1", "s2"]
    assert d.zeta == 0
    assert d.alpha == pytest.approx([3.5, 4.5])  # min over C_j after each dispatch (Alg. 2 line 23)


def test_a_job_whose_first_chunk_prefers_the_cloud_goes_there_whole_with_zeta_one() -> None:
    # The only edge worker is busy with a long chunk: every chunk of the new job goes to the cloud.
    inst = tiny(
        [("s1", 1, 1)],
        [
            {"job_id": "a", "arrival": 0, "chunks": 1, "minibatches": 100},
            {"job_id": "b", "arrival": 1, "chunks": 3, "minibatches": 2, "epochs": 1},
        ],
        cloud_delay=2,
    )
    algo = EdgeCloud(inst, np.random.default_rng(0))
    algo.dispatch(inst.jobs[0], 0)
    d = algo.dispatch(inst.jobs[1], 1)
    assert d.workers == (None, None, None) and d.zeta == 1


def test_edge_only_never_uses_the_cloud() -> None:
    inst = tiny([("s1", 1, 1)], [{"job_id": "a", "arrival": 0, "chunks": 3, "minibatches": 5}], cloud_delay=0)
    assert EdgeCloud(inst, np.random.default_rng(0)).dispatch(inst.jobs[0], 0).workers[0] is None
    d = EdgeCloud(inst, np.random.default_rng(0), edge_only=True).dispatch(inst.jobs[0], 0)
    assert all(w is not None and w.server == "s1" for w in d.workers)


# ---- A_online through the engine and the validator --------------------------------------------


def run_algo(inst: Instance, **params: Any) -> tuple[dict[str, Any], EdgeCloud]:
    spec = registry.get("edge-cloud")
    algo = spec.build(inst, spec.parse_params(params), seed=1)
    assert isinstance(algo, EdgeCloud)
    doc = results.build(inst, simulate(inst, algo), "edge-cloud", spec.parse_params(params), 1)
    assert validate(inst, doc) == []
    return doc, algo


def test_a_later_job_with_a_higher_rate_preempts_part_of_an_earlier_jobs_workers() -> None:
    # "long" (D = 2, E B = 10) runs on the two workers of s1 from slot 1; "short" (D = 1, E B = 2,
    # gamma = 1/2 > 1/20) arrives at 2, takes one worker from slot 3 to 5, and "long"'s chunk there
    # is postponed by 2 slots: long completes at 1 + 10 + 2 = 13.
    inst = tiny(
        [("s1", 2, 1)],
        [
            {"job_id": "long", "arrival": 0, "chunks": 2, "minibatches": 10},
            {"job_id": "short", "arrival": 2, "chunks": 1, "minibatches": 2},
        ],
        cloud_delay=50,
    )
    doc, algo = run_algo(inst)
    done = {j["job_id"]: j for j in doc["jobs"]}
    assert done["short"]["completion"] == 5
    assert done["long"]["completion"] == 13
    assert done["long"]["preemptions"] == 1  # partial: it kept its other worker
    assert algo.report()["edge_cloud"]["chunk_preemptions"] == 1


def test_no_chunk_starts_before_its_data_is_uploaded() -> None:
    inst = tiny([("s1", 1, 3)], [{"job_id": "j", "arrival": 4, "chunks": 1, "minibatches": 2}], cloud_delay=20)
    doc, _ = run_algo(inst)
    assert min(p["start"] for p in doc["placements"]) == 4 + 3


# ---- upload delays per job and server (Delta_js) ------------------------------------------------


def test_a_jobs_own_upload_delay_overrides_the_servers_by_id_then_site_then_star() -> None:
    inst = tiny([("s1", 1, 1), ("s2", 1, 3)], [{"job_id": "j", "arrival": 0}])
    s1, s2, cloud = inst.cluster.servers
    job = job_from_row({"job_id": "j", "arrival": 0, "upload_delay": {"s2": 7, "edge": 2}}, inst.cluster)
    assert [job.upload_delay_to(s) for s in (s1, s2, cloud)] == [2, 7, 10]
    star = job_from_row({"job_id": "j", "arrival": 0, "upload_delay": 5}, inst.cluster)
    assert [star.upload_delay_to(s) for s in (s1, s2, cloud)] == [5, 5, 5]
    plain = job_from_row({"job_id": "j", "arrival": 0}, inst.cluster)
    assert [plain.upload_delay_to(s) for s in (s1, s2, cloud)] == [1, 3, 10]


@pytest.mark.parametrize(
    ("cell", "problem"),
    [("s9", "unknown server 's9'"), ("s1", "'-1' must be >= 0"), ("s1", "'1.5' is not a whole number")],
)
def test_a_bad_upload_delay_names_the_file_line_job_and_field(cell: str, problem: str) -> None:
    from scheduling.errors import InputError
    from scheduling.loaders import parse_trace

    inst = tiny([("s1", 1, 1)], [{"job_id": "j", "arrival": 0}])
    value = {"unknown server 's9'": "2", "'-1' must be >= 0": "-1"}.get(problem, "1.5")
    text = f"job_id,arrival,upload_delay.cloud,upload_delay.{cell}\nok,0,3,\nbad,1,3,{value}\n"
    with pytest.raises(InputError) as err:
        parse_trace(text, inst.cluster, "t.csv")
    assert str(err.value).startswith(f"t.csv, line 3, job 'bad', field 'upload_delay.{cell}': {problem}")


def test_each_chunk_pays_its_own_jobs_delay_to_the_server_in_q_and_in_its_start() -> None:
    # s1 is near for "a" (delay 1) and far for "b" (delay 6); s2 the reverse. Same jobs otherwise:
    # each goes to its near server and starts after its own delay there.
    inst = tiny(
        [("s1", 1, 0), ("s2", 1, 0)],
        [
            {"job_id": "a", "arrival": 0, "minibatches": 2, "upload_delay": {"s1": 1, "s2": 6}},
            {"job_id": "b", "arrival": 0, "minibatches": 2, "upload_delay": {"s1": 6, "s2": 2}},
        ],
        cloud_delay=30,
    )
    doc, algo = run_algo(inst)
    assert [algo.dispatches[j].workers[0].server for j in ("a", "b")] == ["s1", "s2"]  # type: ignore[union-attr]
    starts = {(p["job_id"], p["server"]): p["start"] for p in doc["placements"] if p["role"] == "worker"}
    assert starts == {("a", "s1"): 1, ("b", "s2"): 2}
    q = algo._q(algo.workers["w1"][0], inst.jobs[1], 0, 6, 2, 0.5)
    assert q == pytest.approx(q_edge(6, 1, 2, 0.5, []).total)  # Delta = 6 for b on s1


def test_the_preset_draws_a_delay_per_job_and_server_in_the_papers_ranges(tmp_path: Path) -> None:
    inst = edge_instance(tmp_path, jobs=30)
    edges = [s for s in inst.cluster.servers if s.site == "edge"]
    cloud = next(s for s in inst.cluster.servers if s.site == "cloud")
    per_job = [[j.upload_delay_to(s) for s in edges] for j in inst.jobs]
    assert all(1 <= d <= 4 for row in per_job for d in row)
    assert all(10 <= j.upload_delay_to(cloud) <= 15 for j in inst.jobs)
    assert len({tuple(row) for row in per_job}) == len(per_job)  # per job, not only per server


def edge_instance(tmp_path: Path, jobs: int = 40, seed: int = 2) -> Instance:
    """The edge-cloud preset's instance with restarts free: A_online's plan and the engine then agree
    to the slot, which these tests check (under the preset's restart cost: tests/test_frames.py)."""
    cluster_path, trace_path = presets.generate("edge-cloud", jobs=jobs, seed=seed, size=0.1, out=tmp_path)
    inst = api.load_instance(cluster_path, trace_path)
    return Instance(records.replace(inst.cluster, restart_seconds=0.0), inst.jobs)


@pytest.mark.parametrize("edge_only", [False, True])
def test_a_dispatched_chunk_is_trained_whole_on_the_server_it_was_sent_to(tmp_path: Path, edge_only: bool) -> None:
    inst = edge_instance(tmp_path)
    doc, algo = run_algo(inst, edge_only=edge_only)
    held: dict[tuple[str, str], int] = defaultdict(int)  # (job, server) -> worker-slots held
    for p in doc["placements"]:
        if p["role"] == "worker":
            held[(p["job_id"], p["server"])] += p["count"] * (p["end"] - p["start"])
    expected: dict[tuple[str, str], int] = defaultdict(int)
    for job in inst.jobs:
        dispatch = algo.dispatches[job.job_id]
        for w in dispatch.workers:
            server = w.server if w is not None else "cloud"
            expected[(job.job_id, server)] += chunk_slots(
                inst.cluster, job, next(iter(job.batch_time)), dispatch.zeta == 1
            )
    assert dict(held) == dict(expected)
    assert all(j["completion"] is not None for j in doc["jobs"])


def test_every_chunk_slot_delivers_the_processing_capacity_of_eq_1(tmp_path: Path) -> None:
    inst = edge_instance(tmp_path, jobs=10)
    job = inst.jobs[0]
    wtype = next(iter(job.batch_time))
    n = processing_capacity(inst.cluster, job, wtype, colocated=False)
    m, g = job.batch_time_for(wtype), job.ps_update_for("*")
    b = inst.cluster.worker_type(wtype).bandwidth  # type: ignore[union-attr]
    assert n == pytest.approx(1 / (m + g + 2 * job.gradient_mb / b))
    assert processing_capacity(inst.cluster, job, wtype, colocated=True) == pytest.approx(1 / (m + g))
    assert chunk_slots(inst.cluster, job, wtype, False) == int(np.ceil(job.epochs * job.minibatches / n - 1e-9))


def test_the_same_seed_gives_the_same_result(tmp_path: Path) -> None:
    inst = edge_instance(tmp_path, jobs=20)
    assert api.run(inst, "edge-cloud", seed=4) == api.run(inst, "edge-cloud", seed=4)


def test_edge_cloud_refuses_clusters_without_edge_servers(tmp_path: Path) -> None:
    cluster_path, trace_path = presets.generate("zhou-ps", jobs=3, seed=1, size=0.2, out=tmp_path)
    with pytest.raises(UnsupportedInstance, match="edge"):
        api.run(api.load_instance(cluster_path, trace_path), "edge-cloud")


# ---- speed augmentation and the LP lower bound of ILP (4) -------------------------------------


def test_the_lp_bound_of_one_chunk_on_one_worker_is_its_fractional_flow_time() -> None:
    # One chunk of 2 slots, edge delay 1: trained in slots 1 and 2, f = (2 + 3) / 2 = 2.5; JCT = 3.
    from scheduling.algorithms.edge.lp import fractional_flow_time, lp_lower_bound

    inst = tiny([("s1", 1, 1)], [{"job_id": "j", "arrival": 0, "chunks": 1, "minibatches": 2}], cloud_delay=10)
    assert lp_lower_bound(inst) == pytest.approx(2.5)
    doc, _ = run_algo(inst)
    assert fractional_flow_time(inst, doc) == pytest.approx(2.5)
    assert doc["metrics"]["total_jct"] == 3


def test_the_lp_bound_is_below_every_schedules_fractional_flow_time(tmp_path: Path) -> None:
    from scheduling.algorithms.edge.lp import fractional_flow_time, lp_lower_bound

    inst = edge_instance(tmp_path, jobs=6, seed=3)
    bound = lp_lower_bound(inst)
    doc, _ = run_algo(inst)
    assert 0 < bound <= fractional_flow_time(inst, doc) + 1e-6
    assert bound <= doc["metrics"]["total_jct"]


def test_speed_augmentation_multiplies_the_processing_capacity(tmp_path: Path) -> None:
    from scheduling.algorithms.edge.lp import speed_augmented

    inst = edge_instance(tmp_path, jobs=3)
    fast = speed_augmented(inst, 0.5)
    job, fjob = inst.jobs[0], fast.jobs[0]
    wtype = next(iter(job.batch_time))
    for zeta in (False, True):
        n = processing_capacity(inst.cluster, job, wtype, zeta)
        assert processing_capacity(fast.cluster, fjob, wtype, zeta) == pytest.approx(1.5 * n)


# ---- baselines of Sec. V-A ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["tiresias-l", "batchsche"])
def test_baselines_wait_for_the_upload_and_complete_every_job(tmp_path: Path, name: str) -> None:
    inst = edge_instance(tmp_path, jobs=15)
    doc = api.run(inst, name, seed=2)
    servers = inst.cluster.servers
    ready = {j.job_id: j.arrival + min(j.upload_delay_to(s) for s in servers) for j in inst.jobs}
    assert any(j.upload_delay for j in inst.jobs)  # the preset gives per-job delays
    assert all(p["start"] >= ready[p["job_id"]] for p in doc["placements"])
    assert doc["metrics"]["completed"] == len(inst.jobs)


def test_batchsche_starts_no_job_of_a_batch_before_the_previous_batch_completes() -> None:
    # "a" forms the first batch alone; "b" arrives while it runs and must wait for it to complete.
    inst = tiny(
        [("s1", 4, 1)],
        [
            {"job_id": "a", "arrival": 0, "chunks": 2, "minibatches": 6},
            {"job_id": "b", "arrival": 1, "chunks": 1, "minibatches": 1},
        ],
        cloud_delay=1,
    )
    doc = api.run(inst, "batchsche")
    jobs = {j["job_id"]: j for j in doc["jobs"]}
    assert jobs["b"]["start"] >= jobs["a"]["completion"]


# ---- storage capacity (Sec. VI) -----------------------------------------------------------------


def with_storage(inst: Instance, storage_gb: float, chunk_gb: float) -> Instance:
    """Every edge server holds ``storage_gb`` GB of chunks; every job's chunks are ``chunk_gb`` GB."""
    import dataclasses

    servers = tuple(
        dataclasses.replace(s, storage_gb=storage_gb) if s.site == "edge" else s for s in inst.cluster.servers
    )
    cluster = dataclasses.replace(inst.cluster, servers=servers)
    return Instance(cluster, tuple(dataclasses.replace(j, chunk_gb=chunk_gb) for j in inst.jobs))


def crowded() -> Instance:
    # One edge server with 3 workers that can store 2 chunks of 1 GB; a job of 3 chunks, cloud far away.
    inst = tiny([("s1", 3, 1)], [{"job_id": "j", "arrival": 0, "chunks": 3, "minibatches": 4}], cloud_delay=30)
    return with_storage(inst, storage_gb=2.0, chunk_gb=1.0)


def test_without_the_storage_option_a_full_server_is_overfilled_and_the_validator_says_so() -> None:
    inst = crowded()
    spec = registry.get("edge-cloud")
    params = spec.parse_params({})
    doc = results.build(inst, simulate(inst, spec.build(inst, params, seed=1)), "edge-cloud", params, 1)
    assert [(g["server"], g["start"], g["end"]) for g in doc["storage"]] == [("s1", 0, 5)] * 3
    assert any("3 GB of chunks stored > storage 2" in p for p in validate(inst, doc))


def test_with_the_storage_option_a_chunk_goes_where_there_is_room() -> None:
    doc, algo = run_algo(crowded(), storage=True)  # run_algo checks the validator
    assert [w.server if w else "cloud" for w in algo.dispatches["j"].workers] == ["s1", "s1", "cloud"]
    assert [(g["server"], g["gb"]) for g in doc["storage"]] == [("s1", 1.0)] * 2


def test_storage_is_freed_when_a_chunk_is_trained_so_a_later_job_can_use_it() -> None:
    # Room for one 1-GB chunk: "a" (done at 1 + 4 = 5) and then "b", arriving at 6, both fit on s1.
    inst = tiny(
        [("s1", 1, 1)],
        [
            {"job_id": "a", "arrival": 0, "chunks": 1, "minibatches": 4},
            {"job_id": "b", "arrival": 6, "chunks": 1, "minibatches": 4},
        ],
        cloud_delay=30,
    )
    doc, algo = run_algo(with_storage(inst, 1.0, 1.0), storage=True)
    assert [algo.dispatches[j].workers[0] is not None for j in ("a", "b")] == [True, True]
    assert [(g["job_id"], g["start"], g["end"]) for g in doc["storage"]] == [("a", 0, 5), ("b", 6, 11)]


def test_edge_only_sends_a_chunk_that_fits_nowhere_at_the_edge_to_the_cloud_and_reports_it() -> None:
    doc, algo = run_algo(crowded(), storage=True, edge_only=True)
    assert [w is None for w in algo.dispatches["j"].workers] == [False, False, True]
    assert doc["edge_cloud"]["storage_fallbacks_to_cloud"] == 1


def test_the_validator_wants_every_running_worker_to_have_its_chunk_stored() -> None:
    doc, _ = run_algo(crowded(), storage=True)
    doc["storage"] = doc["storage"][:1]  # drop a chunk that a worker trains
    assert any("runs 2 worker(s) on 's1'" in p and "1 chunk(s) stored" in p for p in validate(crowded(), doc))


def test_without_a_storage_record_the_validator_counts_one_chunk_per_running_worker() -> None:
    inst = crowded()
    spec = registry.get("srtf")  # tracks no chunks: it runs three workers of "j" on s1 at once
    params = spec.parse_params({})
    doc = results.build(inst, simulate(inst, spec.build(inst, params, seed=1)), "srtf", params, 1)
    assert "storage" not in doc and max(p["count"] for p in doc["placements"] if p["role"] == "worker") == 3
    assert any("3 GB of chunks stored > storage 2" in p for p in validate(inst, doc))
    roomy = with_storage(inst, storage_gb=3.0, chunk_gb=1.0)
    assert validate(roomy, doc) == []


def test_storage_fields_load_from_the_cluster_spec_and_the_trace() -> None:
    from scheduling.errors import InputError

    inst = tiny([("s1", 1, 1)], [{"job_id": "j", "arrival": 0}])
    job = job_from_row({"job_id": "j", "arrival": 0, "chunk_gb": "0.5"}, inst.cluster)
    assert job.chunk_gb == 0.5
    with pytest.raises(InputError, match="chunk_gb"):
        job_from_row({"job_id": "j", "arrival": 0, "chunk_gb": "0"}, inst.cluster)
    spec = {"slot_seconds": 1, "resources": ["gpu"], "servers": [{"id": "s", "capacity": {"gpu": 1}, "storage_gb": 8}]}
    assert cluster_from_dict(spec).servers[0].storage_gb == 8
    with pytest.raises(InputError, match=r"servers\[0\].storage_gb"):
        cluster_from_dict({**spec, "servers": [{"id": "s", "capacity": {"gpu": 1}, "storage_gb": -1}]})


# ---- worker queues: never idle while a dispatched chunk waits -----------------------------------


def haprf_busy(inst: Instance, algo: EdgeCloud) -> dict[tuple[str, str, int], int]:
    """(job, server, slot) -> busy edge workers, by a slot-by-slot reference of the queues.

    Written independently of WorkerQueue: in every slot, every edge worker trains, among the chunks
    dispatched to it whose job has arrived and whose data is uploaded, the one with the largest
    gamma (the earliest dispatched on ties); a worker idles only when it has no such chunk."""
    servers = {s.id: s for s in inst.cluster.servers}
    pending: dict[int, list[list[Any]]] = defaultdict(list)  # id(worker) -> [gamma, seq, release, left, job]
    seq = 0
    for job in inst.jobs:  # the order A_online dispatches in: arrival, then job id
        wtype = next(iter(job.batch_time))
        slots = chunk_slots(inst.cluster, job, wtype, colocated=False)
        gamma = processing_capacity(inst.cluster, job, wtype, False) / (job.epochs * job.chunks * job.minibatches)
        for w in algo.dispatches[job.job_id].workers:
            if w is not None:
                release = job.arrival + job.upload_delay_to(servers[w.server])
                pending[id(w)].append([gamma, seq, release, slots, job.job_id, w.server])
                seq += 1
    busy: dict[tuple[str, str, int], int] = defaultdict(int)
    t = 0
    while any(c[3] > 0 for cs in pending.values() for c in cs):
        for cs in pending.values():
            ready = [c for c in cs if c[2] <= t and c[3] > 0]
            if ready:
                c = min(ready, key=lambda c: (-c[0], c[1]))
                c[3] -= 1
                busy[(c[4], c[5], t)] += 1
        t += 1
    return dict(busy)


def placed_busy(inst: Instance, doc: dict[str, Any]) -> dict[tuple[str, str, int], int]:
    edge = {s.id for s in inst.cluster.servers if s.site == "edge"}
    busy: dict[tuple[str, str, int], int] = defaultdict(int)
    for p in doc["placements"]:
        if p["role"] == "worker" and p["server"] in edge:
            for t in range(p["start"], p["end"]):
                busy[(p["job_id"], p["server"], t)] += p["count"]
    return dict(busy)


def test_a_worker_never_idles_while_a_chunk_dispatched_to_it_waits_even_across_an_empty_cluster() -> None:
    # "a" finishes at 5; nothing is active until "b" arrives at 9; "c" (higher gamma) preempts "b".
    inst = tiny(
        [("s1", 1, 1)],
        [
            {"job_id": "a", "arrival": 0, "chunks": 1, "minibatches": 4},
            {"job_id": "b", "arrival": 9, "chunks": 2, "minibatches": 3},
            {"job_id": "c", "arrival": 10, "chunks": 1, "minibatches": 1},
        ],
        cloud_delay=40,
    )
    doc, algo = run_algo(inst, edge_only=True)
    assert placed_busy(inst, doc) == haprf_busy(inst, algo)
    done = {j["job_id"]: j["completion"] for j in doc["jobs"]}
    assert done == {"a": 5, "b": 10 + 1 + 6, "c": 12}  # b: 10..11, preempted at 11 by c, then 12..17


@pytest.mark.parametrize(("seed", "edge_only"), [(1, False), (2, True), (5, True)])
def test_the_preset_schedule_keeps_every_worker_busy_while_it_has_released_chunks(
    tmp_path: Path, seed: int, edge_only: bool
) -> None:
    inst = edge_instance(tmp_path, jobs=25, seed=seed)
    doc, algo = run_algo(inst, edge_only=edge_only)
    assert placed_busy(inst, doc) == haprf_busy(inst, algo)


@pytest.mark.parametrize("algorithm", ["srtf", "tiresias-l", "batchsche"])
def test_the_edge_baselines_take_the_trace_requests_only_under_worker_rule_request(algorithm: str) -> None:
    jobs = [
        {"job_id": "a", "arrival": 0, "epochs": 1, "chunks": 6, "minibatches": 2, "gpu_request": 2},
        {"job_id": "b", "arrival": 0, "epochs": 1, "chunks": 6, "minibatches": 2, "gpu_request": 3},
    ]
    inst = tiny([("e0", 8, 1)], jobs)

    def workers(params: dict[str, Any]) -> dict[str, int]:
        doc = api.run(inst, algorithm, params, seed=0)
        return {p["job_id"]: p["count"] for p in doc["placements"] if p["role"] == "worker"}

    assert workers({"worker_rule": "request"}) == {"a": 2, "b": 3}
    assert workers({"worker_rule": "chunks"}) == {"a": 6, "b": 6}
    assert workers({"worker_rule": "drawn", "workers_min": 5, "workers_max": 5}) == {"a": 5, "b": 5}
    assert workers({"worker_rule": "most", "workers_max": 4}) == {"a": 4, "b": 4}


def test_the_edge_preset_draws_gpu_requests_from_the_openb_pods() -> None:
    files = presets.build("edge-cloud", jobs=400, seed=1, size=0.1)
    requests = [int(line.split(",")[-1]) for line in files.trace.splitlines()[1:]]
    assert set(requests) <= {1, 2, 4, 8} and requests.count(1) > 0.9 * len(requests)
    assert files.trace.splitlines()[0].endswith(",gpu_request")
