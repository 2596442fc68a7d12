"""The engine's bookkeeping of one job (scheduling.engine), and the record of its outcome."""

from __future__ import annotations

from scheduling.model import Amounts, Job
from scheduling.runlog import JobRecord
from scheduling.speed import Allocation
from scheduling.views import JobView

Booked = tuple[tuple[str, str, Amounts, int], ...]  # (server, role, per-instance demand, count)


class JobState:
    """The engine's bookkeeping of one job (slots: a million jobs keep a million of these)."""

    __slots__ = (
        "admitted",
        "allocs",
        "attained",
        "attained_closed",
        "booked",
        "completion",
        "first_rate",
        "gpus",
        "held_since",
        "job",
        "last_held",
        "preemptions",
        "progress_start",
        "rank",
        "rate",
        "rejected",
        "restart",
        "start",
        "version",
        "view",
        "view_t",
        "work_closed",
        "work_done",
    )

    def __init__(self, job: Job, rank: int = 0) -> None:
        self.job = job
        self.rank = rank  # position in arrival order (ties of the completion heap)
        self.work_done: float = 0.0  # work done up to the last _sync
        self.attained: float = 0.0  # GPU-slots held up to the last _sync
        self.work_closed: float = 0.0  # work of the closed progress segments (sum of rate x length)
        self.attained_closed: float = 0.0  # GPU-slots held before ``held_since``
        self.held_since: int = 0  # slot the current allocation was committed
        self.admitted: bool = False
        self.rejected: bool = False
        self.start: int | None = None
        self.completion: int | None = None
        self.preemptions: int = 0
        self.rate: float = 0.0
        self.gpus: float = 0.0
        self.allocs: tuple[Allocation, ...] = ()
        self.booked: Booked = ()
        self.last_held: frozenset[tuple[str, str, str, int]] | None = None  # the last non-empty allocation
        self.progress_start: int | None = None  # slot progress (re)starts at the current rate
        self.first_rate: float | None = None  # rate in slot progress_start only (the last slot of a restart period)
        self.restart: tuple[int, int] | None = None  # current restart period [start, end)
        self.version: int = 0  # bumped when the completion slot changes (stale heap entries)
        self.view: JobView | None = None  # cached until the state changes
        self.view_t: int = -1


def job_record(s: JobState) -> JobRecord:
    job = s.job
    jct = None if s.completion is None else s.completion - job.arrival
    return JobRecord(
        job_id=job.job_id,
        arrival=job.arrival,
        admitted=s.admitted,
        start=s.start,
        completion=s.completion,
        weight=job.weight,
        utility=0.0 if jct is None else job.utility.value(jct),
        work_required=job.work_required,
        work_done=s.work_done,
        preemptions=s.preemptions,
    )
