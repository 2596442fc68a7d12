"""A-SRPT's per-iteration time (eqs. (4)-(7)) and the Heavy-Edge mapping (Sec. IV-B)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling.algorithms.asrpt.mapping import alpha_min_estimate, counts_of, heavy_edge, job_graph
from scheduling.model import Cluster, Job, Resource, Server, Stage
from scheduling.pipeline import Link, alpha, alpha_max, counts_from_allocations, stage_type
from scheduling.speed import Allocation, rate

LINK = Link(gpus=4, nic=100.0, intra=1000.0)  # 4 GPUs, NIC 100 MB/slot, NVLink 1000 MB/slot


def two_stage_job() -> tuple[Stage, ...]:
    # Stage 1: 2 replicas, 10 MB of parameters; stage 2: 1 replica; 5 MB of activations between.
    return (
        Stage(replicas=2, forward=1.0, backward=2.0, activation_out=5.0, params=10.0),
        Stage(replicas=1, forward=0.5, backward=1.0, activation_in=5.0),
    )


def test_alpha_on_one_server_is_compute_plus_nvlink_traffic() -> None:
    stages = two_stage_job()
    counts = [{"a": 2}, {"a": 1}]
    # Stage 1 on a: comp 3; comm: out to stage 2 (k=1, here 1): local 2*5*1/1 = 10 MB over 1000
    # -> 0.01; AllReduce (x = k = 2): 2*(1)/2*10 = 10 MB over 1000 -> 0.01. beta = 3.02.
    # Stage 2 on a: comp 1.5; in from stage 1 (k=2, both here): local 2*5*2/2 = 10 -> 0.01. 1.51.
    assert alpha(stages, counts, {"a": LINK}) == pytest.approx(3.02)


def test_alpha_charges_the_nic_share_when_replicas_are_split() -> None:
    stages = two_stage_job()
    counts = [{"a": 1, "b": 1}, {"b": 1}]
    links = {"a": LINK, "b": LINK}
    # Stage 1 on a (x=1): remote out 2*5*(1-0)/1 = 10 MB; x / (x/g * B) = 10*1/(1/4*100) = 0.4;
    # AllReduce x < k: 10 MB / (1/4 * 100) = 0.4. beta = 3 + 0.4 + 0.4 = 3.8.
    # Stage 1 on b: local out 10 MB / 1000 = 0.01, AllReduce 0.4: 3.41.
    # Stage 2 on b: in from stage 1: remote 2*5*1/2 = 5 -> 5*4/100 = 0.2, local 5/1000 = 0.005: 1.705.
    assert alpha(stages, counts, links) == pytest.approx(3.8)


def test_alpha_max_puts_every_replica_on_its_own_server() -> None:
    stages = two_stage_job()
    # Stage 1 replica: remote out 10 MB -> 10*4/100 = 0.4, AllReduce 0.4: 3.8; stage 2: remote in
    # 2*5*2/2 = 10 -> 0.4: 1.9.
    assert alpha_max(stages, LINK) == pytest.approx(3.8)


def test_single_gpu_job_costs_its_compute_time_only() -> None:
    stages = (Stage(replicas=1, forward=2.0, backward=4.0, params=100.0),)
    assert alpha(stages, [{"a": 1}], {"a": LINK}) == pytest.approx(6.0)
    assert alpha_max(stages, LINK) == pytest.approx(6.0)


def fig2_stages() -> tuple[Stage, ...]:
    # Fig. 2: three stages of two replicas; the stage-1 AllReduce edge is the heaviest (20 MB),
    # each stage-1 replica sends 1 MB to each stage-2 replica (2 d_out / k = 1 MB).
    return (
        Stage(replicas=2, forward=1, backward=1, activation_out=1.0, params=20.0),
        Stage(replicas=2, forward=1, backward=1, activation_in=1.0, activation_out=0.5, params=10.0),
        Stage(replicas=2, forward=1, backward=1, activation_in=0.5, params=0.2),
    )


def test_heavy_edge_reproduces_the_fig2_example() -> None:
    graph = job_graph(fig2_stages())
    where = heavy_edge(graph, [("one-a", 1), ("four", 4), ("one-b", 1)])
    # The 4-GPU server takes S1-R1, S1-R2 (20 MB edge) and then S2-R1, S2-R2; S3 goes to the 1-GPU servers.
    assert where[:4] == ["four"] * 4
    assert sorted(where[4:]) == ["one-a", "one-b"]


def test_fig2_graph_has_the_papers_edge_weights() -> None:
    graph = job_graph(fig2_stages())
    assert graph.adjacency[0][1] == pytest.approx(20.0)  # 2 (k-1)/k h with k = 2
    assert graph.adjacency[0][2] == pytest.approx(1.0)
    assert graph.adjacency[0][3] == pytest.approx(1.0)


def test_tree_allreduce_edges_weigh_half_of_ring_edges() -> None:
    stages = (Stage(replicas=4, params=8.0),)
    ring, tree = job_graph(stages, "ring"), job_graph(stages, "tree")
    assert ring.adjacency[0][1] == pytest.approx(12.0)
    assert min(w for _, _, w in tree.edges()) == pytest.approx(6.0)


def test_alpha_min_estimate_packs_a_job_on_the_fewest_servers() -> None:
    stages = (Stage(replicas=2, forward=1, backward=1, params=40.0), Stage(replicas=2, forward=1, backward=1))
    # 4 replicas on one 4-GPU server: AllReduce 40 MB over NVLink -> 0.04.
    assert alpha_min_estimate(job_graph(stages), LINK) == pytest.approx(2.04)


stage_lists = st.lists(
    st.builds(
        Stage,
        replicas=st.integers(1, 4),
        forward=st.floats(0.1, 2),
        backward=st.floats(0.1, 2),
        activation_in=st.floats(0, 50),
        activation_out=st.floats(0, 50),
        params=st.floats(0, 100),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=60, deadline=None)
@given(stage_lists, st.lists(st.integers(0, 8), min_size=1, max_size=6), st.sampled_from(["ring", "tree"]))
def test_heavy_edge_places_every_replica_once_within_free_gpus(
    stages: list[Stage], free: list[int], allreduce: str
) -> None:
    graph = job_graph(stages, allreduce)
    # Cut the free GPUs down (or pad the last server) so they sum to the job's replicas.
    servers: list[tuple[str, int]] = []
    left = graph.size
    for i, f in enumerate(free):
        take = min(f, left)
        servers.append((f"m{i}", take))
        left -= take
    servers.append(("pad", left))
    where = heavy_edge(graph, servers)
    assert len(where) == graph.size
    cap = dict(servers)
    for server in set(where):
        assert where.count(server) <= cap[server]
    counts = counts_of(graph, where)
    assert [sum(c.values()) for c in counts] == [s.replicas for s in stages]


@settings(max_examples=40, deadline=None)
@given(stage_lists)
def test_packed_estimate_is_no_slower_than_alpha_max(stages: list[Stage]) -> None:
    graph = job_graph(stages)
    assert alpha_min_estimate(graph, LINK) <= alpha_max(stages, LINK) + 1e-9


def tiny_cluster() -> Cluster:
    servers = tuple(Server(f"n{i}", {"gpu": 4.0}, nic_bw=LINK.nic, intra_bw=LINK.intra) for i in range(2))
    return Cluster(slot_seconds=60, resources=(Resource("gpu"),), servers=servers)


def test_engine_rate_follows_the_stage_placement() -> None:
    cluster = tiny_cluster()
    job = Job("j", 0, arch="pipeline", gpus=3, stages=two_stage_job(), work=100)
    together = [Allocation("j", "n0", "worker", stage_type(0), 2), Allocation("j", "n0", "worker", stage_type(1), 1)]
    split = [
        Allocation("j", "n0", "worker", stage_type(0), 1),
        Allocation("j", "n1", "worker", stage_type(0), 1),
        Allocation("j", "n1", "worker", stage_type(1), 1),
    ]
    assert rate(cluster, job, together) == pytest.approx(1 / 3.02)
    assert rate(cluster, job, split) == pytest.approx(1 / 3.8)
    assert rate(cluster, job, together[:1]) == 0.0  # stage 2 not placed: no progress


def test_generic_gpu_allocations_map_replicas_in_stage_order_over_servers_in_cluster_order() -> None:
    stages = two_stage_job()
    counts = counts_from_allocations(stages, [("n1", "gpu", 2), ("n0", "gpu", 1)], {"n0": 0, "n1": 1})
    assert counts == [{"n0": 1, "n1": 1}, {"n1": 1}]
