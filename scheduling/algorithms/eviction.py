"""Evicting running jobs until one more fits: the step both walks of the list scheduler share
(scheduling/algorithms/priority.py: ``decide_full`` and the change path, list_changes.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scheduling.algorithms.common import Config, place
from scheduling.algorithms.placement import Place
from scheduling.capacity import Ledger
from scheduling.model import Job
from scheduling.speed import Allocation, demand_of

SLACK = 1e-6
"""Margin of the necessary GPU check before an eviction: it only skips a job that is short of GPUs
by more than this (place() itself decides with the ledger's 1e-9 tolerance)."""


def evict_until_fit(
    ledger: Ledger,
    job: Job,
    cfg: Config,
    victims: Iterable[tuple[Job, Sequence[Allocation]]],
    placement: Place = place,
) -> tuple[Ledger, tuple[Allocation, ...], int] | None:
    """Release ``victims`` one at a time, in the order given, on a copy of ``ledger`` until ``cfg``
    fits (by ``placement``, first-fit by default); return the copy with the job booked, its
    allocation and how many victims were released, or None (``ledger`` is untouched either way, so
    a failure restores every victim)."""
    trial = ledger.copy()
    cluster = ledger.cluster
    for n, (vjob, allocs) in enumerate(victims, 1):
        for a in allocs:
            trial.release(a.server, demand_of(cluster, vjob, a.role, a.type) or {}, a.count)
        placed = placement(trial, job, cfg)
        if placed is not None:
            return trial, placed, n
    return None
