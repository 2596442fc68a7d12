"""Price evolution of the price-based algorithms (``zhou``, ``oasis``), recorded compactly.

A price-based algorithm keeps a price per (resource, server, slot) and raises it as it admits
jobs. ``PriceLog`` records, after every arrival decision, only the entries that changed, so that
the dashboard can redraw

(a) per resource, how the price of the current and upcoming slots evolves as decisions are made
    (mean and max over servers and over the slots ``t .. end`` of the window, where ``t`` is the
    slot of the decision), and
(b) the server x slot price matrix of one resource at any chosen decision (``matrix_at``).

The result field ``prices`` (schema ``mlsched.prices/1``)::

    {"schema": "mlsched.prices/1",
     "resources": ["gpu", ...], "servers": ["s0", ...], "pools": ["worker", ...] | null,
     "slot0": 0, "slots": 300,                     # columns: slots slot0 .. slot0+slots-1
     "label": "delta",                             # the paper's symbol (delta, p/q)
     "decisions": [{"t": 4, "job": "j7", "admitted": true,
                    "changes": [[resource_index, server_index, slot_offset, value], ...]}],
     "summary": {"gpu": {"mean": [...], "max": [...]}, ...}}   # one value per decision

Every matrix starts at ``initial`` (0 for both papers' price functions at zero load). Optional
(added for OASiS, whose prices start at L_1 on worker servers and L_2 on PS servers):
``"initial_by_pool": {"worker": L1, "ps": L2}`` overrides ``initial`` for the servers of those pools.
Optional (added for ``zhou``, whose log records one decision per job per A_maxweight call):
``"declined": "not scheduled in this sub-round"``, what ``admitted: false`` means in this log; the
job is carried over, not turned away. Absent (older results, ``oasis``, ``zhou-maxweight``): the
job was rejected.
Optional per decision (added for ``oasis`` with ``bounds=arrived``, whose L and U move as jobs
arrive): ``"rebase": {"worker": L1, "ps": L2}``: before this decision's ``changes`` apply, every
entry of the servers of those pools is reset to its pool's value (the new price at zero load);
``changes`` then lists the entries that differ from that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

SCHEMA = "mlsched.prices/1"


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
        ``rebase`` (pool -> price): every entry of those pools' servers was reset first."""
        current = np.round(np.asarray(prices, dtype=float), self.digits)
        if current.shape != self.shape:
            raise ValueError(f"price array has shape {current.shape}, expected {self.shape}")
        decision: dict[str, Any] = {"t": int(t), "job": job, "admitted": bool(admitted)}
        if rebase:
            decision["rebase"] = {pool: float(value) for pool, value in rebase.items()}
            self._last = np.round(_rebased(self._last, self.pools, decision["rebase"]), self.digits)
        changed = np.argwhere(current != self._last)
        decision["changes"] = [[int(r), int(h), int(s), float(current[r, h, s])] for r, h, s in changed]
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
    r = prices["resources"].index(resource)
    out: np.ndarray = _initial_matrix(
        1,
        prices.get("pools"),
        len(prices["servers"]),
        prices["slots"],
        float(prices.get("initial", 0.0)),
        prices.get("initial_by_pool"),
    )[0]
    for d in prices["decisions"][: decision + 1]:
        if d.get("rebase"):
            out = _rebased(out[None], prices.get("pools"), d["rebase"])[0]
        for ri, h, s, value in d["changes"]:
            if ri == r:
                out[h, s] = value
    return out


def _rebased(matrix: np.ndarray, pools: Sequence[str] | None, by_pool: Mapping[str, float]) -> np.ndarray:
    """``matrix`` (resource, server, slot) with every server of a pool in ``by_pool`` reset to its value."""
    out = matrix.copy()
    for h, pool in enumerate(pools or ()):
        if pool in by_pool:
            out[:, h, :] = float(by_pool[pool])
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
