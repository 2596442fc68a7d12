"""Rigid GPU jobs as A-SRPT stage-graph jobs: the paper's own recipe for Philly (seeds/004, Sec. V-A-1-b).

The mapping itself is ``scheduling.algorithms.asrpt.philly.convert`` (a Table I model and training
configuration per (group, GPUs), iterations = duration / alpha~_min); this module gives it the
cluster it needs (homogeneous GPU servers with NIC and NVLink bandwidths) and records what it chose.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduling.adapt.common import (
    Adapted,
    Assumption,
    gpu_servers,
    gpus_of,
    number,
    rigid_or_refused,
    server_entry,
)
from scheduling.algorithms.asrpt.philly import convert
from scheduling.model import Cluster, Job
from scheduling.presets import ASRPT_MODELS

NIC_GBPS = 10.0  # the asrpt preset's (Sec. V-B): a server without nic_bw_gbps gets it
INTRA_GBPS = 2400.0  # 300 GB/s NVLink


def _gbps(mb_per_slot: float | None, slot: float, default: float) -> float:
    return default if mb_per_slot is None else mb_per_slot / (125.0 * slot)


def cluster_spec(cluster: Cluster, label: str) -> tuple[dict[str, Any], list[str]]:
    slot = cluster.slot_seconds
    entries = []
    defaulted = []
    for s in gpu_servers(cluster, label):
        if s.nic_bw is None or s.intra_bw is None:
            defaulted.append(s.id)
        entries.append(
            server_entry(
                s,
                {"gpu": gpus_of(s)},
                nic_bw_gbps=number(_gbps(s.nic_bw, slot, NIC_GBPS)),
                intra_bw_gbps=number(_gbps(s.intra_bw, slot, INTRA_GBPS)),
            )
        )
    doc = {
        "slot_seconds": number(slot),
        "resources": [{"name": "gpu", "unit": "GPU"}],
        "servers": entries,
        "worker_types": [{"id": "gpu", "demand": {"gpu": 1}}],
    }
    return doc, defaulted


def _configured(gpus: int) -> bool:
    return any(s * r == gpus for m in ASRPT_MODELS for s, r in m.configs)


def adapt(cluster: Cluster, jobs: Sequence[Job], seed: int, label: str) -> Adapted:
    doc, defaulted = cluster_spec(cluster, label)
    kept, refused = rigid_or_refused(jobs)
    slot = cluster.slot_seconds
    rows = []
    for job in kept:
        assert job.duration is not None
        row: dict[str, Any] = {"job_id": job.job_id, "arrival": job.arrival, "gpus": job.gpus}
        row["duration"] = job.duration * slot  # seconds: the recorded run time as loaded (whole slots)
        for name in ("group", "user"):
            if getattr(job, name) is not None:
                row[name] = getattr(job, name)
        rows.append(row)
    converted = convert(rows, doc, seed)
    changed = [
        {
            "job_id": j["job_id"],
            "change": f"no Table I configuration has {j['gpus']} GPUs: data parallelism (1 stage x {j['gpus']} "
            f"replicas) of {j['model']}, a model that fits one GPU",
        }
        for j in converted
        if not _configured(int(j["gpus"]))
    ]
    assumptions = [
        Assumption("slot_seconds", doc["slot_seconds"], "the cluster's (the asrpt preset's 60-s slots)"),
        Assumption(
            "model and configuration",
            "per (group, GPUs): a one-GPU model for one GPU, else a random Table I model with a configuration of that "
            "many GPUs (stages x replicas); a job without a group is its own group",
            "Sec. V-A-1-b; scheduling/algorithms/asrpt/philly.py",
        ),
        Assumption(
            "fallback configuration",
            "data parallelism (1 stage x g replicas) of a one-GPU model",
            "for GPU counts no Table I configuration has (listed under changed)",
        ),
        Assumption(
            "iterations, work",
            "max(1, round(duration / alpha~_min))",
            "Sec. V-A-1-b: the duration divided by the minimum per-iteration time (Heavy-Edge on the fewest servers, "
            "eq. (7))",
        ),
        Assumption("batch_time", "alpha~_min, seconds", "the job's minimum per-iteration time"),
        Assumption(
            "profiles", {m.name: [list(c) for c in m.configs] for m in ASRPT_MODELS}, "Table I (docs/formats.md, asrpt)"
        ),
        Assumption("worker_types", {"gpu": {"gpu": 1}}, "one GPU per stage replica"),
        Assumption("prediction", "none in the trace", "predicting iterations is the algorithm's part (give a history)"),
    ]
    if defaulted:
        assumptions.append(
            Assumption(
                "server bandwidths",
                {"nic_bw_gbps": NIC_GBPS, "intra_bw_gbps": INTRA_GBPS, "servers": len(defaulted)},
                "the asrpt preset's (Sec. V-B: 10 Gbps NIC, 300 GB/s NVLink), for servers that state none",
            )
        )
    return Adapted(doc, converted, assumptions, refused, changed)
