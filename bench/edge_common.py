"""Helpers shared by the edge-cloud benchmarks: the preset as an in-memory instance."""

from __future__ import annotations

import tempfile
from pathlib import Path

from scheduling import api, presets
from scheduling.model import Instance


def preset_instance(jobs: int, seed: int, size: float = 1.0) -> Instance:
    with tempfile.TemporaryDirectory() as tmp:
        cluster_path, trace_path = presets.generate("edge-cloud", jobs=jobs, seed=seed, size=size, out=Path(tmp))
        return api.load_instance(cluster_path, trace_path)
