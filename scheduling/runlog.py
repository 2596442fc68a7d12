"""What a run records: its segments, its job records and ``Run``, the raw outcome of a simulation.

The engine appends placement and progress segments as it commits them to a ``SegmentLog``, which
keeps them in columns (a list of references per string field, an ``array`` per number field:
about 60 bytes a segment instead of a few hundred for an object each), so that a run of a million
jobs holds its segments in little more than the engine's own state. ``Run.placements`` and
``Run.progress`` are ``Segments``: read-only sequences over those columns in the result's order,
that build a segment object only when one is read.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence

from scheduling.records import field, record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, TypeVar, overload

    S = TypeVar("S")
else:
    S = object  # (the type variable of Segments' items, for the type checker)

    from scheduling.runtime_typing import overload


@record
class PlacementSegment:
    """``count`` instances of a role and type held by a job on a server over [start, end)."""

    job_id: str
    server: str
    role: str
    type: str
    count: int
    start: int
    end: int


@record
class ProgressSegment:
    """A job progressing at ``rate`` work units per slot over [start, end)."""

    job_id: str
    start: int
    end: int
    rate: float


@record
class RestartPeriod:
    """Slots a job held its allocation without progress after a resume, move or resize."""

    job_id: str
    start: int
    end: int  # exclusive; shorter than the restart time if the allocation changed again or the run ended


@record
class Kill:
    """A job stopped at ``slot`` because ``server`` failed, losing ``lost_work`` work units."""

    job_id: str
    server: str
    slot: int
    lost_work: float


@record
class JobRecord:
    """The outcome of one job (a row of the result's ``jobs``)."""

    job_id: str
    arrival: int
    admitted: bool
    start: int | None
    completion: int | None
    weight: float
    utility: float  # utility earned: the job's sigmoid at its JCT if completed, else 0
    work_required: float
    work_done: float
    preemptions: int

    # Slots: a run and its validation hold one record per job (a million of them at 1M jobs).
    __slots__ = (
        "admitted",
        "arrival",
        "completion",
        "job_id",
        "preemptions",
        "start",
        "utility",
        "weight",
        "work_done",
        "work_required",
    )

    def __reduce__(self) -> tuple[type[JobRecord], tuple[Any, ...]]:
        # (a frozen record with slots pickles by its constructor: its __setattr__ refuses)
        return (JobRecord, tuple(getattr(self, n) for n in JobRecord.__record_fields__))  # type: ignore[attr-defined]


@record
class Run:
    """The raw outcome of one simulation, before metrics and serialisation."""

    horizon: int  # the slot the run ended at
    jobs: tuple[JobRecord, ...]
    placements: Sequence[PlacementSegment]  # by (start, job id, server, role, type)
    progress: Sequence[ProgressSegment]  # by (job id, start)
    extra: Mapping[str, Any] = field(default_factory=dict)
    restarts: tuple[RestartPeriod, ...] = ()
    restart_slots: int = 0  # the restart time the run charged, in slots
    restart_seconds: float = 0.0  # the restart time it was given (cluster field or run override), s
    kills: tuple[Kill, ...] = ()  # jobs stopped by server failures (scheduling.failures)
    job_restart_slots: Mapping[str, int] | None = None  # jobs with their own restart cost -> its slots


class Segments(Sequence[S]):
    """Segments kept in columns, read in the order ``order`` (indexes into the columns); each item
    is built by ``make`` from its index when read. Equal to any sequence of the same segments."""

    __slots__ = ("_columns", "_make", "_order")

    def __init__(
        self, make: Callable[[int], S], order: Sequence[int], columns: Mapping[str, Sequence[Any]] | None = None
    ) -> None:
        self._make = make
        self._order = order
        self._columns = columns or {}  # field name -> its column (in the columns' order, not ``order``)

    def column(self, name: str) -> list[Any] | array[Any]:
        """The values of field ``name`` in this sequence's order (an array for a number field)."""
        values = self._columns.get(name)
        if values is None:
            return [getattr(item, name) for item in self]
        if isinstance(values, array):
            return array(values.typecode, map(values.__getitem__, self._order))
        return list(map(values.__getitem__, self._order))

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, i: int) -> S: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[S, ...]: ...  # noqa: F811 (overload: not typing's at run time)

    def __getitem__(self, i: int | slice) -> S | tuple[S, ...]:  # noqa: F811
        if isinstance(i, slice):
            return tuple(map(self._make, self._order[i]))
        return self._make(self._order[i])

    def __iter__(self) -> Iterator[S]:
        return map(self._make, self._order)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Segments | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as a list: equal to sequences of other kinds

    def __repr__(self) -> str:
        return f"Segments({list(self)!r})"


class SegmentLog:
    """Placement and progress segments as the run commits them, in columns (module docstring)."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, str, str, str], tuple[int, int]] = {}  # key -> (count, start)
        # placements: job id, server, role, type (references to the run's own strings), count, start, end
        self.p_job: list[str] = []
        self.p_server: list[str] = []
        self.p_role: list[str] = []
        self.p_type: list[str] = []
        self.p_count = array("q")
        self.p_start = array("q")
        self.p_end = array("q")
        # progress: job id, start, end, rate
        self.g_job: list[str] = []
        self.g_start = array("q")
        self.g_end = array("q")
        self.g_rate = array("d")

    def close(self, key: tuple[str, str, str, str], t: int) -> None:
        """End the open placement segment ``key`` at ``t`` (recorded if not empty)."""
        count, start = self.open.pop(key)
        if t > start:
            job_id, server, role, type_id = key
            self.p_job.append(job_id)
            self.p_server.append(server)
            self.p_role.append(role)
            self.p_type.append(type_id)
            self.p_count.append(count)
            self.p_start.append(start)
            self.p_end.append(t)

    def close_all(self, t: int) -> None:
        for key in list(self.open):
            self.close(key, t)

    def add_progress(self, job_id: str, start: int, end: int, rate: float) -> None:
        self.g_job.append(job_id)
        self.g_start.append(start)
        self.g_end.append(end)
        self.g_rate.append(rate)

    def placement(self, i: int) -> PlacementSegment:
        return PlacementSegment(
            self.p_job[i],
            self.p_server[i],
            self.p_role[i],
            self.p_type[i],
            self.p_count[i],
            self.p_start[i],
            self.p_end[i],
        )

    def progress_segment(self, i: int) -> ProgressSegment:
        return ProgressSegment(self.g_job[i], self.g_start[i], self.g_end[i], self.g_rate[i])

    def sorted_placements(self) -> Segments[PlacementSegment]:
        """The placements by (start, job id, server, role, type)."""
        start, job, server, role, type_id = self.p_start, self.p_job, self.p_server, self.p_role, self.p_type
        order = sorted(range(len(start)), key=lambda i: (start[i], job[i], server[i], role[i], type_id[i]))
        columns: dict[str, Sequence[Any]] = {"job_id": job, "server": server, "role": role, "type": type_id}
        columns.update(count=self.p_count, start=start, end=self.p_end)
        return Segments(self.placement, array("q", order), columns)

    def sorted_progress(self) -> Segments[ProgressSegment]:
        """The progress segments by (job id, start)."""
        job, start = self.g_job, self.g_start
        order = sorted(range(len(start)), key=lambda i: (job[i], start[i]))
        columns: dict[str, Sequence[Any]] = {"job_id": job, "start": start, "end": self.g_end, "rate": self.g_rate}
        return Segments(self.progress_segment, array("q", order), columns)
