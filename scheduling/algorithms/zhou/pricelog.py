"""``PriceLog`` fed with the price entries that changed instead of whole arrays.

A_maxweight changes the prices of one job's window on the servers it uses; comparing whole
[resource, server, slot] arrays after every decision (``PriceLog.record``) would cost
O(R H T) per decision. This keeps per-slot column sums and maxima so that the same
``mlsched.prices/3`` document comes out at O(changes + T) per decision.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scheduling.prices import PriceLog, past_columns, runs_of


class SparsePriceLog(PriceLog):
    def __init__(
        self,
        resources: Sequence[str],
        servers: Sequence[str],
        slots: int,
        label: str = "price",
        declined: str | None = None,
    ) -> None:
        super().__init__(resources, servers, slots, label=label, declined=declined)
        shape = (len(self.resources), slots)
        self._colsum = np.full(shape, self.initial * len(self.servers))
        self._colmax = np.full(shape, self.initial)

    def record_changes(self, t: int, job: str, admitted: bool, changes: Sequence[tuple[int, int, int, float]]) -> None:
        """As ``record``, given the entries (resource, server, slot, value) that may have changed;
        entries of slots before ``t`` are left as recorded (as ``record`` does)."""
        out: list[tuple[int, int, int, float]] = []
        touched: set[tuple[int, int]] = set()
        past = past_columns(t, self.slot0, self.slots)
        # the last value of an entry counts
        latest = {(r, h, s): value for r, h, s, value in changes if s >= past}
        items = sorted(latest.items())
        # One np.round for all entries: the same elementwise rounding as np.round of each value.
        rounded = np.round(np.array([value for _, value in items], dtype=float), self.digits).tolist()
        for ((r, h, s), _), v in zip(items, rounded, strict=True):
            old = float(self._last[r, h, s])
            if v != old:
                self._last[r, h, s] = v
                self._colsum[r, s] += v - old
                touched.add((r, s))
                out.append((int(r), int(h), int(s), v))
        for r, s in touched:
            self._colmax[r, s] = self._last[r, :, s].max()
        self.decisions.append({"t": int(t), "job": job, "admitted": bool(admitted), "changes": runs_of(out)})
        first = min(max(t - self.slot0, 0), self.slots - 1)
        cells = len(self.servers) * (self.slots - first)
        for i, name in enumerate(self.resources):
            self.summary[name]["mean"].append(round(float(self._colsum[i, first:].sum() / cells), self.digits))
            self.summary[name]["max"].append(round(float(self._colmax[i, first:].max()), self.digits))
