"""A capacity ledger: what is used on each server in one slot, and whether more fits.

The engine checks every decision on a fresh ledger; algorithms build their decisions on one too,
so that both agree on what "fits" means (capacity per server and resource, server pools, and
unlimited servers that never fill up).
"""

from __future__ import annotations

import math
from collections import defaultdict

from scheduling.model import Amounts, Cluster, Server

TOLERANCE = 1e-9


class Ledger:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._servers = {s.id: s for s in cluster.servers}
        self._used: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))

    def server(self, server_id: str) -> Server | None:
        return self._servers.get(server_id)

    def used(self, server_id: str, resource: str) -> float:
        return self._used[server_id][resource] if server_id in self._used else 0.0

    def free(self, server_id: str, resource: str) -> float:
        server = self._servers[server_id]
        if server.unlimited:
            return math.inf
        return server.capacity.get(resource, 0.0) - self.used(server_id, resource)

    def max_count(self, server_id: str, role: str, demand: Amounts) -> int:
        """How many more instances of ``demand`` fit on the server (a large number if unlimited)."""
        server = self._servers.get(server_id)
        if server is None or not server.accepts(role):
            return 0
        if server.unlimited:
            return 1 << 30
        best = 1 << 30
        for resource, amount in demand.items():
            if amount <= 0:
                continue
            best = min(best, math.floor((self.free(server_id, resource) + TOLERANCE) / amount))
        return max(best, 0)

    def fits(self, server_id: str, role: str, demand: Amounts, count: int = 1) -> bool:
        return self.max_count(server_id, role, demand) >= count

    def take(self, server_id: str, role: str, demand: Amounts, count: int = 1) -> bool:
        """Book ``count`` instances if they fit; return whether they did (nothing booked if not)."""
        if not self.fits(server_id, role, demand, count):
            return False
        used = self._used[server_id]
        for resource, amount in demand.items():
            used[resource] += amount * count
        return True

    def release(self, server_id: str, demand: Amounts, count: int = 1) -> None:
        """Undo a ``take`` (used when an all-or-nothing placement fails half-way)."""
        used = self._used[server_id]
        for resource, amount in demand.items():
            used[resource] -= amount * count
