"""Preset ``demo``: a small PS cluster with a few elastic jobs."""

from __future__ import annotations

import json

import numpy as np

from scheduling.presets._common import PresetFiles, no_load_knob


def _demo(n: int, rng: np.random.Generator, size: float, load: float | None = None) -> PresetFiles:
    no_load_knob("demo", load, "it is a first look, not a paper's setting")
    cluster = {
        "slot_seconds": 60,
        "resources": [{"name": "gpu", "unit": "GPU"}, {"name": "cpu", "unit": "vCPU"}, {"name": "bw", "unit": "Gbps"}],
        "servers": [{"id": "node", "count": max(1, round(2 * size)), "capacity": {"gpu": 8, "cpu": 32, "bw": 40}}],
        "worker_types": [{"id": "w1", "demand": {"gpu": 1, "cpu": 2, "bw": 1}}],
        "ps_types": [{"id": "p1", "demand": {"cpu": 2, "bw": 5}}],
    }
    lines = ["job_id,arrival,epochs,chunks,minibatches,batch_time,ps_update,gradient_mb,weight"]
    t = 0
    for i in range(n):
        t += int(rng.integers(0, 3))
        lines.append(
            f"j{i},{t},{rng.integers(2, 11)},{rng.integers(2, 9)},{rng.integers(5, 20)},"
            f"{rng.uniform(3, 12):.3f},{rng.uniform(0.5, 2):.3f},{rng.uniform(30, 300):.1f},{rng.integers(1, 10)}"
        )
    return PresetFiles(json.dumps(cluster, indent=1), "\n".join(lines) + "\n", "trace.csv")
