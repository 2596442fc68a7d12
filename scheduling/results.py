"""The result document (DESIGN section 4, schema ``mlsched.result/1``): build, write, read."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

from scheduling import metrics, provenance, records, status_replay
from scheduling.engine import JobRecord, Run, restart_share
from scheduling.model import Cluster, Instance
from scheduling.speed import demand_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


SCHEMA = "mlsched.result/1"


def build(instance: Instance, run: Run, algorithm: str, params: Mapping[str, Any], seed: int) -> dict[str, Any]:
    cluster = instance.cluster
    jobs = {j.job_id: j for j in instance.jobs}
    placements = []
    for p in run.placements:
        demand = demand_of(cluster, jobs[p.job_id], p.role, p.type) or {}
        placements.append(
            {
                "job_id": p.job_id,
                "server": p.server,
                "role": p.role,
                "type": p.type,
                "count": p.count,
                "start": p.start,
                "end": p.end,
                "demand": dict(demand),
            }
        )
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "algorithm": algorithm,
        "params": dict(params),
        "seed": seed,
        "horizon": run.horizon,
        "slot_seconds": cluster.slot_seconds,
        "servers": server_list(cluster),
        "metrics": {},
        "jobs": [job_dict(r) for r in run.jobs],
        "placements": placements,
        "progress": [{"job_id": p.job_id, "start": p.start, "end": p.end, "rate": p.rate} for p in run.progress],
    }
    own = run.job_restart_slots  # per-job restart costs (scheduling.restart_costs), if declared
    if run.restart_slots or (own and any(own.values())):
        # optional fields (DESIGN section 9): absent when restarts cost nothing
        doc["restart_seconds"] = run.restart_seconds
        doc["restart_slots"] = run.restart_slots
        if own:
            doc["job_restart_slots"] = dict(sorted(own.items()))
        doc["restarts"] = [{"job_id": r.job_id, "start": r.start, "end": r.end} for r in run.restarts]
    if cluster.failures:  # optional fields (scheduling.failures): instances with a failure trace only
        doc["failures"] = [{"server": f.server, "start": f.start, "end": f.end} for f in cluster.failures]
        doc["failure_kills"] = [
            {"job_id": k.job_id, "server": k.server, "slot": k.slot, "lost_work": k.lost_work} for k in run.kills
        ]
    doc.update(run.extra)
    doc.update(provenance.record(instance))  # optional: code version and input digests
    replayed = cluster.replay_status  # recorded failures end as failed/killed (scheduling.status_replay)
    if replayed:
        status_replay.mark({j.job_id: j.outcome for j in instance.jobs if j.outcome is not None}, doc)
    doc["metrics"] = compute_metrics(cluster, doc, None if replayed else run.jobs)
    utilities = {j.job_id: j.utility for j in instance.jobs}
    if metrics.has_utilities(utilities):  # optional OASiS metrics (admission rate, timeliness)
        doc["metrics"].update(metrics.utility_metrics(run.jobs, utilities))
    return doc


def server_list(cluster: Cluster) -> list[dict[str, Any]]:
    return [{"id": s.id, "capacity": dict(s.capacity), "unlimited": s.unlimited} for s in cluster.servers]


def job_dict(r: JobRecord) -> dict[str, Any]:
    return {
        "job_id": r.job_id,
        "arrival": r.arrival,
        "admitted": r.admitted,
        "start": r.start,
        "completion": r.completion,
        "weight": r.weight,
        "utility": r.utility,
        "work_required": r.work_required,
        "work_done": r.work_done,
        "preemptions": r.preemptions,
    }


def job_records(doc: Mapping[str, Any]) -> list[JobRecord]:
    """The job rows as records; a job that ended with a replayed outcome (scheduling.status_replay)
    is not completed, whatever its row's completion (the validator's view sets it to the end)."""
    names = records.names(JobRecord)
    out = []
    for j in doc["jobs"]:
        values = {k: j[k] for k in names}
        if j.get("outcome") is not None:
            values["completion"] = None
        out.append(JobRecord(**values))
    return out


def compute_metrics(
    cluster: Cluster, doc: Mapping[str, Any], records: Sequence[JobRecord] | None = None
) -> dict[str, Any]:
    """Metrics recomputed from a result's ``jobs`` and ``placements`` (used by build and validator).
    ``records``: the records ``doc["jobs"]`` was written from, when the caller has them (build)."""
    capacity = {r: cluster.total_capacity(r) for r in cluster.resource_names()}
    out = metrics.compute(job_records(doc) if records is None else records, usages(doc), capacity, doc["horizon"])
    k = int(doc.get("restart_slots", 0) or 0)
    seconds = float(doc.get("restart_seconds", 0) or 0) if k else 0.0
    share = restart_share(seconds, cluster, doc.get("job_restart_slots") is not None)
    out.update(metrics.restart_metrics(restart_usages(doc), k, share))
    if "status_replay" in doc:  # a cluster replaying recorded job outcomes only
        out.update(status_replay.metrics(doc))
    if "failure_kills" in doc:  # instances with a failure trace only
        out["failure_kills"] = len(doc["failure_kills"])
        out["lost_work"] = float(sum(k["lost_work"] for k in doc["failure_kills"]))
    return out


def restart_usages(doc: Mapping[str, Any]) -> list[metrics.Usage]:
    """Each restart period as the resources its job held during it (its allocation is constant then)."""
    periods = doc.get("restarts") or []
    if not periods:
        return []
    by_job: dict[str, list[Mapping[str, Any]]] = {}
    for p in doc["placements"]:
        by_job.setdefault(p["job_id"], []).append(p)
    unlimited = {s["id"] for s in doc["servers"] if s["unlimited"]}
    out = []
    for r in periods:
        held: dict[str, float] = {}
        limited = True
        for p in by_job.get(r["job_id"], ()):
            if p["start"] <= r["start"] < p["end"]:
                limited = limited and p["server"] not in unlimited
                for resource, amount in p["demand"].items():
                    held[resource] = held.get(resource, 0.0) + amount * p["count"]
        out.append(metrics.Usage(start=r["start"], end=r["end"], demand=held, limited=limited))
    return out


def usages(doc: Mapping[str, Any]) -> list[metrics.Usage]:
    """The result's placements as resource usage (count x per-instance demand)."""
    unlimited = {s["id"] for s in doc["servers"] if s["unlimited"]}
    return [
        metrics.Usage(
            start=p["start"],
            end=p["end"],
            demand={r: a * p["count"] for r, a in p["demand"].items()},
            limited=p["server"] not in unlimited,
        )
        for p in doc["placements"]
    ]


def utilization_timeline(doc: Mapping[str, Any]) -> dict[str, list[tuple[int, float]]]:
    """Utilisation per resource over time, from the result document alone (for charts)."""
    capacity: dict[str, float] = {}
    for s in doc["servers"]:
        if not s["unlimited"]:
            for r, a in s["capacity"].items():
                capacity[r] = capacity.get(r, 0.0) + a
    return metrics.utilization_timeline(usages(doc), capacity)


def write(doc: Mapping[str, Any], path: Path | str) -> None:
    """Write ``doc`` to ``path`` as compact JSON, making its folder (os, not pathlib: start-up)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, separators=(",", ":"), sort_keys=False) + "\n")


def read(path: Path | str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        doc: dict[str, Any] = json.loads(f.read())
    return doc
