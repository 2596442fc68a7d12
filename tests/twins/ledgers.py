"""Twins of the ledger (scheduling/capacity.py): ``first_fit`` and ``room`` by numpy on large
clusters against the server-by-server scan of small ones, and ``room`` of both against
``max_count`` of every server, after any sequence of bookings, releases and copies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from scheduling import capacity
from scheduling.capacity import Ledger
from scheduling.loaders import cluster_from_dict
from tests.twins.core import Twin, first_difference

ROLES = [("worker",), ("ps",), ("worker", "ps")]


@dataclass(frozen=True)
class Ops:
    """Servers (GPUs, CPUs, pool or None), a cloud server or not, and steps: (GPUs, CPUs, roles,
    action, pick, count, copy) with action "release" (booking number pick), "take" (on the
    first-fit server, or on room entry pick) or "none"."""

    servers: tuple[tuple[int, float, str | None], ...]
    cloud: bool
    steps: tuple[tuple[float, float, int, str, int, int, bool], ...]

    def ledger(self, small: bool) -> Ledger:
        servers: list[dict[str, Any]] = []
        for i, (gpu, cpu, pool) in enumerate(self.servers):
            servers.append({"id": f"s{i}", "capacity": {"gpu": gpu, "cpu": cpu}, **({"pool": pool} if pool else {})})
        if self.cloud:
            servers.append({"id": "cloud", "unlimited": True, "capacity": {}})
        spec = {
            "slot_seconds": 60,
            "resources": [{"name": "gpu", "unit": "GPU"}, {"name": "cpu", "unit": "vCPU"}],
            "servers": servers,
            "worker_types": [{"id": "w", "demand": {"gpu": 1, "cpu": 2}}],
            "ps_types": [{"id": "p", "demand": {"cpu": 1.5}}],
        }
        old = capacity.SMALL_CLUSTER
        capacity.SMALL_CLUSTER = 10**6 if small else 0
        try:
            ledger = Ledger(cluster_from_dict(spec))  # a new Cluster object: its own index, built here
        finally:
            capacity.SMALL_CLUSTER = old
        assert ledger._index.small is small
        return ledger


OPS = st.builds(
    Ops,
    st.lists(
        st.tuples(
            st.sampled_from([0, 2, 4, 8]),
            st.sampled_from([4.0, 16.0, 32.5]),
            st.sampled_from([None] * 4 + ["worker", "ps"]),
        ),
        min_size=1,
        max_size=40,
    ).map(tuple),
    st.booleans(),
    st.lists(
        st.tuples(
            st.sampled_from([0, 0.5, 1, 2, 3]),
            st.sampled_from([0, 0.1, 1, 2.5, 7]),
            st.integers(0, 2),
            st.sampled_from(["release", "take", "take", "none"]),
            st.integers(0, 1000),
            st.integers(1, 3),
            st.booleans(),
        ),
        min_size=1,
        max_size=120,
    ).map(tuple),
)


def walk(ops: Ops, small: bool, room: str) -> list[Any]:
    """The answers of one ledger along the steps; ``room``: "ledger" (Ledger.room) or "max_count"
    (every server's max_count, the transcription). The steps book on the answers, so two ledgers
    that answer alike take the same steps."""
    ledger = ops.ledger(small)
    servers = [s.id for s in ledger.cluster.servers]
    booked: list[tuple[str, dict[str, float], int]] = []
    log: list[Any] = []
    for gpu, cpu, roles_at, action, pick, count, copy in ops.steps:
        demand = {"gpu": gpu, "cpu": cpu}
        roles = ROLES[roles_at]
        role = roles[0]
        got = ledger.first_fit(roles, demand)
        if room == "ledger":
            fits = ledger.room(role, demand)
        else:
            fits = [(s, k) for s in servers if (k := ledger.max_count(s, role, demand)) > 0]
        log.append((got, fits))
        if action == "release" and booked:
            server, d, n = booked.pop(pick % len(booked))
            ledger.release(server, d, n)
        elif action == "take" and (got is not None or fits):
            server = got if got is not None else fits[pick % len(fits)][0]
            taken = ledger.take(server, role, demand, count)  # may not fit: nothing booked then
            log.append(taken)
            if taken:
                booked.append((server, demand, count))
        if copy:  # copies share entries until written; the engine books on its own ledger after a copy
            other = ledger.copy()
            log.append(other.first_fit(roles, demand))
            if pick % 2 == 0:
                ledger = other
    return log


def compare(fast: list[Any], reference: list[Any]) -> str | None:
    return first_difference(fast, reference, "answers")


def features(log: list[Any]) -> set[str]:
    seen = set()
    if any(isinstance(x, tuple) and x[0] is not None for x in log):
        seen.add("first fit found")
    if any(isinstance(x, tuple) and x[1] for x in log):
        seen.add("room found")
    if any(x is True for x in log):
        seen.add("taken")
    return seen


TWINS = [
    Twin(
        "ledger-numpy",
        "Ledger.first_fit and room by numpy (large clusters) vs the server scan and max_count",
        OPS,
        lambda ops: walk(ops, small=False, room="ledger"),
        lambda ops: walk(ops, small=True, room="max_count"),
        compare,
        examples=60,
        features=features,
        must_see=frozenset({"first fit found", "room found", "taken"}),
    ),
    Twin(
        "ledger-scan-room",
        "Ledger.room by the server scan (small clusters) vs max_count",
        OPS,
        lambda ops: walk(ops, small=True, room="ledger"),
        lambda ops: walk(ops, small=True, room="max_count"),
        compare,
        examples=60,
        features=features,
        must_see=frozenset({"room found", "taken"}),
    ),
]
