"""Importers for raw production traces and node lists (docs/formats.md, "Imports").

* ``generic-gpu`` (scheduling/import_gpu.py): a raw GPU-job CSV (``job_id, submit_time, num_gpus,
  duration`` and optional ``user, group, status, model``; Philly as published needs no mapping) -> a
  job trace of rigid jobs with seeded elastic assumptions beside them;
* ``node-list`` (scheduling/import_nodes.py): a node-list CSV (``sn, cpu_milli, memory_mib, gpu,
  model``) -> a cluster spec.

Raw files are read with pandas, as text, and checked completely before anything is written
(scheduling/raw_tables.py); every problem raises ``InputError`` naming the file, the line (the
header is line 1), the column and what is wrong. The output is written to a temporary file beside
the target and renamed at the end, so a failed import never leaves a partial file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np

from scheduling.errors import InputError
from scheduling.import_gpu import (
    GENERIC_FIELDS,
    NEVER_RAN,
    PROFILES,
    TRACE_COLUMNS,
    Profile,
    generic_gpu,
    generic_rows,
)
from scheduling.import_gpu import profile_of as _profile
from scheduling.import_nodes import NODE_FIELDS, node_list
from scheduling.raw_tables import MAX_RAW_BYTES, read_raw, refuse_compressed, resolve_columns

__all__ = [
    "DEFAULT_SLOT_SECONDS",
    "FORMATS",
    "GENERIC_FIELDS",
    "MAX_RAW_BYTES",
    "NEVER_RAN",
    "NODE_FIELDS",
    "PROFILES",
    "TRACE_COLUMNS",
    "Profile",
    "_profile",
    "generic_gpu_preview",
    "read_raw",
    "refuse_compressed",
    "resolve_columns",
    "run",
]

FORMATS: dict[str, str] = {
    "generic-gpu": "job_id, submit_time, num_gpus, duration (+ user, group, status, model) -> job trace",
    "node-list": "a node-list CSV (sn, cpu_milli, memory_mib, gpu, model) -> cluster spec",
}

DEFAULT_SLOT_SECONDS = 60.0
"""Slot length when ``slot_seconds`` is not given: one minute resolves Philly's median job (~19
minutes) into ~20 slots while its longest (~54 days) stays under 80,000 slots."""


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
    """Import ``raw`` (format ``fmt``) into ``out``; return a one-line summary."""
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r} (known: {', '.join(sorted(FORMATS))})", field="--format")
    slot = DEFAULT_SLOT_SECONDS if slot_seconds is None else float(slot_seconds)
    if not math.isfinite(slot) or slot <= 0:
        raise InputError(f"{slot_seconds!r} must be a positive number of seconds", field="--slot-seconds")
    if limit is not None and limit < 1:
        raise InputError(f"{limit} must be at least 1", field="--limit")
    suffix = out.suffix.lower()
    allowed = (".json",) if fmt == "node-list" else (".csv", ".json")
    if suffix not in allowed:
        raise InputError(f"output must end in {' or '.join(allowed)}", file=str(out), field="--out")
    table = read_raw(raw)
    if fmt == "node-list":
        if start is not None or end is not None:
            raise InputError("a node list has no submit times to window", field="--start" if start else "--end")
        return node_list(table, raw, out, mapping or {}, slot, limit)
    return generic_gpu(table, raw, out, mapping or {}, slot, seed, start, end, limit)


def generic_gpu_preview(
    raw: Path,
    out: Path,
    head: int,
    *,
    seed: int = 0,
    mapping: Mapping[str, str] | None = None,
    slot_seconds: float | None = None,
    start: str | None = None,
    end: str | None = None,
    limit: int | None = None,
) -> dict[str, np.ndarray]:
    """A quick look at what ``run("generic-gpu", raw, out, ...)`` would write, without building every
    job: its first ``head`` jobs written to ``out`` (the same rows, ids and profiles as the whole
    import's), and every job as arrays in their order: ``arrival`` (slots), ``gpus`` (whole GPUs)
    and ``duration`` (seconds). InputError as ``run``'s."""
    slot = DEFAULT_SLOT_SECONDS if slot_seconds is None else float(slot_seconds)
    if not math.isfinite(slot) or slot <= 0:
        raise InputError(f"{slot_seconds!r} must be a positive number of seconds", field="--slot-seconds")
    if limit is not None and limit < 1:
        raise InputError(f"{limit} must be at least 1", field="--limit")
    table = read_raw(raw)
    sel = generic_rows(table, raw, mapping or {}, start, end, limit)
    generic_gpu(table, raw, out, mapping or {}, slot, seed, start, end, limit, replace(sel, rows=sel.rows[:head]))
    submit = sel.submit[sel.rows]
    return {
        "arrival": ((submit - submit[0]) // slot).astype(np.int64),
        "gpus": np.ceil(sel.gpus[sel.rows] - 1e-9).astype(np.int64),
        "duration": sel.duration[sel.rows].astype(float),
    }
