"""Server storage for data chunks: the edge-cloud paper's Sec. VI extension (constraints (7a)-(7e)).

A server may have a storage capacity U_s (``Server.storage_gb``) and a job a chunk size u_j
(``Job.chunk_gb``). A chunk dispatched to a server is stored there from its job's arrival until its
training is over (no migration, (7c)/(7d)), and a worker trains only chunks stored on its server
(7a); the chunks stored on a server never exceed U_s (7b).

A result may list what an algorithm stored under ``"storage"``: one segment per stored chunk,
``{job_id, server, start, end, gb}`` (slots ``[start, end)``). The validator checks those segments
against U_s and against the worker placements they must cover. A result without them (an algorithm
that does not track chunks) is checked on the least it must store: one chunk per worker it runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from scheduling.capacity import TOLERANCE
from scheduling.model import Instance

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


def has_storage(instance: Instance) -> bool:
    """Whether the instance limits storage: some server has U_s and some job has u_j."""
    return any(s.storage_gb is not None and not s.unlimited for s in instance.cluster.servers) and any(
        j.chunk_gb is not None for j in instance.jobs
    )


def limits(instance: Instance) -> dict[str, float]:
    """Server id -> U_s in GB, for the servers whose storage is limited."""
    return {s.id: s.storage_gb for s in instance.cluster.servers if s.storage_gb is not None and not s.unlimited}


def check(instance: Instance, doc: Mapping[str, Any]) -> list[str]:
    """Problems with the storage of ``doc`` (empty if the instance has no storage limits)."""
    if not has_storage(instance):
        return []
    caps = limits(instance)
    size = {j.job_id: j.chunk_gb or 0.0 for j in instance.jobs}
    arrival = {j.job_id: j.arrival for j in instance.jobs}
    problems: list[str] = []
    workers = [p for p in doc["placements"] if p["role"] == "worker" and p["server"] in caps]
    reported = doc.get("storage")
    if reported is None:  # the least the schedule must store: the chunk each running worker trains
        stored = [(p["job_id"], p["server"], p["start"], p["end"], p["count"]) for p in workers]
    else:
        stored = []
        for g in reported:
            where = f"storage of job {g['job_id']!r} on {g['server']!r} [{g['start']}, {g['end']})"
            if g["job_id"] not in size or g["server"] not in caps:
                problems.append(f"{where}: unknown job or a server without a storage limit")
                continue
            if g["start"] < arrival[g["job_id"]] or g["end"] <= g["start"]:
                problems.append(f"{where}: before the job arrives or empty")
            if abs(g["gb"] - size[g["job_id"]]) > TOLERANCE:
                problems.append(f"{where}: {g['gb']} GB, but the job's chunks are {size[g['job_id']]} GB")
            stored.append((g["job_id"], g["server"], g["start"], g["end"], 1))
        problems += _uncovered(workers, stored)
    problems += _overfull(stored, size, caps)
    return problems


def _overfull(
    stored: list[tuple[str, str, int, int, int]], size: Mapping[str, float], caps: Mapping[str, float]
) -> list[str]:
    """(7b): the GB stored on a server never exceed U_s."""
    events: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for job_id, server, start, end, count in stored:
        events[server] += [(start, count * size[job_id]), (end, -count * size[job_id])]
    problems = []
    for server, evs in events.items():
        used = 0.0
        evs.sort()  # at one slot, releases (negative) come before new chunks
        for i, (t, delta) in enumerate(evs):
            used += delta
            if (i + 1 == len(evs) or evs[i + 1][0] != t) and used > caps[server] + TOLERANCE * max(1.0, used):
                problems.append(f"server {server!r} slot {t}: {used:g} GB of chunks stored > storage {caps[server]:g}")
                break
    return problems


def _uncovered(workers: list[Mapping[str, Any]], stored: list[tuple[str, str, int, int, int]]) -> list[str]:
    """(7a): in every slot, a job runs no more workers on a server than it has chunks stored there."""
    events: dict[tuple[str, str], dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for job_id, server, start, end, count in stored:  # slot -> [chunk change, worker change]
        events[(job_id, server)][start][0] += count
        events[(job_id, server)][end][0] -= count
    for p in workers:
        events[(p["job_id"], p["server"])][p["start"]][1] += p["count"]
        events[(p["job_id"], p["server"])][p["end"]][1] -= p["count"]
    problems = []
    for (job_id, server), deltas in events.items():
        chunks = running = 0
        for t in sorted(deltas):
            chunks, running = chunks + deltas[t][0], running + deltas[t][1]
            if running > chunks:
                problems.append(
                    f"job {job_id!r} runs {running} worker(s) on {server!r} at slot {t} with {chunks} chunk(s) stored"
                )
                break
    return problems
