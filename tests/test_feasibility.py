"""Trace validation against a cluster: work per distinct demand and server shape, same answers."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling.loaders import Feasibility, cluster_from_dict, parse_trace
from scheduling.model import Server


def node_list(servers: int) -> dict:
    """A node list of three server shapes, as imported production node lists are."""
    shapes = [{"gpu": 8, "cpu": 64}, {"gpu": 2, "cpu": 32}, {"gpu": 4, "cpu": 16}]
    return {
        "slot_seconds": 60,
        "resources": ["gpu", "cpu"],
        "servers": [{"id": f"n{i}", "capacity": shapes[i % 3]} for i in range(servers)],
        "worker_types": [{"id": "w", "demand": {"gpu": 1, "cpu": 4}}],
        "ps_types": [{"id": "p", "demand": {"cpu": 2}}],
    }


def test_validating_a_trace_looks_at_each_server_shape_once_per_distinct_demand(monkeypatch):
    cluster = cluster_from_dict(node_list(600))
    rows = ["job_id,arrival,gpus,duration,epochs,chunks,minibatches,batch_time,ps_update,gradient_mb"]
    rows += [f"r{i},{i},{1 + i % 4},600,,,,,," for i in range(1500)]
    rows += [f"e{i},{i},,,1,2,10,6,1,100" for i in range(500)]
    calls = 0
    accepts = Server.accepts

    def counting(self: Server, role: str) -> bool:
        nonlocal calls
        calls += 1
        return accepts(self, role)

    monkeypatch.setattr(Server, "accepts", counting)
    jobs = parse_trace("\n".join(rows) + "\n", cluster, "t.csv", "csv")
    assert len(jobs) == 2000
    # 2,000 jobs x 600 servers would be 1,200,000 looks; a few per shape and demand are enough.
    assert calls < 200


def naive_instances(servers: list[Server], role: str, demand: dict[str, float]) -> float:
    total = 0.0
    for s in servers:
        if not s.accepts(role):
            continue
        if s.unlimited:
            return math.inf
        per = [math.floor(s.capacity.get(r, 0.0) / a + 1e-9) for r, a in demand.items() if a > 0]
        total += min(per, default=math.inf)
    return total


def fits(s: Server, demand: dict[str, float]) -> bool:
    return s.unlimited or all(s.capacity.get(r, 0.0) + 1e-9 >= a for r, a in demand.items())


def naive_pair(servers: list[Server], worker: dict[str, float], ps: dict[str, float]) -> bool:
    return any(
        w.accepts("worker") and p.accepts("ps") and fits(w, worker) and fits(p, ps)
        and (w.id != p.id or fits(w, {r: worker.get(r, 0) + ps.get(r, 0) for r in {*worker, *ps}}))
        for w in servers for p in servers
    )  # fmt: skip


server_specs = st.lists(
    st.fixed_dictionaries(
        {
            "capacity": st.fixed_dictionaries({"gpu": st.integers(0, 4), "cpu": st.integers(0, 8)}),
            "pool": st.sampled_from(["any", "worker", "ps"]),
            "unlimited": st.booleans(),
        }
    ),
    min_size=1,
    max_size=6,
)
demands = st.fixed_dictionaries({"gpu": st.integers(0, 3), "cpu": st.integers(0, 6)})


@settings(max_examples=150, deadline=None)
@given(server_specs, st.lists(demands, min_size=1, max_size=4), st.lists(demands, min_size=1, max_size=3))
def test_cached_answers_equal_a_server_by_server_check(specs, workers, pss):
    doc = {"slot_seconds": 60, "resources": ["gpu", "cpu"],
           "servers": [{"id": f"s{i}", **spec} for i, spec in enumerate(specs)]}  # fmt: skip
    cluster = cluster_from_dict(doc)
    servers = list(cluster.servers)
    fit = Feasibility(cluster)
    for role in ("worker", "ps"):
        for d in [*workers, *pss]:
            assert fit.instances(role, d) == naive_instances(servers, role, d)
            assert fit.fits_somewhere(role, d) == any(s.accepts(role) and fits(s, d) for s in servers)
    for w in workers:
        for p in pss:
            assert fit.pair_fits(w, p) == naive_pair(servers, w, p), (w, p)


def test_an_unlimited_server_holds_any_number_of_instances():
    doc = node_list(3)
    doc["servers"].append({"id": "cloud", "capacity": {"gpu": 1, "cpu": 1}, "unlimited": True})
    assert Feasibility(cluster_from_dict(doc)).instances("worker", {"gpu": 1}) == pytest.approx(math.inf)
