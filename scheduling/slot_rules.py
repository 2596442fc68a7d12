"""Counting rules a schedule must meet in every slot, checked on the result document's placements
(part of the validator, DESIGN section 5): workers within a job's limit and OASiS's PS rules, and
Zhou et al.'s PS bandwidth reservation (2i). ``scheduling.validator`` runs them on every result.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from scheduling.model import Instance, Job
from scheduling.speed import Allocation, on_typed_ps, reservation_shortfall, reserves_ps_bandwidth

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


def worker_counts(instance: Instance, doc: Mapping[str, Any], ps_rules: bool = False) -> list[str]:
    """Per job and slot: workers <= the job's limit (OASiS (3), Zhou (2g)); with ``ps_rules`` also
    OASiS (6) PS bandwidth >= worker bandwidth (per-job ``bw`` demands) and (7) PSs <= workers.
    Jobs in the order of their first placements (the validator checks each job with
    ``job_worker_counts`` as it goes, in the same order)."""
    jobs = {j.job_id: j for j in instance.jobs}
    held: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for p in doc["placements"]:
        if p["job_id"] in jobs:
            held[p["job_id"]].append(p)
    problems: list[str] = []
    for job_id, placements in held.items():
        problems.extend(job_worker_counts(jobs[job_id], placements, ps_rules))
    return problems


def job_worker_counts(job: Job, placements: Sequence[Mapping[str, Any]], ps_rules: bool = False) -> list[str]:
    """worker_counts for one job and its placements: its first problem, if any."""
    deltas: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for p in placements:
        k = 0 if p["role"] == "worker" else 1
        deltas[p["start"]][k] += p["count"]
        deltas[p["end"]][k] -= p["count"]
    job_id = job.job_id
    limit = job.max_workers()
    b = float((job.worker_demand or {}).get("bw", 0.0))
    big_b = float((job.ps_demand or {}).get("bw", 0.0))
    y = z = 0
    for t in sorted(deltas):
        y, z = y + deltas[t][0], z + deltas[t][1]
        if y > limit:
            return [f"job {job_id!r} slot {t}: {y} workers, more than its limit {limit} (3)"]
        if ps_rules and y * b > z * big_b + 1e-9:
            return [f"job {job_id!r} slot {t}: {y} workers x {b:g} Gbps > {z} PSs x {big_b:g} Gbps (6)"]
        if ps_rules and z > y:
            return [f"job {job_id!r} slot {t}: {z} PSs > {y} workers (7)"]
    return []


def ps_reservations(instance: Instance, doc: Mapping[str, Any], always: bool = False) -> list[str]:
    """Zhou et al. (2i) in every slot: for each server holding PSs of a PS job, the bandwidth of the
    job's workers on other servers is at most that of its PSs there. Checked for the jobs it binds
    (``reserves_ps_bandwidth``), or with ``always`` for every PS job on typed PSs."""
    cluster = instance.cluster
    jobs = {j.job_id: j for j in instance.jobs}
    bound = {
        job_id
        for job_id, job in jobs.items()
        if reserves_ps_bandwidth(cluster, job) or (always and on_typed_ps(cluster, job))
    }
    segments: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for p in doc["placements"]:
        if p["job_id"] in bound:
            segments[p["job_id"]].append(p)
    problems: list[str] = []
    for job_id, segs in segments.items():
        for t in sorted({p["start"] for p in segs}):
            live = (p for p in segs if p["start"] <= t < p["end"])
            held = [Allocation(job_id, p["server"], p["role"], p["type"], p["count"]) for p in live]
            short = reservation_shortfall(cluster, jobs[job_id], held)
            if short is not None:
                problems.append(
                    f"job {job_id!r} slot {t}: its workers off server {short[0]!r} need "
                    f"{short[1]:.6g} MB/slot more PS bandwidth there (Zhou et al. (2i))"
                )
                break
    return problems
