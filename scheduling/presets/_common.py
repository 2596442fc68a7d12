"""Shared pieces of the preset generators: the files they return and explicit number formats.

The formatting helpers keep the output byte-stable across platforms.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduling.errors import InputError

PAPER_RESTART_SECONDS = 30.0
"""The restart cost (cluster field ``restart_seconds``) of the presets whose paper algorithms tolerate
one (zhou-ps, zhou-allreduce, zhou-batch, asrpt, oasis, edge-cloud): 30 s per restart, the re-allocation
delay the Pollux authors' simulator charges every policy at every re-allocation (petuum/adaptdl at
de25dcc, simulator/simulator.py, ``Job.reallocate``: ``self.rescale_time = 30``). On one-hour slots it
costs 30 s of progress (engine.restart_share), on A-SRPT's 60-s slots half a slot. docs/formats.md,
"Presets", says how oasis plans for it and how edge-cloud's A_online makes up what a restart costs its
plan (docs/algorithms-oasis.md and docs/algorithms-edge.md, "Restart cost")."""


def no_load_knob(preset: str, load: float | None, why: str) -> None:
    """An InputError on field ``load`` for a preset whose offered load is set otherwise (``why``)."""
    if load is not None:
        raise InputError(f"preset {preset} has no offered-load knob: {why}", field="load")


@dataclass(frozen=True)
class PresetFiles:
    cluster: str  # cluster spec, JSON text
    trace: str  # trace, CSV or JSON text
    trace_name: str  # "trace.csv" or "trace.json"


def _num(x: float) -> str:
    """Integers without a point, other values as Python's shortest round-tripping repr."""
    if float(x).is_integer():
        return str(int(x))
    return repr(float(x))


def _csv(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return buf.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return _num(float(value))
    return str(value)


def _json(doc: Any) -> str:
    return json.dumps(doc, indent=1) + "\n"


def _job_id(i: int) -> str:
    return f"j{i:04d}"


def _scaled(count: int, size: float) -> int:
    return max(1, round(count * size))
