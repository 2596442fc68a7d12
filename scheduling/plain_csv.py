"""The plain CSV path of scheduling.loaders.parse_trace.

A trace of plain columns (Philly-shaped rigid jobs, the presets' elastic jobs) is read straight
from the row's values into a Job, without the row dict and the general readers' messages: half
the time per row (11 us instead of 22 on a Philly window). It reads only what is plainly valid
(an integer in its bounds with int(), a number with float()) and gives any other row (a value out
of bounds, "1e3", "nan", a filled unnamed column, a duration without gpus) to
loaders.job_from_row, which reads it the same way if it is valid and otherwise raises the error
it always did. A header with any other column (nested "a.b" columns, stages, upload_delay, an
unknown name) reads every row on the general path. tests/test_loaders_plain.py compares both
paths on random rows and on every odd or bound value of each column, errors included.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType

from scheduling.bounds import MAX_AMOUNT, MAX_SLOTS, MAX_WORK, MAX_WORKERS, STEP_SECONDS
from scheduling.model import ARCHITECTURES, Cluster, Job, Utility
from scheduling.status_replay import outcome

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


def _plain_int(minimum: int, maximum: float) -> Callable[[str], int]:
    def read(value: str) -> int:
        n = int(value)  # ValueError on "1.0", "1e3", "": left to the general path
        if minimum <= n <= maximum:  # bounds far below 2**53: float(value) is the same number
            return n
        raise ValueError(value)

    return read


def _plain_number(minimum: float, maximum: float, strict: bool = False) -> Callable[[str], float]:
    def read(value: str) -> float:
        x = float(value)
        if (minimum < x if strict else minimum <= x) and x <= maximum:  # NaN fails, inf is above maximum
            return x
        raise ValueError(value)

    return read


def _plain_arch(value: str) -> str:
    if value in ARCHITECTURES:
        return value
    raise ValueError(value)


_PLAIN_UTILITY = {key: _plain_number(0.0, MAX_AMOUNT) for key in ("priority", "decay", "target")}
_PLAIN_STEP = _plain_number(STEP_SECONDS[0], STEP_SECONDS[1])
_PLAIN_TEXT = ("job_id", "group", "user", "model")  # as they are: stripped, and decode() refused NUL
_PLAIN_COLUMNS: dict[str, Callable[[str], Any]] = {
    "arrival": _plain_int(0, MAX_SLOTS),
    "arch": _plain_arch,
    "weight": _plain_number(0.0, MAX_AMOUNT),
    "epochs": _plain_int(1, MAX_WORK),
    "chunks": _plain_int(1, MAX_WORKERS),
    "minibatches": _plain_int(1, MAX_WORK),
    "gradient_mb": _plain_number(0.0, MAX_AMOUNT),
    "gpus": _plain_int(1, MAX_WORKERS),
    "gpu_request": _plain_int(1, MAX_WORKERS),
    "iterations": _plain_int(0, MAX_WORK),
    "predicted_iterations": _plain_int(0, MAX_WORK),
    "work": _plain_number(0.0, MAX_WORK, strict=True),
    "chunk_gb": _plain_number(0.0, MAX_AMOUNT, strict=True),
}
_PLAIN_PER_SLOT = ("batch_time", "ps_update", "duration")  # seconds, converted with the cluster's slot
_PLAIN_IGNORED = ("status", "slot_seconds")  # read below (status_replay.outcome) / checked by _trace_slot_seconds


class PlainCsv:
    """Reads the rows of a CSV trace whose columns are all plain (see above) into Jobs."""

    def __init__(self, header: list[str], cluster: Cluster) -> None:
        slot = cluster.slot_seconds

        def per_type(value: str) -> Mapping[str, float]:  # one time for every type
            return MappingProxyType({"*": _PLAIN_STEP(value) / slot})

        def duration(value: str) -> int:  # as _duration: whole slots, rounded up, at least 1
            x = float(value)
            if not 0.0 < x < math.inf:
                raise ValueError(value)
            slots = max(1, math.ceil(x / slot - 1e-9))
            if slots > MAX_SLOTS:
                raise ValueError(value)
            return slots

        readers = {**_PLAIN_COLUMNS, "batch_time": per_type, "ps_update": per_type, "duration": duration}
        # (column, field, reader, the values read so far): traces repeat most values (gpus, model,
        # batch times) row after row, so each distinct value of a column is read once
        self.fields: list[tuple[int, str, Callable[[str], Any], dict[str, Any]]] = [
            (i, h, readers[h], {}) for i, h in enumerate(header) if h in readers and h not in _PLAIN_TEXT
        ]
        self.texts = [(i, h) for i, h in enumerate(header) if h in _PLAIN_TEXT]
        self.utility = [(i, h, _PLAIN_UTILITY[h]) for i, h in enumerate(header) if h in _PLAIN_UTILITY]
        self.unnamed = [i for i, h in enumerate(header) if not h]
        self.slot_column = header.index("slot_seconds") if "slot_seconds" in header else None
        self.status_column = header.index("status") if "status" in header else None
        self.id_column = header.index("job_id")

    @classmethod
    def of(cls, header: list[str], cluster: Cluster) -> PlainCsv | None:
        """The plain reader of ``header``'s columns, or None if one of them is not plain."""
        plain = {*_PLAIN_TEXT, *_PLAIN_COLUMNS, *_PLAIN_UTILITY, *_PLAIN_PER_SLOT, *_PLAIN_IGNORED, ""}
        return cls(header, cluster) if all(h in plain for h in header) else None

    def stated_slots(self, table: list[tuple[int, list[str]]]) -> list[tuple[int, Any, str | None]]:
        """As _stated_slots, from the values."""
        i, j = self.slot_column, self.id_column
        if i is None:
            return []
        return [(line, values[i], values[j] or None) for line, values in table if values[i]]

    def job(self, values: list[str]) -> Job | None:
        """The row's job, or None for a row left to job_from_row (the same job if it is valid)."""
        kw: dict[str, Any] = {key: values[i] for i, key in self.texts if values[i]}
        try:
            for i, key, read, known in self.fields:
                value = values[i]
                if value:
                    got = known.get(value)
                    if got is None:
                        got = known[value] = read(value)
                    kw[key] = got
            if self.utility:
                kw["utility"] = Utility(**{key: read(values[i]) for i, key, read in self.utility if values[i]})
        except (ValueError, ArithmeticError):
            return None
        if self.status_column is not None and values[self.status_column]:
            found = outcome(values[self.status_column])
            if found is not None:
                kw["outcome"] = found
        if (
            "job_id" not in kw
            or "arrival" not in kw
            or ("duration" in kw and "gpus" not in kw)
            or (self.unnamed and any(values[i] for i in self.unnamed))
        ):
            return None
        job = Job(**kw)
        return None if job.work_required > MAX_WORK else job
