"""The ``node-list`` import: a node-list CSV (``sn, cpu_milli, memory_mib, gpu, model``) -> a cluster spec."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from scheduling.errors import InputError
from scheduling.loaders import cluster_from_dict
from scheduling.raw_tables import check_ids, non_negative, require, resolve_columns, write_atomically

if TYPE_CHECKING:
    import pandas as pd


NODE_FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("sn", "node", "node_id", "hostname", "name", "id"),
    "cpu_milli": ("cpu_milli",),
    "cpu": ("cpu", "cpus", "vcpu", "vcpus", "num_cpu"),
    "memory_mib": ("memory_mib", "mem_mib"),
    "memory_gb": ("memory_gb", "mem_gb", "memory", "mem"),
    "gpu": ("gpu", "gpus", "num_gpu", "num_gpus"),
    "model": ("model", "gpu_model", "gpu_type"),
}
"""Our field -> raw column names tried in order. CPUs come from ``cpu_milli`` (thousandths) or
``cpu`` (vCPUs); memory from ``memory_mib`` or ``memory_gb``."""


def node_list(
    table: pd.DataFrame,
    raw: Path,
    out: Path,
    mapping: Mapping[str, str],
    slot: float,
    limit: int | None,
) -> str:
    label = str(raw)
    cols = resolve_columns(table, label, NODE_FIELDS, mapping)
    columns = list(table.columns)
    id_col = require(cols, "id", label, columns)
    gpu_col = require(cols, "gpu", label, columns)
    if limit is not None:
        table = table.iloc[:limit]
    cpu = amounts(table, cols, ("cpu_milli", 1000.0), ("cpu", 1.0), label, columns)
    mem = amounts(table, cols, ("memory_mib", 1024.0), ("memory_gb", 1.0), label, columns)
    gpu = non_negative(table, gpu_col, label)
    ids = table[id_col].to_numpy(dtype=object)
    check_ids(ids, np.ones(len(ids), dtype=bool), label, id_col)
    models = table[cols["model"]].to_numpy(dtype=object) if "model" in cols else None

    servers = []
    for k in range(len(table)):
        server: dict[str, Any] = {
            "id": str(ids[k]),
            "capacity": {"gpu": whole(gpu[k]), "cpu": whole(cpu[k]), "mem": whole(mem[k])},
        }
        if models is not None and str(models[k]) != "":
            server["gpu_model"] = str(models[k])
        servers.append(server)
    doc = {
        "slot_seconds": slot,
        "resources": [{"name": "gpu", "unit": "GPU"}, {"name": "cpu", "unit": "vCPU"}, {"name": "mem", "unit": "GB"}],
        "servers": servers,
        "worker_types": [{"id": "gpu", "demand": {"gpu": 1}}],
    }
    try:
        cluster_from_dict(doc)  # the spec we write must load
    except InputError as exc:
        raise InputError(f"the imported cluster does not load: {exc.problem}", file=label, field=exc.field) from None
    write_atomically(out, json.dumps(doc, indent=1) + "\n")
    by_model: dict[str, float] = {}
    for s in servers:
        m = str(s.get("gpu_model", "unknown"))
        by_model[m] = by_model.get(m, 0.0) + float(s["capacity"]["gpu"])
    mix = ", ".join(f"{m} {g:g}" for m, g in sorted(by_model.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"node-list: wrote {len(servers)} servers ({float(gpu.sum()):g} GPUs: {mix}) to {out}"


def amounts(
    table: pd.DataFrame,
    cols: Mapping[str, str],
    primary: tuple[str, float],
    fallback: tuple[str, float],
    label: str,
    columns: Sequence[str],
) -> np.ndarray:
    """One resource from whichever of two columns is present, divided by its unit factor."""
    for field, factor in (primary, fallback):
        if field in cols:
            return non_negative(table, cols[field], label) / factor
    raise InputError(
        f"missing column for {primary[0]} or {fallback[0]} (columns: {', '.join(columns)}); "
        f"map one with --map {primary[0]}=COLUMN",
        file=label,
        line=1,
        field=primary[0],
    )


def whole(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(float(x), 3)
