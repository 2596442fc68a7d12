"""The dual prices of one sub-round: beta_h^r(t), delta_h^r(t) of Alg. 3 and the price function (11).

Arrays are indexed [resource r, server h, slot t] over the slots of one sub-round of A_dual
(``slots`` = tau_i); slot 0 is the sub-round's first slot (the paper's time (iota - 1) tau_i + 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOL = 1e-9  # capacity slack when counting how many instances fit (as ``scheduling.capacity``)


def price(beta: np.ndarray, capacity: np.ndarray, lam: float) -> np.ndarray:
    """Eq. (11): delta_h^r(t) = lambda^(beta_h^r(t) / C_h^r) - 1; 0 where C_h^r = 0 (nothing fits there)."""
    cap = capacity[:, :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(cap > 0, beta / np.where(cap > 0, cap, 1.0), 0.0)
    return np.power(lam, ratio) - 1.0


@dataclass(frozen=True)
class Plan:
    """A schedule l_j of one job: its window, worker/PS type and counts per server, and its cost."""

    cost: float  # sum over the window of delta x (e y + z s), eq. (13) / (21)
    start: int  # t^- as a slot of the sub-round (0-based)
    length: int  # L_j = d_j, slots
    worker_type: str
    ps_type: str | None
    workers: tuple[tuple[int, int], ...]  # (server index, y_jhm' > 0), servers in index order
    ps: tuple[tuple[int, int], ...]  # (server index, s_jhp' > 0)
    colocated: bool  # q_j

    @property
    def end(self) -> int:
        """t^+ = t^- + L_j: the sub-round slot the job completes at."""
        return self.start + self.length

    def usage(self, e: np.ndarray, z: np.ndarray, servers: int) -> np.ndarray:
        """f_jh^r(l): per-slot demand on every server, shape [R, H]."""
        out = np.zeros((len(e), servers))
        for h, y in self.workers:
            out[:, h] += e * y
        for h, s in self.ps:
            out[:, h] += z * s
        return out


class Duals:
    """beta (allocated amount) and delta (unit price) of every resource, server and slot."""

    def __init__(
        self,
        capacity: np.ndarray,  # C_h^r, shape [R, H]
        worker_ok: np.ndarray,  # server accepts workers, shape [H]
        ps_ok: np.ndarray,  # server accepts PSs, shape [H]
        lam: float,  # lambda of eq. (11)
        base: np.ndarray,  # usage already committed in these slots (earlier rounds), [R, H, slots]
        tie: str = "loop",  # among equal costs: "loop" (first in loop order) or "completion" (earliest end)
    ) -> None:
        self.tie = tie
        self.capacity = capacity
        self.worker_ok = worker_ok
        self.ps_ok = ps_ok
        self.lam = lam
        self.version = 0  # bumped by every commit (lets the numpy path cache its tables)
        self.cache: object | None = None  # the numpy path's tables for this version (fast.tables_for)
        self.beta = base.astype(float, copy=True)
        self.delta = price(self.beta, capacity, lam)

    @property
    def slots(self) -> int:
        return int(self.beta.shape[2])

    @property
    def servers(self) -> int:
        return int(self.beta.shape[1])

    def free(self) -> np.ndarray:
        """omega_h^r(t) = C_h^r - beta_h^r(t) (Alg. 4 line 2)."""
        free: np.ndarray = self.capacity[:, :, None] - self.beta
        return free

    def commit(self, plan: Plan, e: np.ndarray, z: np.ndarray) -> None:
        """Alg. 3 lines 13-14: beta += f_jh^r(l_j) over T(l_j), then delta from (11)."""
        window = slice(plan.start, plan.start + plan.length)
        self.beta[:, :, window] += plan.usage(e, z, self.servers)[:, :, None]
        self.delta[:, :, window] = price(self.beta[:, :, window], self.capacity, self.lam)
        self.version += 1
