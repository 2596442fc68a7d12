"""What an algorithm sees and answers: the engine's ``View`` of one event and the ``Decision`` it
returns (scheduling.engine describes the protocol between them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from scheduling.capacity import Ledger
from scheduling.model import Cluster, Job
from scheduling.records import field, record
from scheduling.speed import Allocation

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, Protocol, TypeVar, overload

    from scheduling.engine import _Engine

    T = TypeVar("T")
else:
    T = object  # (the type variable of Lazy's items, for the type checker)

    from scheduling.runtime_typing import Protocol, overload  # Algorithm: a protocol for the type checker


@record
class JobView:
    """What an algorithm may know of an arrived, unfinished, non-rejected job at slot ``t``."""

    job: Job
    work_done: float  # work units done so far
    attained_gpu_slots: float  # GPUs held x slots so far (Tiresias' attained service)
    admitted: bool
    start: int | None  # first slot the job held resources
    running: bool  # holds resources under the previous decision

    @property
    def remaining(self) -> float:
        return max(0.0, self.job.work_required - self.work_done)


class Lazy(Sequence[T]):
    """A tuple built on first use (the engine's job views and committed allocations)."""

    def __init__(self, build: Callable[[], tuple[T, ...]], length: Callable[[], int] | None = None) -> None:
        self._build: Callable[[], tuple[T, ...]] | None = build
        self._length = length  # the length without building the items, if known
        self._items: tuple[T, ...] = ()

    def _get(self) -> tuple[T, ...]:
        if self._build is not None:
            self._items, self._build = self._build(), None
        return self._items

    def __len__(self) -> int:
        if self._build is not None and self._length is not None:
            return self._length()
        return len(self._get())

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...  # noqa: F811 (overload: not typing's at run time)

    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:  # noqa: F811
        return self._get()[i]

    def __iter__(self) -> Iterator[T]:
        return iter(self._get())

    def __contains__(self, x: object) -> bool:
        return x in self._get()


@record
class View:
    """What an algorithm sees at slot ``t``. The engine builds ``jobs`` and ``allocations`` (every
    active job, every committed allocation) on first use; change-based algorithms use the cheaper
    accessors instead (``running``, ``job``, ``committed_ledger``, ``completed``)."""

    t: int  # the current slot
    cluster: Cluster
    jobs: Sequence[JobView]  # arrived, unfinished, not rejected; by (arrival, job_id)
    allocations: Sequence[Allocation]  # what is committed now (the previous decision)
    horizon: int | None  # last slot + 1, or None when the run ends once every job is done
    arrived: tuple[Job, ...]  # the jobs that arrive exactly at ``t``
    completed: tuple[str, ...] = ()  # jobs that completed at ``t`` (since the previous decision)
    engine: _Engine | None = field(default=None, repr=False, compare=False)

    @property
    def direct(self) -> bool:
        """Whether the engine built this view itself: its change-based accessors then describe
        exactly ``jobs`` (a wrapper that filters the jobs hands over a plain tuple instead, and
        only a full decision sees that)."""
        return self.engine is not None and isinstance(self.jobs, Lazy)

    def ledger(self) -> Ledger:
        """An empty capacity ledger of the cluster to build the next decision on (with the servers
        that are down under the cluster's failure trace booked in full)."""
        ledger = Ledger(self.cluster)
        if self.engine is not None and self.engine.failures is not None:
            for server in self.engine.failures.down:
                ledger.book(server, self.cluster.server(server).capacity)
        return ledger

    # Change-based accessors: cost in proportion to what is asked for.
    def committed_ledger(self) -> Ledger:
        """A copy of the engine's ledger with every committed allocation booked."""
        assert self.engine is not None
        return self.engine.ledger.copy()

    def running(self) -> Mapping[str, tuple[Allocation, ...]]:
        """Job id -> its committed allocation, for the jobs that hold resources (read-only)."""
        assert self.engine is not None
        return self.engine.running_allocs

    def restart_slots(self, job_id: str | None = None) -> int:
        """Slots a resumed, moved or resized job holds its allocation without progress (the run's
        restart cost, docs/formats.md "Restart cost"); 0 when restarts are free. With ``job_id``:
        that job's (its own cost if it has one, "Per-job restart costs")."""
        assert self.engine is not None
        own = self.engine.job_restart
        if job_id is not None and own is not None:
            return own.get(job_id, self.engine.restart)
        return self.engine.restart

    def per_job_restarts(self) -> bool:
        """Whether some jobs have their own restart cost (then ``restart_slots(job_id)`` differs)."""
        assert self.engine is not None
        return self.engine.job_restart is not None

    def job(self, job_id: str) -> JobView:
        """The view of one active job."""
        assert self.engine is not None
        return self.engine.job_view(self.engine.active[job_id])


@record
class Decision:
    """An algorithm's answer to a view: a complete allocation or changes, admissions, rejections."""

    allocations: tuple[Allocation, ...] = ()  # the complete allocation from now on (if changes is None)
    admit: tuple[str, ...] = ()  # jobs admitted now (they may still wait for resources)
    reject: tuple[str, ...] = ()  # jobs rejected now: they never run
    wake_at: int | None = None  # ask to decide again at this slot even if nothing happens
    preempted: tuple[str, ...] = ()  # partial (worker-level) preemptions done by this decision
    # Change-based form: job id -> its complete new allocation (empty: stop it); others keep theirs.
    changes: Mapping[str, tuple[Allocation, ...]] | None = None


class Algorithm(Protocol):
    def decide(self, view: View) -> Decision: ...

    def report(self) -> Mapping[str, Any]:
        """Extra result fields (e.g. ``prices``) once the run is over."""
