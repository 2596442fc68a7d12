"""A capacity ledger: what is used on each server in one slot, and whether more fits.

The engine keeps one ledger of everything committed and checks each change on it (the old
allocation released, the new one booked); algorithms build their decisions on a fresh ledger or on a
copy of the engine's (``View.committed_ledger``), so that both agree on what "fits" means (capacity
per server and resource, server pools, and unlimited servers that never fill up).
"""

from __future__ import annotations

import math
from collections import defaultdict

from scheduling.lazy import LazyModule
from scheduling.model import Amounts, Cluster, Server

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyModule("numpy")

TOLERANCE = 1e-9
SMALL_CLUSTER = 64
"""Up to this many servers, ``first_fit`` scans the servers in Python and no per-server arrays are
kept (numpy is not even imported for it); above it, it compares numpy arrays of every server at
once. Both give the same server: the same floating-point sums compared the same way."""


class _Index:
    """Per-cluster facts a ledger needs, computed once per cluster (ledgers are made per event)."""

    def __init__(self, cluster: Cluster) -> None:
        self.servers = {s.id: s for s in cluster.servers}
        self.roles: dict[str, tuple[str, ...]] = {  # server -> roles it accepts
            s.id: tuple(r for r in ("worker", "ps") if s.accepts(r)) for s in cluster.servers
        }
        self.unlimited = {r: any(s.unlimited and s.accepts(r) for s in cluster.servers) for r in ("worker", "ps")}
        self.free: dict[str, dict[str, float]] = {r: defaultdict(float) for r in ("worker", "ps")}
        # server -> the roles whose summed free capacity (could_fit) counts it: none if unlimited
        self.counted = {s.id: () if s.unlimited else self.roles[s.id] for s in cluster.servers}
        self.by_roles: dict[tuple[str, ...], np.ndarray] = {}  # roles -> mask of servers accepting all
        self.by_roles_small: dict[tuple[str, ...], list[Server]] = {}  # roles -> servers accepting all
        self.any_eligible: dict[tuple[str, ...], bool] = {}  # roles -> whether a server accepts all (by_roles)
        self.ids = [s.id for s in cluster.servers]  # cluster order
        self.pos = {s.id: i for i, s in enumerate(cluster.servers)}
        self.small = len(cluster.servers) <= SMALL_CLUSTER
        self._unlimited_mask: np.ndarray | None = None
        self.capacity: dict[str, np.ndarray] = {}  # resource -> capacity per server, cluster order
        # every resource a server states: the per-server arrays a copied ledger starts with (copy)
        self.resources = tuple(dict.fromkeys(r for s in cluster.servers for r in s.capacity))
        # roles -> (mask of limited servers accepting all, of unlimited ones or None if there are none)
        self.masks: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray | None]] = {}
        for s in cluster.servers:
            if not s.unlimited:
                for role in self.roles[s.id]:
                    for resource, amount in s.capacity.items():
                        self.free[role][resource] += amount

    def capacity_of(self, resource: str) -> np.ndarray:
        arr = self.capacity.get(resource)
        if arr is None:
            arr = self.capacity[resource] = np.array([s.capacity.get(resource, 0.0) for s in self.servers.values()])
        return arr

    @property
    def unlimited_mask(self) -> np.ndarray:
        if self._unlimited_mask is None:
            self._unlimited_mask = np.array([s.unlimited for s in self.servers.values()], dtype=bool)
        return self._unlimited_mask

    def eligible_servers(self, cluster: Cluster, roles: tuple[str, ...]) -> list[Server]:
        servers = self.by_roles_small.get(roles)
        if servers is None:
            servers = self.by_roles_small[roles] = [s for s in cluster.servers if all(s.accepts(r) for r in roles)]
        return servers

    def split(self, cluster: Cluster, roles: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray | None]:
        """The servers accepting every role in ``roles``: (limited ones, unlimited ones or None)."""
        masks = self.masks.get(roles)
        if masks is None:
            eligible = self.eligible(cluster, roles)
            unlimited = eligible & self.unlimited_mask
            masks = self.masks[roles] = (eligible & ~self.unlimited_mask, unlimited if unlimited.any() else None)
        return masks

    def eligible(self, cluster: Cluster, roles: tuple[str, ...]) -> np.ndarray:
        mask = self.by_roles.get(roles)
        if mask is None:
            mask = self.by_roles[roles] = np.array([all(s.accepts(r) for r in roles) for s in cluster.servers])
            self.any_eligible[roles] = bool(mask.any())
        return mask


_INDEX: dict[int, tuple[Cluster, _Index]] = {}


def _index(cluster: Cluster) -> _Index:
    entry = _INDEX.get(id(cluster))
    if entry is None or entry[0] is not cluster:
        if len(_INDEX) > 64:
            _INDEX.clear()
        entry = _INDEX[id(cluster)] = (cluster, _Index(cluster))
    return entry[1]


class Ledger:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        index = _index(cluster)
        self._servers = index.servers
        self._unlimited = index.unlimited
        self._role_free = {role: dict(free) for role, free in index.free.items()}
        self._used: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self._index = index
        # resource -> used per server, cluster order (large clusters): the values of _used, copied
        # in when an array is read (servers booked since then are in _stale)
        self._used_arr: dict[str, np.ndarray] = {}
        self._stale: set[str] = set()
        self._shared: set[str] = set()  # servers whose _used entry another ledger shares (copy on write)

    def copy(self) -> Ledger:
        """An independent ledger with the same bookings; per-server entries are copied on write."""
        other = Ledger.__new__(Ledger)
        other.cluster = self.cluster
        other._servers = self._servers
        other._unlimited = self._unlimited
        other._index = self._index
        other._role_free = {role: dict(free) for role, free in self._role_free.items()}
        other._used = self._used.copy()
        self._shared = set(self._used)
        other._shared = set(self._used)
        if not self._index.small:  # copies (one per decision) start with every array, up to date
            for resource in self._index.resources:
                if resource not in self._used_arr:
                    self._arr(resource)
        self._refresh()  # so that copies of a long-lived ledger (the engine's) start up to date
        other._used_arr = {r: a.copy() for r, a in self._used_arr.items()}
        other._stale = set()
        return other

    def first_fit(self, roles: tuple[str, ...], combined: Amounts) -> str | None:
        """The first server, in cluster order, that accepts every role in ``roles`` and has room for
        the ``combined`` demand: what ``fits(server, role, combined)`` says, for all servers at once
        (the same floating-point sums, compared the same way)."""
        index = self._index
        if index.small:
            return self._first_fit_small(roles, combined)
        limited, unlimited = index.split(self.cluster, roles)
        if not index.any_eligible[roles]:  # e.g. a worker and a PS on separate pools (OASiS clusters)
            return None
        ok = limited
        for r, a in combined.items():
            if a > 0:
                free = index.capacity_of(r) - self._arr(r)
                free += TOLERANCE
                free /= a
                ok = ok & (free >= 1.0)
        if unlimited is not None:
            ok = ok | unlimited
        i = int(ok.argmax())
        return index.ids[i] if ok[i] else None

    def _first_fit_small(self, roles: tuple[str, ...], combined: Amounts) -> str | None:
        """``first_fit`` server by server (small clusters)."""
        wanted = [(r, a) for r, a in combined.items() if a > 0]
        for server in self._index.eligible_servers(self.cluster, roles):
            if server.unlimited:
                return server.id
            used = self._used.get(server.id)
            for r, a in wanted:
                free = server.capacity.get(r, 0.0) - (used.get(r, 0.0) if used is not None else 0.0)
                if not (free + TOLERANCE) / a >= 1.0:
                    break
            else:
                return server.id
        return None

    def _refresh(self) -> None:
        """Copy the sums of the servers booked since the arrays were last read into them."""
        if self._stale:
            pos, arrays = self._index.pos, self._used_arr.items()
            for server_id in self._stale:
                used = self._used[server_id]
                for r, values in arrays:
                    values[pos[server_id]] = used.get(r, 0.0)
            self._stale.clear()

    def _arr(self, resource: str) -> np.ndarray:
        """The used amounts of ``resource`` per server, up to date (large clusters only)."""
        self._refresh()
        arr = self._used_arr.get(resource)
        if arr is None:
            used_of = self._used
            ids = self._index.ids
            arr = np.array([used_of[s].get(resource, 0.0) if s in used_of else 0.0 for s in ids])
            self._used_arr[resource] = arr
        return arr

    def could_fit(self, role: str, demand: Amounts, count: int) -> bool:
        """A quick necessary condition: the free capacity summed over all servers suffices."""
        if self._unlimited.get(role, False):
            return True
        free = self._role_free[role]
        for r, amount in demand.items():  # a loop, not all(generator): a failed placement starts here
            if amount > 0 and not amount * count <= free.get(r, 0.0) + TOLERANCE:
                return False
        return True

    def role_free(self, role: str, resource: str) -> float:
        """The free amount of ``resource`` summed over the servers that accept ``role`` (inf if one
        of them is unlimited): what ``could_fit`` compares against."""
        if self._unlimited.get(role, False):
            return math.inf
        return self._role_free[role].get(resource, 0.0)

    def counted_roles(self, server_id: str) -> tuple[str, ...]:
        """The roles whose summed free capacity (``role_free``) a booking on the server changes:
        those it accepts, none if it is unlimited."""
        return self._index.counted[server_id]

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
        used = self._used.get(server_id)  # self.free(server_id, resource) inlined: a hot path
        for resource, amount in demand.items():
            if amount <= 0:
                continue
            free = server.capacity.get(resource, 0.0) - (used.get(resource, 0.0) if used is not None else 0.0)
            best = min(best, math.floor((free + TOLERANCE) / amount))
        return max(best, 0)

    def room(self, role: str, demand: Amounts) -> list[tuple[str, int]]:
        """The servers, in cluster order, where at least one more instance of ``demand`` fits in
        ``role``, each with ``max_count`` (a large number if unlimited). Booking on one server leaves
        the others' counts as they are, so a first-fit spread can read them all at once. Above
        SMALL_CLUSTER servers, numpy computes every count at once: the same floating-point
        operations as max_count, so the same counts."""
        index = self._index
        if index.small:
            counts = ((s.id, self.max_count(s.id, role, demand)) for s in self.cluster.servers)
            return [(server_id, k) for server_id, k in counts if k > 0]
        many = float(1 << 30)
        best = np.full(len(index.ids), many)
        for resource, amount in demand.items():
            if amount > 0:
                free = index.capacity_of(resource) - self._arr(resource)
                np.minimum(best, np.floor((free + TOLERANCE) / amount), out=best)
        best[index.unlimited_mask] = many
        best[~index.eligible(self.cluster, (role,))] = 0.0
        ids = index.ids
        return [(ids[i], int(best[i])) for i in np.flatnonzero(best >= 1.0)]

    def fits(self, server_id: str, role: str, demand: Amounts, count: int = 1) -> bool:
        return self.max_count(server_id, role, demand) >= count

    def take(self, server_id: str, role: str, demand: Amounts, count: int = 1) -> bool:
        """Book ``count`` instances if they fit; return whether they did (nothing booked if not)."""
        if not self.fits(server_id, role, demand, count):
            return False
        self._book(server_id, demand, count)
        return True

    def book(self, server_id: str, demand: Amounts, count: int = 1) -> None:
        """Book ``count`` instances that the caller found to fit (``first_fit``, ``room``), unchecked."""
        self._book(server_id, demand, count)

    def _book(self, server_id: str, demand: Amounts, count: int) -> None:
        if server_id in self._shared:
            self._used[server_id] = defaultdict(float, self._used[server_id])
            self._shared.discard(server_id)
        used = self._used[server_id]
        index = self._index
        if not index.small:  # small clusters keep no per-server arrays (see first_fit)
            self._stale.add(server_id)  # its array entries are copied from ``used`` at the next read
        roles, role_free = index.counted[server_id], self._role_free
        for resource, amount in demand.items():
            booked = amount * count
            used[resource] += booked
            for role in roles:
                free = role_free[role]
                free[resource] = free.get(resource, 0.0) - booked

    def release(self, server_id: str, demand: Amounts, count: int = 1) -> None:
        """Undo a ``take`` (used when an all-or-nothing placement fails half-way)."""
        self._book(server_id, demand, -count)  # amount * -count is exactly -(amount * count)
