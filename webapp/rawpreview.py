"""The Datasets form's Preview of a large raw GPU-job trace (more than
``datasets.IMPORT_INLINE_BYTES``; Philly's 82,247 jobs are 3.4 MB), in well under the time of
importing and checking it: the first converted rows come from an import of the first jobs only
(the same rows, ids and profiles as the whole import's), the span and the offered load from the
importer's own selection of the rows (``importers.generic_gpu_arrays``), with the formula of the
trace check (``workers.checks.offered_load``). "Add" then imports and checks the whole file in the
background (``DatasetForm.import_later``), from the draft the preview keeps of the raw file."""

from __future__ import annotations

import math
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scheduling import importers
from scheduling.errors import InputError
from scheduling.model import Cluster
from workers.checks import load_warning

HEAD_JOBS = 11  # converted rows shown under the header


def quick_preview(
    raw: bytes, name: str, options: Mapping[str, Any], cluster: Cluster
) -> tuple[int, str, dict[str, Any]]:
    """(jobs, the converted file's first lines, {"span", "offered_load", "load_warning"}) of raw
    GPU-job trace ``raw`` imported with ``options`` (``importers.run``'s keywords); InputError as
    the import's, naming ``name``."""
    options = dict(options)
    with tempfile.TemporaryDirectory(prefix="mlsched-preview-") as tmp:
        path, out = Path(tmp) / (Path(name).name or "raw.csv"), Path(tmp) / "head.csv"
        path.write_bytes(raw)
        keys = ("seed", "mapping", "slot_seconds", "start", "end", "limit")
        try:
            arrays = importers.generic_gpu_preview(
                path, out, HEAD_JOBS, **{k: options[k] for k in keys if k in options}
            )
        except InputError as exc:  # named after the uploaded file, as the import's errors
            raise InputError(exc.problem, file=name, line=exc.line, job=exc.job, field=exc.field) from None
        head = out.read_text(encoding="utf-8")
    slot = float(options.get("slot_seconds") or importers.DEFAULT_SLOT_SECONDS)
    summary = summary_of(arrays, slot, cluster)
    return len(arrays["arrival"]), "\n".join(head.splitlines()[: HEAD_JOBS + 1]), summary


def summary_of(arrays: Mapping[str, np.ndarray], slot: float, cluster: Cluster) -> dict[str, Any]:
    """Span and offered load of the imported jobs, as the trace check computes them for the jobs the
    loader reads (durations in whole slots, at least one). No offered load when the import's slot
    is not the cluster's (the check then refuses the trace, saying so)."""
    arrival = arrays["arrival"]
    span = [int(arrival.min()), int(arrival.max())]
    load = None
    capacity = cluster.total_capacity("gpu") if "gpu" in cluster.resource_names() else 0.0
    if math.isclose(slot, cluster.slot_seconds, rel_tol=1e-9) and capacity and not math.isinf(capacity):
        slots = np.maximum(1, np.ceil(arrays["duration"] / cluster.slot_seconds - 1e-9))
        asked = float(np.sum(arrays["gpus"].astype(float) * slots))
        length = span[1] - span[0] + int(slots.max())
        load = asked / (capacity * max(length, 1))
    return {"span": span, "offered_load": load, "load_warning": load_warning(load)}
