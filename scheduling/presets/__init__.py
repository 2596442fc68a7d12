"""Presets: a cluster and a seeded trace per paper's evaluation setting (docs/formats.md, "Presets").

Every builder draws from one ``numpy.random.default_rng(seed)`` in a fixed order and formats
numbers explicitly, so the same (preset, jobs, seed, size) gives byte-identical files. The ranges
come from each paper's evaluation section (cited per builder); where a paper leaves something open,
the choice is made once in that preset's module, commented, and listed in docs/formats.md.

The generators live one module per paper (``demo``, ``zhou``, ``oasis``, ``edge_cloud``,
``asrpt``, with shared formatting helpers in ``_common``); this package re-exports their public
names, so ``scheduling.presets.<name>`` keeps working.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from scheduling.errors import InputError
from scheduling.presets._common import PresetFiles
from scheduling.presets.asrpt import (
    ASRPT_GPU_SHARES,
    ASRPT_GPUS_PER_SERVER,
    ASRPT_JOBS_PER_GROUP,
    ASRPT_LOAD,
    ASRPT_MODELS,
    ASRPT_NIC_GBPS,
    ASRPT_NVLINK_GBPS,
    ASRPT_SLOT_SECONDS,
    ModelProfile,
    _asrpt,
    asrpt_history,
    min_iteration_time,
    pipeline_stages,
)
from scheduling.presets.demo import _demo
from scheduling.presets.edge_cloud import (
    EDGE_MEAN_GAP,
    EDGE_MODELS,
    EDGE_SLOT_SECONDS,
    EDGE_VCPUS_PER_PS,
    EDGE_WORKER_TYPES,
    OPENB_NODE_SHAPES,
    _edge_cloud,
)
from scheduling.presets.oasis import (
    OASIS_PS_SERVERS,
    OASIS_SERVER_STORAGE_GB,
    OASIS_SLOT_SECONDS,
    OASIS_T,
    OASIS_WORKER_SERVERS,
    _oasis,
    google_like_arrivals,
)
from scheduling.presets.zhou import (
    EC2_GPU_SERVERS,
    ZHOU_IDEAL_WORKERS,
    ZHOU_PS_TYPES,
    ZHOU_SERVERS,
    ZHOU_SLOT_SECONDS,
    ZHOU_T,
    ZHOU_WORKER_TYPES,
    _zhou_allreduce,
    _zhou_batch,
    _zhou_ps,
)

__all__ = [
    "ASRPT_GPUS_PER_SERVER",
    "ASRPT_GPU_SHARES",
    "ASRPT_JOBS_PER_GROUP",
    "ASRPT_LOAD",
    "ASRPT_MODELS",
    "ASRPT_NIC_GBPS",
    "ASRPT_NVLINK_GBPS",
    "ASRPT_SLOT_SECONDS",
    "EC2_GPU_SERVERS",
    "EDGE_MEAN_GAP",
    "EDGE_MODELS",
    "EDGE_SLOT_SECONDS",
    "EDGE_VCPUS_PER_PS",
    "EDGE_WORKER_TYPES",
    "OASIS_PS_SERVERS",
    "OASIS_SERVER_STORAGE_GB",
    "OASIS_SLOT_SECONDS",
    "OASIS_T",
    "OASIS_WORKER_SERVERS",
    "OPENB_NODE_SHAPES",
    "PRESETS",
    "ZHOU_IDEAL_WORKERS",
    "ZHOU_PS_TYPES",
    "ZHOU_SERVERS",
    "ZHOU_SLOT_SECONDS",
    "ZHOU_T",
    "ZHOU_WORKER_TYPES",
    "Builder",
    "ModelProfile",
    "Preset",
    "PresetFiles",
    "build",
    "generate",
    "google_like_arrivals",
    "min_iteration_time",
    "pipeline_stages",
]


@dataclass(frozen=True)
class Preset:
    name: str
    summary: str
    default_jobs: int


PRESETS: dict[str, Preset] = {
    "demo": Preset("demo", "A small PS cluster with a few elastic jobs, for a first look.", 20),
    "zhou-ps": Preset(
        "zhou-ps",
        "Zhou et al. (TCC'23) Sec. 7, PS architecture: EC2 P3/P2/G3 servers, 8 worker and 10 PS types, "
        "capacity 0.2-0.5 of what the baselines run; contended at the default load.",
        100,
    ),
    "zhou-allreduce": Preset(
        "zhou-allreduce",
        "Zhou et al. (TCC'23) Sec. 7, Ring-AllReduce architecture: as zhou-ps without parameter servers.",
        100,
    ),
    "zhou-batch": Preset(
        "zhou-batch",
        "Zhou et al. (TCC'23) Sec. 7.2, Figs. 8, 11, 12: the zhou-ps jobs of the same seed, every one present "
        "at slot 0 (the offline batch problem (7); run zhou-maxweight and jain-greedy with tau=64).",
        60,
    ),
    "oasis": Preset(
        "oasis",
        "OASiS (INFOCOM'18) Sec. V-A: 50 worker + 50 PS servers, per-job demands, sigmoid utilities, T = 300.",
        200,
    ),
    "edge-cloud": Preset(
        "edge-cloud",
        "Edge-cloud paper Sec. V-A: 100 edge servers with pre-deployed typed unit workers/PSs and an "
        "unlimited cloud with a larger upload delay.",
        300,
    ),
    "asrpt": Preset(
        "asrpt",
        "A-SRPT Sec. V-B: 250 servers of 8 GPUs (NVLink + 10 Gbps NIC), recurring pipeline-parallel jobs.",
        1000,
    ),
}


def build(
    name: str, jobs: int | None = None, seed: int = 0, size: float = 1.0, load: float | None = None
) -> PresetFiles:
    """The cluster spec and trace of preset ``name``.

    ``jobs`` overrides the preset's default job count; ``size`` (0 < size <= 1) scales the cluster
    down, and the default job count with it, for quick runs; ``load`` overrides the preset's
    offered load (docs/formats.md, "Presets": its meaning per preset; None: the preset's default).
    """
    if name not in PRESETS:
        raise InputError(f"unknown preset {name!r} (known: {', '.join(sorted(PRESETS))})", field="preset")
    if jobs is not None and jobs < 1:
        raise InputError(f"{jobs} must be at least 1", field="jobs")
    if not 0 < size <= 1:
        raise InputError(f"{size:g} must be in (0, 1]", field="size")
    if load is not None and not 0 < load <= 1000:
        raise InputError(f"{load:g} must be in (0, 1000]", field="load")
    n = jobs if jobs is not None else max(1, round(PRESETS[name].default_jobs * size))
    return _BUILDERS[name](n, np.random.default_rng(seed), size, load)


HISTORY_SEED_OFFSET = 1_000_003
"""A preset's own history (``generate --history``) is the same preset drawn from seed + this: a
past period of the same setting that shares no draw with the evaluated trace's seed range."""


def own_history(
    name: str, jobs: int | None = None, seed: int = 0, size: float = 1.0, load: float | None = None
) -> PresetFiles:
    """The preset's own history for the instance ``build`` makes with these arguments: the same
    preset drawn from ``seed + HISTORY_SEED_OFFSET``. Its trace is the history, named
    ``history.csv`` (or ``.json``); its cluster is the evaluated trace's, as the arguments are the same.
    asrpt's history keeps the trace's job groups (``asrpt_history``: its predictors learn per group)."""
    if name == "asrpt":
        build(name, jobs, seed, size, load)  # the same argument checks
        n = jobs if jobs is not None else max(1, round(PRESETS[name].default_jobs * size))
        past = asrpt_history(n, seed, seed + HISTORY_SEED_OFFSET, size, load)
        return replace(past, trace_name=past.trace_name.replace("trace", "history"))
    past = build(name, jobs, seed + HISTORY_SEED_OFFSET, size, load)
    return replace(past, trace_name=past.trace_name.replace("trace", "history"))


def generate(
    name: str,
    jobs: int | None,
    seed: int,
    size: float,
    out: Path,
    load: float | None = None,
    history: bool = False,
) -> list[Path]:
    """Write the preset's cluster and trace to ``out``; with ``history`` also ``history.csv`` (or
    ``.json``): the same preset's trace from another seed, for ``--history`` (no look-ahead: online
    estimators calibrate on it, never on the evaluated trace)."""
    files = build(name, jobs, seed, size, load)
    out.mkdir(parents=True, exist_ok=True)
    cluster, trace = out / "cluster.json", out / files.trace_name
    cluster.write_text(files.cluster, encoding="utf-8")
    trace.write_text(files.trace, encoding="utf-8")
    # A trace of the other format left by an earlier run would not match this cluster.
    stale = out / ("trace.json" if files.trace_name == "trace.csv" else "trace.csv")
    stale.unlink(missing_ok=True)
    if not history:
        return [cluster, trace]
    past = own_history(name, jobs, seed, size, load)
    # The history runs on the evaluated trace's cluster: its jobs must fit it (checked on load).
    path = out / past.trace_name
    path.write_text(past.trace, encoding="utf-8")
    return [cluster, trace, path]


Builder = Callable[[int, np.random.Generator, float, float | None], PresetFiles]

_BUILDERS: dict[str, Builder] = {
    "demo": _demo,
    "zhou-ps": _zhou_ps,
    "zhou-allreduce": _zhou_allreduce,
    "zhou-batch": _zhou_batch,
    "oasis": _oasis,
    "edge-cloud": _edge_cloud,
    "asrpt": _asrpt,
}
