"""Presets: a cluster and a seeded trace generator per paper's evaluation setting.

SKELETON: only the interface and a small "demo" preset; the paper presets are being added.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scheduling.errors import InputError


@dataclass(frozen=True)
class PresetFiles:
    cluster: str  # cluster spec, JSON text
    trace: str  # trace, CSV or JSON text
    trace_name: str  # "trace.csv" or "trace.json"


@dataclass(frozen=True)
class Preset:
    name: str
    summary: str
    default_jobs: int


PRESETS: dict[str, Preset] = {
    "demo": Preset("demo", "A small PS cluster with a few elastic jobs, for a first look.", 20),
}


def build(name: str, jobs: int | None = None, seed: int = 0, size: float = 1.0) -> PresetFiles:
    if name not in PRESETS:
        raise InputError(f"unknown preset {name!r} (known: {', '.join(sorted(PRESETS))})", field="preset")
    n = jobs or PRESETS[name].default_jobs
    rng = np.random.default_rng(seed)
    cluster = {
        "slot_seconds": 60,
        "resources": [{"name": "gpu", "unit": "GPU"}, {"name": "cpu", "unit": "vCPU"}, {"name": "bw", "unit": "Gbps"}],
        "servers": [{"id": "node", "count": max(1, round(4 * size)), "capacity": {"gpu": 8, "cpu": 32, "bw": 40}}],
        "worker_types": [{"id": "w1", "demand": {"gpu": 1, "cpu": 2, "bw": 1}}],
        "ps_types": [{"id": "p1", "demand": {"cpu": 2, "bw": 5}}],
    }
    lines = ["job_id,arrival,epochs,chunks,minibatches,batch_time,ps_update,gradient_mb,weight"]
    t = 0
    for i in range(n):
        t += int(rng.integers(0, 4))
        lines.append(
            f"j{i},{t},{rng.integers(1, 4)},{rng.integers(2, 9)},{rng.integers(5, 20)},"
            f"{rng.uniform(3, 12):.3f},{rng.uniform(0.5, 2):.3f},{rng.uniform(30, 300):.1f},{rng.integers(1, 10)}"
        )
    return PresetFiles(json.dumps(cluster, indent=1), "\n".join(lines) + "\n", "trace.csv")


def generate(name: str, jobs: int | None, seed: int, size: float, out: Path) -> list[Path]:
    files = build(name, jobs, seed, size)
    out.mkdir(parents=True, exist_ok=True)
    cluster, trace = out / "cluster.json", out / files.trace_name
    cluster.write_text(files.cluster, encoding="utf-8")
    trace.write_text(files.trace, encoding="utf-8")
    return [cluster, trace]
