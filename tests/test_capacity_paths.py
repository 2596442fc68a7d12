"""Ledger.first_fit: the server-by-server scan of small clusters and the numpy comparison of large
ones pick the same server after any sequence of bookings and releases."""

from __future__ import annotations

import random

import pytest

from scheduling import capacity
from scheduling.capacity import Ledger
from scheduling.loaders import cluster_from_dict


def _cluster(seed: int):
    rnd = random.Random(seed)
    servers = []
    for i in range(rnd.randint(3, 40)):
        server = {
            "id": f"s{i}",
            "capacity": {"gpu": rnd.choice([0, 2, 4, 8]), "cpu": rnd.choice([4, 16, 32.5])},
        }
        if rnd.random() < 0.2:
            server["pool"] = rnd.choice(["worker", "ps"])
        servers.append(server)
    if rnd.random() < 0.5:
        servers.append({"id": "cloud", "unlimited": True, "capacity": {}})
    return cluster_from_dict(
        {
            "slot_seconds": 60,
            "resources": [{"name": "gpu", "unit": "GPU"}, {"name": "cpu", "unit": "vCPU"}],
            "servers": servers,
            "worker_types": [{"id": "w", "demand": {"gpu": 1, "cpu": 2}}],
            "ps_types": [{"id": "p", "demand": {"cpu": 1.5}}],
        }
    )


def _ledger(seed: int, small: bool, monkeypatch: pytest.MonkeyPatch) -> Ledger:
    monkeypatch.setattr(capacity, "SMALL_CLUSTER", 10**6 if small else 0)
    ledger = Ledger(_cluster(seed))  # a new Cluster object: its own index, built under this setting
    assert ledger._index.small is small
    return ledger


@pytest.mark.parametrize("seed", range(12))
def test_the_small_cluster_scan_picks_the_server_numpy_picks(seed, monkeypatch):
    small, large = _ledger(seed, True, monkeypatch), _ledger(seed, False, monkeypatch)
    rnd = random.Random(100 + seed)
    booked: list[tuple[str, str, dict[str, float], int]] = []
    roles_choices = [("worker",), ("ps",), ("worker", "ps")]
    checked = 0
    for _ in range(400):
        demand = {"gpu": rnd.choice([0, 0.5, 1, 2, 3]), "cpu": rnd.choice([0.1, 1, 2.5, 7])}
        roles = rnd.choice(roles_choices)
        got = small.first_fit(roles, demand)
        assert got == large.first_fit(roles, demand)
        checked += got is not None
        if rnd.random() < 0.3 and booked:
            server, role, d, n = booked.pop(rnd.randrange(len(booked)))
            small.release(server, d, n)
            large.release(server, d, n)
        elif got is not None and small.server(got) is not None:
            role = roles[0]
            n = rnd.randint(1, 2)
            if small.take(got, role, demand, n):
                assert large.take(got, role, demand, n)
                booked.append((got, role, demand, n))
        if rnd.random() < 0.05:  # copies share entries until written
            small, large = small.copy(), large.copy()
    assert checked > 0


@pytest.mark.parametrize("seed", range(12))
def test_room_is_max_count_of_every_server_in_both_paths(seed, monkeypatch):
    # Ledger.room (read by the first-fit spread of common.place) lists the servers where at least one
    # more instance fits, with max_count of each: scanned one by one on small clusters, by numpy on
    # large ones. Both must equal max_count after any sequence of bookings, releases and copies.
    small, large = _ledger(seed, True, monkeypatch), _ledger(seed, False, monkeypatch)
    rnd = random.Random(200 + seed)
    booked: list[tuple[str, dict[str, float], int]] = []
    servers = [s.id for s in small.cluster.servers]
    nonempty = 0
    for _ in range(300):
        demand = {"gpu": rnd.choice([0, 0.5, 1, 2, 3]), "cpu": rnd.choice([0, 0.1, 1, 2.5, 7])}
        role = rnd.choice(["worker", "ps"])
        expected = [(s, k) for s in servers if (k := small.max_count(s, role, demand)) > 0]
        assert small.room(role, demand) == expected
        assert large.room(role, demand) == expected
        nonempty += bool(expected)
        if rnd.random() < 0.3 and booked:
            server, d, n = booked.pop(rnd.randrange(len(booked)))
            small.release(server, d, n)
            large.release(server, d, n)
        elif expected:
            server, k = rnd.choice(expected)
            n = rnd.randint(1, min(k, 3))
            assert small.take(server, role, demand, n) and large.take(server, role, demand, n)
            booked.append((server, demand, n))
        if rnd.random() < 0.05:
            small, large = small.copy(), large.copy()
    assert nonempty > 50
