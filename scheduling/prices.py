"""Price evolution of the price-based algorithms (``zhou``, ``oasis``), recorded compactly.

A price-based algorithm keeps a price per (resource, server, slot) and raises it as it admits
jobs. ``PriceLog`` records, after every arrival decision, only the entries that changed, so that
the dashboard can redraw

(a) per resource, how the price of the current and upcoming slots evolves as decisions are made
    (mean and max over servers and over the slots ``t .. end`` of the window, where ``t`` is the
    slot of the decision), and
(b) the server x slot price matrix of one resource at any chosen decision (``matrix_at``).

The result field ``prices`` (schema ``mlsched.prices/3``)::

    {"schema": "mlsched.prices/3",
     "resources": ["gpu", ...], "servers": ["s0", ...], "pools": ["worker", ...] | null,
     "slot0": 0, "slots": 300,                     # columns: slots slot0 .. slot0+slots-1
     "label": "delta",                             # the paper's symbol (delta, p/q)
     "decisions": [{"t": 4, "job": "j7", "admitted": true,
                    "changes": [[resource_index, server_index, slot_offset, n, value], ...]}],
     "summary": {"gpu": {"mean": [...], "max": [...]}, ...}}   # one value per decision

A change sets the ``n`` slots ``slot_offset .. slot_offset+n-1`` of one resource on one server to
``value``: the entries that changed, as maximal runs of consecutive slots with the same new value
(a job books the same amount over consecutive slots, so a price usually changes alike over them),
in (resource, server, slot) order.

Past slots keep the prices they had when they passed: a decision at slot ``t`` lists (and a rebase
resets, below) only slots ``t`` and later, and the matrix shows for an earlier slot its price at the
last decision made while that slot was still to come. (OASiS recomputes every slot's price when its
bounds move; listing the recomputed prices of slots no decision can use again took 2/3 of its log.)

Older schemas, which ``matrix_at`` and the dashboard still read (``SCHEMAS``): ``mlsched.prices/2``
is this one but for a rebase, which reset every slot (past ones included); ``mlsched.prices/1``
also listed every changed entry alone, ``[resource_index, server_index, slot_offset, value]``.
On OASiS's preset at 1,000 jobs: 1.7M entries in /1, 300k runs in /2, 149k runs in /3
(bench/RESULTS.md).

Every matrix starts at ``initial`` (0 for both papers' price functions at zero load). Optional
(added for OASiS, whose prices start at L_1 on worker servers and L_2 on PS servers):
``"initial_by_pool": {"worker": L1, "ps": L2}`` overrides ``initial`` for the servers of those pools.
Optional (added for ``zhou``, whose log records one decision per job per A_maxweight call):
``"declined": "not scheduled in this sub-round"``, what ``admitted: false`` means in this log; the
job is carried over, not turned away. Absent (older results, ``oasis``, ``zhou-maxweight``): the
job was rejected.
Optional per decision (added for ``oasis`` with ``bounds=arrived``, whose L and U move as jobs
arrive): ``"rebase": {"worker": L1, "ps": L2}``: before this decision's ``changes`` apply, every
entry of the servers of those pools at slots ``t`` and later is reset to its pool's value (the new
price at zero load); ``changes`` then lists the entries that differ from that.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

SCHEMA = "mlsched.prices/3"
SINGLE_ENTRIES = "mlsched.prices/1"  # each change one entry: [resource, server, slot, value]
REBASE_ALL = "mlsched.prices/2"  # as /3, but a rebase resets past slots too
SCHEMAS = (SINGLE_ENTRIES, REBASE_ALL, SCHEMA)  # what matrix_at and the dashboard read


class PriceLog:
    """Records a price array ``P[resource, server, slot]`` after each decision, as its changes."""

    def __init__(
        self,
        resources: Sequence[str],
        servers: Sequence[str],
        slots: int,
        slot0: int = 0,
        label: str = "price",
        pools: Sequence[str] | None = None,
        initial: float = 0.0,
        digits: int = 6,
        initial_by_pool: Mapping[str, float] | None = None,
        declined: str | None = None,
    ) -> None:
        self.resources = list(resources)
        self.servers = list(servers)
        self.pools = list(pools) if pools is not None else None
        self.slot0 = slot0
        self.slots = slots
        self.label = label
        self.initial = initial
        self.digits = digits
        self.initial_by_pool = dict(initial_by_pool) if initial_by_pool else None
        self.declined = declined  # the wording of admitted=false decisions; None: "rejected"
        self._last = _initial_matrix(
            len(self.resources), self.pools, len(self.servers), slots, initial, initial_by_pool
        )
        self._last = np.round(self._last, digits)
        self.decisions: list[dict[str, Any]] = []
        self.summary: dict[str, dict[str, list[float]]] = {r: {"mean": [], "max": []} for r in self.resources}

    @property
    def shape(self) -> tuple[int, int, int]:
        return (len(self.resources), len(self.servers), self.slots)

    def record(
        self, t: int, job: str, admitted: bool, prices: np.ndarray, rebase: Mapping[str, float] | None = None
    ) -> None:
        """Record the prices after deciding on ``job`` at slot ``t``; ``prices`` has ``shape``.
        ``rebase`` (pool -> price): every entry of those pools' servers was reset first. Slots
        before ``t`` keep the prices recorded before (whatever ``prices`` holds for them)."""
        current = np.round(np.asarray(prices, dtype=float), self.digits)
        if current.shape != self.shape:
            raise ValueError(f"price array has shape {current.shape}, expected {self.shape}")
        decision: dict[str, Any] = {"t": int(t), "job": job, "admitted": bool(admitted)}
        past = past_columns(t, self.slot0, self.slots)
        if rebase:
            decision["rebase"] = {pool: float(value) for pool, value in rebase.items()}
            self._last = np.round(_rebased(self._last, self.pools, decision["rebase"], past), self.digits)
        current[:, :, :past] = self._last[:, :, :past]
        changed = np.flatnonzero(current != self._last)  # (resource, server, slot) order
        decision["changes"] = _runs(changed, current.ravel()[changed], len(self.servers), self.slots)
        self._last = current
        self.decisions.append(decision)
        first = min(max(t - self.slot0, 0), self.slots - 1)
        for i, r in enumerate(self.resources):
            window = current[i, :, first:]
            self.summary[r]["mean"].append(round(float(window.mean()), self.digits))
            self.summary[r]["max"].append(round(float(window.max()), self.digits))

    def to_dict(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"initial_by_pool": self.initial_by_pool} if self.initial_by_pool else {}
        if self.declined:
            extra["declined"] = self.declined
        return {
            **extra,
            "schema": SCHEMA,
            "resources": self.resources,
            "servers": self.servers,
            "pools": self.pools,
            "slot0": self.slot0,
            "slots": self.slots,
            "label": self.label,
            "initial": self.initial,
            "decisions": self.decisions,
            "summary": self.summary,
        }


def matrix_at(prices: Mapping[str, Any], decision: int, resource: str) -> np.ndarray:
    """The server x slot price matrix of ``resource`` just after decision number ``decision``."""
    for k, matrix in enumerate(matrices(prices, resource)):
        if k == decision + 1:
            return matrix
    raise IndexError(f"decision {decision} of {len(prices['decisions'])}")


def matrices(prices: Mapping[str, Any], resource: str) -> Iterator[np.ndarray]:
    """The server x slot price matrix of ``resource`` before any decision, then after each
    decision in turn (one array, updated in place: copy it to keep it)."""
    r = prices["resources"].index(resource)
    out: np.ndarray = _initial_matrix(
        1,
        prices.get("pools"),
        len(prices["servers"]),
        prices["slots"],
        float(prices.get("initial", 0.0)),
        prices.get("initial_by_pool"),
    )[0]
    schema = prices.get("schema")
    single = schema == SINGLE_ENTRIES
    yield out
    for d in prices["decisions"]:
        if d.get("rebase"):
            past = past_columns(d["t"], prices["slot0"], prices["slots"]) if schema == SCHEMA else 0
            out[:] = _rebased(out[None], prices.get("pools"), d["rebase"], past)[0]
        for c in d["changes"]:
            if c[0] == r:
                if single:
                    out[c[1], c[2]] = c[3]
                else:
                    out[c[1], c[2] : c[2] + c[3]] = c[4]
        yield out


def _runs(flat: np.ndarray, values: np.ndarray, servers: int, slots: int) -> list[list[Any]]:
    """The changes ``[r, h, s, n, value]`` of the changed entries at the ascending flat indices
    ``flat`` of a (resource, server, slot) array, with their new ``values``: maximal runs of
    consecutive slots of one (resource, server) with equal values."""
    if flat.size == 0:
        return []
    goes_on = (np.diff(flat) == 1) & (flat[1:] % slots != 0) & (values[1:] == values[:-1])
    starts = np.flatnonzero(np.concatenate(([True], ~goes_on)))
    lengths = np.diff(np.append(starts, flat.size))
    row, s = np.divmod(flat[starts], slots)
    r, h = np.divmod(row, servers)
    columns = (r.tolist(), h.tolist(), s.tolist(), lengths.tolist(), values[starts].astype(float).tolist())
    return [list(c) for c in zip(*columns, strict=True)]


def runs_of(entries: Iterable[tuple[int, int, int, float]]) -> list[list[Any]]:
    """The changes ``[r, h, s, n, value]`` of changed entries ``(r, h, s, value)`` given in
    (resource, server, slot) order: as ``_runs``, for callers that hold entries, not arrays."""
    out: list[list[Any]] = []
    for r, h, s, value in entries:
        if out:
            last = out[-1]
            if last[0] == r and last[1] == h and last[2] + last[3] == s and last[4] == value:
                last[3] += 1
                continue
        out.append([r, h, s, 1, value])
    return out


def past_columns(t: int, slot0: int, slots: int) -> int:
    """How many of a log's columns (slots ``slot0 ..``) are before slot ``t``."""
    return min(max(t - slot0, 0), slots)


def _rebased(
    matrix: np.ndarray, pools: Sequence[str] | None, by_pool: Mapping[str, float], past: int = 0
) -> np.ndarray:
    """``matrix`` (resource, server, slot) with every server of a pool in ``by_pool`` reset to its
    value, from column ``past`` on."""
    out = matrix.copy()
    for h, pool in enumerate(pools or ()):
        if pool in by_pool:
            out[:, h, past:] = float(by_pool[pool])
    return out


def _initial_matrix(
    n_resources: int,
    pools: Sequence[str] | None,
    n_servers: int,
    slots: int,
    initial: float,
    by_pool: Mapping[str, float] | None,
) -> np.ndarray:
    out = np.full((n_resources, n_servers, slots), initial, dtype=float)
    if by_pool and pools is not None:
        for h, pool in enumerate(pools):
            if pool in by_pool:
                out[:, h, :] = float(by_pool[pool])
    return out
