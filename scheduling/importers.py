"""Importers for raw production traces. SKELETON: interface only; the importers are being added."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from scheduling.errors import InputError

FORMATS: dict[str, str] = {
    "generic-gpu": "job_id, submit_time, num_gpus, duration (+ user, group, status, model) -> job trace",
    "node-list": "a node-list CSV (sn, cpu_milli, memory_mib, gpu, model) -> cluster spec",
}


def run(
    fmt: str,
    raw: Path,
    out: Path,
    *,
    seed: int = 0,
    mapping: Mapping[str, str] | None = None,
    slot_seconds: float | None = None,
    start: str | None = None,
    end: str | None = None,
    limit: int | None = None,
) -> str:
    raise InputError(f"format {fmt!r} is not available yet", field="--format")
