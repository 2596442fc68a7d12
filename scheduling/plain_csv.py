"""The plain CSV path of scheduling.loaders.parse_trace.

A trace of plain columns (Philly-shaped rigid jobs, the presets' elastic jobs) is read straight
from the row's values into a Job, without the row dict and the general readers' messages: half
the time per row (11 us instead of 22 on a Philly window). It reads only what is plainly valid
(an integer in its bounds with int(), a number with float()), with the bounds of the column table
(scheduling.schema) that job_rows.job_from_row reads by too, and gives any other row (a value out
of bounds, "1e3", "nan", a filled unnamed column, a duration without gpus) to
job_rows.job_from_row, which reads it the same way if it is valid and otherwise raises the error
it always did. A header with any other column (nested "a.b" columns, stages, upload_delay, an
unknown name) reads every row on the general path. tests/test_loaders_plain.py compares both
paths on random rows and on every odd or bound value of each column, errors included.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType

from scheduling.bounds import MAX_WORK
from scheduling.model import Cluster, Job, Utility
from scheduling.schema import TRACE_COLUMNS, Field
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


def _plain_choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def read(value: str) -> str:
        if value in choices:
            return value
        raise ValueError(value)

    return read


def _plain_reader(column: Field) -> Callable[[str], Any]:
    """The plain reader of a column of kind integer, number, utility_term, seconds_per_type or choice,
    by the column's bounds (scheduling.schema)."""
    if column.kind == "integer":
        return _plain_int(int(column.minimum or 0), column.maximum)
    if column.kind == "choice":
        return _plain_choice(column.choices)
    lowest = -math.inf if column.minimum is None else column.minimum
    return _plain_number(lowest, column.maximum, column.strict)


# The columns by how the plain path reads them (every other kind of column: the general path)
_PLAIN_TEXT = tuple(c.name for c in TRACE_COLUMNS if c.kind in ("id", "label"))  # stripped; decode() refused NUL
_PLAIN_COLUMNS: dict[str, Callable[[str], Any]] = {
    c.name: _plain_reader(c) for c in TRACE_COLUMNS if c.kind in ("integer", "number", "choice")
}
_PLAIN_UTILITY = {c.name: _plain_reader(c) for c in TRACE_COLUMNS if c.kind == "utility_term"}
_PLAIN_PER_SLOT = {  # seconds, converted with the cluster's slot
    c.name: c for c in TRACE_COLUMNS if c.kind in ("seconds_per_type", "duration")
}
_PLAIN_IGNORED = tuple(c.name for c in TRACE_COLUMNS if c.kind == "stated")  # status; slot_seconds: read by
# loaders._trace_slot_seconds


class PlainCsv:
    """Reads the rows of a CSV trace whose columns are all plain (see above) into Jobs."""

    def __init__(self, header: list[str], cluster: Cluster) -> None:
        slot = cluster.slot_seconds

        def per_type(column: Field) -> Callable[[str], Mapping[str, float]]:  # one time for every type
            read = _plain_reader(column)
            return lambda value: MappingProxyType({"*": read(value) / slot})

        def duration(column: Field) -> Callable[[str], int]:  # as job_rows._duration: whole slots, rounded up
            lowest, most = column.minimum or 0.0, column.maximum

            def read(value: str) -> int:
                x = float(value)
                if not lowest < x < math.inf:
                    raise ValueError(value)
                slots = max(1, math.ceil(x / slot - 1e-9))
                if slots > most:
                    raise ValueError(value)
                return slots

            return read

        readers = dict(_PLAIN_COLUMNS)
        for name, column in _PLAIN_PER_SLOT.items():
            readers[name] = duration(column) if column.kind == "duration" else per_type(column)
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
        if self.status_column is not None and values[self.status_column]:  # read by a status replay only
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
