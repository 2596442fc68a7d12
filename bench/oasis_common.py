"""Helpers shared by the OASiS benchmarks: preset instances in memory, and small Fig. 5 instances."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from scheduling import api, presets
from scheduling.loaders import cluster_from_dict, job_from_row
from scheduling.metrics import job_class
from scheduling.model import Instance


def preset_instance(jobs: int, seed: int, size: float = 1.0, worker_limit: str = "M") -> Instance:
    """Preset ``oasis`` in memory. ``worker_limit="N"`` is the robustness variant of the preset's
    reading (docs/results-oasis.md): at most N_i = work / epochs workers (constraint (3) as
    written) instead of M_i, same work E_i N_i, so the fastest JCT is E_i (tau_i + 2 e_i / b_i)."""
    with tempfile.TemporaryDirectory() as tmp:
        cluster_path, trace_path = presets.generate("oasis", jobs=jobs, seed=seed, size=size, out=Path(tmp))
        inst = api.load_instance(cluster_path, trace_path)
    if worker_limit == "N":
        jobs_n = tuple(dataclasses.replace(j, chunks=round(j.work_required / j.epochs)) for j in inst.jobs)
        inst = Instance(inst.cluster, jobs_n)
    return inst


def class_counts(instance: Instance) -> dict[str, int]:
    out: dict[str, int] = {}
    for j in instance.jobs:
        out[job_class(j.utility)] = out.get(job_class(j.utility), 0) + 1
    return out


def small_instance(seed: int, servers: int, priority_max: float, jobs: int = 10, horizon: int = 10) -> Instance:
    """A Fig. 5 instance: T = 10, 10 jobs, ``servers`` servers split evenly into worker and PS servers.

    Servers and per-worker/PS demands as the oasis preset (Sec. V-A: C4-shaped worker servers with
    4-8 GPUs, P2/G3-shaped PS servers, bandwidth 20-50 Gbps); tau_i in [0.001, 0.1] slots and e_i in
    [30, 575] MB as in Sec. V-A; priorities in [1, ``priority_max``]; the 10/55/35% job classes. Jobs
    are scaled to the 10-slot horizon: E_i in [5, 20], N_i in [5, 10] (work E_i N_i units), at most
    M_i in [2, 10] workers; arrivals uniform in [0, 8), targets in [1, 5] slots.
    """
    rng = np.random.default_rng(seed)
    half = max(1, servers // 2)
    spec: dict[str, Any] = {"slot_seconds": 3600, "horizon": horizon, "resources": ["gpu", "cpu", "mem", "bw"]}
    spec["servers"] = [
        {
            "id": f"w{h}",
            "pool": "worker",
            "capacity": {
                "gpu": int(rng.choice([4, 8])),
                "cpu": int(rng.choice([16, 36])),
                "mem": 60,
                "bw": int(rng.integers(20, 51)),
            },
        }
        for h in range(half)
    ] + [
        {
            "id": f"p{k}",
            "pool": "ps",
            "capacity": {"cpu": int(rng.choice([16, 32, 64])), "mem": 244, "bw": int(rng.integers(20, 51))},
        }
        for k in range(max(1, servers - half))
    ]
    cluster = cluster_from_dict(spec)
    rows = []
    for i in range(jobs):
        cls = rng.choice(3, p=[0.10, 0.55, 0.35])
        rows.append(
            {
                "job_id": f"j{i}",
                "arrival": int(rng.integers(0, horizon - 2)),
                "arch": "ps",
                "work": int(rng.integers(5, 21)) * int(rng.integers(5, 11)),
                "chunks": int(rng.integers(2, 11)),
                "batch_time": round(float(rng.uniform(0.001, 0.1)) * 3600, 1),
                "gradient_mb": round(float(rng.uniform(30, 575)), 1),
                "worker_demand": {
                    "gpu": int(rng.integers(0, 5)),
                    "cpu": int(rng.integers(1, 11)),
                    "mem": int(rng.integers(2, 33)),
                    "bw": round(float(rng.uniform(0.1, 5.0)), 1),
                },
                "ps_demand": {
                    "cpu": int(rng.integers(1, 11)),
                    "mem": int(rng.integers(2, 33)),
                    "bw": round(float(rng.uniform(5.0, 20.0)), 1),
                },
                "priority": round(float(rng.uniform(1, priority_max)), 2),
                "decay": 0.0
                if cls == 0
                else round(float(rng.uniform(0.01, 1.0) if cls == 1 else rng.uniform(4, 6)), 3),
                "target": round(float(rng.uniform(1, 5)), 2),
            }
        )
    parsed = sorted((job_from_row(r, cluster) for r in rows), key=lambda j: (j.arrival, j.job_id))
    return Instance(cluster, tuple(parsed))
