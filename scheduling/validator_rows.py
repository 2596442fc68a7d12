"""Reading a result document job by job for the validator (scheduling.validator), without building
a list of rows per job: a million-job result is checked in little more memory than the document
itself takes (bench/RESULTS.md, "A million jobs on one machine").

Rows are kept as their positions in the document (``ByJob``: arrays of integers linked in document
order) and read again when their job is checked (``row_reader``); a compact document's rows
(``results.Rows``) are read from its columns (``column``), and its job rows reach the metrics as
views over those columns (``records_of``). The capacity sweep (``check_capacity``) goes one
server at a time over the positions of its placements.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from operator import getitem, itemgetter

from scheduling import records
from scheduling.capacity import TOLERANCE
from scheduling.engine import JobRecord
from scheduling.model import Instance
from scheduling.results import Row, Rows

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, cast
else:
    from scheduling.runtime_typing import cast


class ByJob:
    """The rows of each job (placements or progress segments), kept as positions in the document:
    a first row per job and a next row per row (arrays of integers, linked in document order), not
    a list of rows per job."""

    __slots__ = ("_first", "_last", "_next")

    def __init__(self, jobs: int, rows: int) -> None:
        self._first = array("q", [-1]) * jobs
        self._last: array[int] | None = array("q", [-1]) * jobs
        self._next = array("q", [-1]) * rows

    def add(self, job: int, x: int) -> None:
        """Row ``x`` (positions added in increasing order) is the job's (at trace position ``job``)."""
        last = self._last
        assert last is not None
        before = last[job]
        if before < 0:
            self._first[job] = x
        else:
            self._next[before] = x
        last[job] = x

    def done(self) -> None:
        self._last = None  # (only needed while rows are added)

    def first(self, job: int) -> int:
        return self._first[job]

    def rows(self, job: int, read: Callable[[int], Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """The job's rows, read by ``read`` from their positions, in document order."""
        out = []
        x, nxt = self._first[job], self._next
        while x >= 0:
            out.append(read(x))
            x = nxt[x]
        return out


def row_reader(rows: Any) -> Callable[[int], Mapping[str, Any]]:
    """A row of a document's rows by its position (a compact ``Rows``' row without its bounds check)."""
    if isinstance(rows, Rows):
        return partial(Row, rows.columns)
    get: Callable[[int], Mapping[str, Any]] = rows.__getitem__
    return get


def column(rows: Any, key: str) -> Iterable[Any]:
    """The values of ``key`` in every row, in order (a compact ``Rows``' own column)."""
    if isinstance(rows, Rows):
        column: Iterable[Any] = rows.columns[key]
        return column
    return (r[key] for r in rows)


def records_of(rows: Any) -> Sequence[JobRecord] | None:
    """The job rows of a compact document as records for ``compute_metrics`` (None: it reads them
    itself): a view per row that reads its fields from the columns (``RowRecord``), not a
    ``JobRecord`` with its own values, so that the metrics of a million jobs hold a small int per job."""
    if not isinstance(rows, Rows):
        return None
    view = RowRecord.of(rows.columns)
    return cast("Sequence[JobRecord]", RowRecords(view, len(rows)))


class RowRecord(int):
    """A job row of a compact document read as a JobRecord: the row's position (an int, so that a
    view costs no more than one), with a property per field reading the column at that position."""

    __slots__ = ()

    @staticmethod
    def of(columns: Mapping[str, Sequence[Any]]) -> type[RowRecord]:
        """The view class of these columns (a subclass with a property per JobRecord field)."""
        fields = {n: property(partial(getitem, columns[n])) for n in records.names(JobRecord)}
        return type("RowRecord", (RowRecord,), {"__slots__": (), **fields})


class RowRecords(Sequence[RowRecord]):
    """Every row of a compact document's jobs as a RowRecord."""

    __slots__ = ("_n", "_view")

    def __init__(self, view: type[RowRecord], n: int) -> None:
        self._view, self._n = view, n

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[RowRecord]:
        return map(self._view, range(self._n))

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._view(k) for k in range(self._n)[i]]
        return self._view(range(self._n)[i])


def check_capacity(
    instance: Instance,
    doc: Mapping[str, Any],
    problems: list[str],
    on_server: Mapping[str, Sequence[int]],
) -> None:
    """Capacity per server, resource and slot, by a sweep over placement start/end events, one
    server at a time. ``on_server``: each limited server's placements (positions in the document),
    servers in order of first use (the validator collects them in its pass over the placements)."""
    limited = {s.id: s for s in instance.cluster.servers if not s.unlimited}
    read = row_reader(doc["placements"])
    by_slot = itemgetter(0, 1)  # ends (-1) before starts (+1) at the same slot; else in order
    for server_id, positions in on_server.items():
        evs: list[tuple[int, int, tuple[tuple[str, float], ...]]] = []
        for x in positions:
            p = read(x)
            n = p["count"]
            total = tuple([(r, a * n) for r, a in p["demand"].items()])
            evs.append((p["start"], 1, total))
            evs.append((p["end"], -1, total))
        capacity = limited[server_id].capacity
        used: dict[str, float] = defaultdict(float)
        evs.sort(key=by_slot)
        for i, (t, sign, total) in enumerate(evs):
            for resource, amount in total:
                used[resource] += sign * amount
            last_at_t = i + 1 == len(evs) or evs[i + 1][0] != t
            if not last_at_t:
                continue
            for resource, amount in used.items():
                if amount > capacity.get(resource, 0.0) + TOLERANCE * max(1.0, amount):
                    problems.append(
                        f"server {server_id!r} slot {t}: {resource} used {amount:g} > capacity "
                        f"{capacity.get(resource, 0.0):g}"
                    )
