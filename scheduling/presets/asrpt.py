"""Preset ``asrpt``: A-SRPT (Luo et al., prediction-assisted online DDL scheduling), Sec. V-B.

bench/asrpt_figures.py overrides ``ASRPT_GPU_SHARES`` of this module for a run; ``_asrpt`` reads
it here at call time, so an override must be made on this module, not on the package.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduling.presets._common import PAPER_RESTART_SECONDS, PresetFiles, _job_id, _json, _scaled

ASRPT_SLOT_SECONDS = 60
ASRPT_GPUS_PER_SERVER = 8  # "250 servers, each equipped with eight GPUs"
ASRPT_NIC_GBPS = 10.0  # "The NIC bandwidth of each server is set to 10Gbps"
ASRPT_NVLINK_GBPS = 2400.0  # "300GB/s, based on the NVLink specs of NVIDIA V100 GPUs"
ASRPT_LOAD = 0.8  # offered GPU load over the arrival window (the trace's load is not given)
ASRPT_JOBS_PER_GROUP = 6  # recurring jobs: "nearly 65% submitted at least five times"


@dataclass(frozen=True)
class ModelProfile:
    """A DNN of Table I with plausible V100 figures (see docs/formats.md, preset asrpt)."""

    name: str
    params_mb: float  # trainable parameters, MB (fp32 up to XLNet-large, fp16 for the larger ones)
    forward: float  # forward pass of one mini-batch through the whole model on one V100, seconds
    activation_mb: float  # activations crossing a stage boundary per mini-batch, MB
    configs: tuple[tuple[int, int], ...]  # distributed configurations: (stages, replicas per stage)


# Mini-batch sizes as in Table I; the backward pass takes twice the forward pass.
ASRPT_MODELS: tuple[ModelProfile, ...] = (
    ModelProfile("VGG19", 576, 0.075, 25, ((1, 1), (2, 1), (2, 2), (4, 2))),
    ModelProfile("ResNet152", 240, 0.03, 3, ((1, 1), (2, 1), (4, 1), (4, 2))),
    ModelProfile("Inception-V3", 96, 0.05, 12, ((1, 1), (2, 1), (2, 2))),
    ModelProfile("BERT-large", 1360, 0.06, 6, ((1, 1), (2, 1), (4, 1), (4, 2), (8, 2))),
    ModelProfile("XLNet-large", 2200, 0.08, 6, ((1, 1), (4, 1), (8, 1), (8, 2))),
    ModelProfile("T5", 22000, 1.4, 8, ((8, 1), (16, 1), (16, 2))),
    ModelProfile("GPT-6.7B", 13400, 3.6, 128, ((8, 1), (8, 2), (16, 2))),
    ModelProfile("GPT-13B", 26000, 7.0, 160, ((16, 1), (16, 2), (32, 2))),
    ModelProfile("GPT-175B", 350000, 48.0, 192, ((64, 2),)),
)
# GPUs requested per job group: over 70% single-GPU as in the paper's trace [6], a tail to 128.
ASRPT_GPU_SHARES: tuple[tuple[int, float], ...] = (
    (1, 0.72),
    (2, 0.07),
    (4, 0.07),
    (8, 0.09),
    (16, 0.03),
    (32, 0.01),
    (64, 0.005),
    (128, 0.005),
)


def pipeline_stages(model: ModelProfile, stages: int, replicas: int) -> list[dict[str, float]]:
    """Even split of a model into ``stages`` stages of ``replicas`` replicas (seconds and MB)."""
    out = []
    for s in range(stages):
        out.append(
            {
                "replicas": replicas,
                "forward": round(model.forward / stages, 6),
                "backward": round(2 * model.forward / stages, 6),
                "activation_in": model.activation_mb if s > 0 else 0,
                "activation_out": model.activation_mb if s < stages - 1 else 0,
                "params": round(model.params_mb / stages, 3),
            }
        )
    return out


def min_iteration_time(
    stages: Sequence[dict[str, float]], gpus_per_server: int, nic_gbps: float, intra_gbps: float
) -> float:
    """Per-iteration time (s) by A-SRPT eqs. (4)-(7) with the replicas packed on the fewest servers.

    Replicas are placed in stage order, ``gpus_per_server`` per server (the paper's estimate of
    alpha_min: servers m_1..m_{|M|-1} give all their GPUs). Bandwidths in MB/s (1 Gbps = 125 MB/s).
    """
    inter, intra, g = nic_gbps * 125.0, intra_gbps * 125.0, gpus_per_server
    where = [idx // g for idx in range(sum(int(s["replicas"]) for s in stages))]
    counts: list[dict[int, int]] = []  # per stage: server -> replicas there
    idx = 0
    for s in stages:
        c: dict[int, int] = {}
        for _ in range(int(s["replicas"])):
            c[where[idx]] = c.get(where[idx], 0) + 1
            idx += 1
        counts.append(c)
    alpha = 0.0
    for i, s in enumerate(stages):
        k = int(s["replicas"])
        for m, x in counts[i].items():
            comp = s["forward"] + s["backward"]  # (4)
            remote = local = 0.0  # (5): activations in from stage i-1 and out to stage i+1
            for j, d in ((i - 1, s["activation_in"]), (i + 1, s["activation_out"])):
                if 0 <= j < len(stages) and d > 0:
                    kj = int(stages[j]["replicas"])
                    here = counts[j].get(m, 0)
                    remote += 2 * d * (kj - here) / kj
                    local += 2 * d * here / kj
            comm = remote * g / inter + local / intra
            share = 2 * (k - 1) / k * s["params"]  # (6): AllReduce among the stage's replicas
            allreduce = 0.0 if k == 1 else share / intra if x == k else share / (x / g * inter)
            alpha = max(alpha, comp + comm + allreduce)  # (7)
    return alpha


def _asrpt(
    n: int,
    rng: np.random.Generator,
    size: float,
    load: float | None = None,
    groups_rng: np.random.Generator | None = None,
) -> PresetFiles:
    """``groups_rng``: draw the job groups from it instead of ``rng`` (the preset's own history: the
    same recurring groups as the evaluated trace, other jobs of them; ``asrpt_history``)."""
    n_servers = _scaled(250, size)
    total_gpus = n_servers * ASRPT_GPUS_PER_SERVER
    shares = [(g, p) for g, p in ASRPT_GPU_SHARES if g <= total_gpus]
    weights = np.array([p for _, p in shares])

    # Job groups (recurring jobs): a GPU demand, a model and configuration, a user, a typical length.
    n_groups = max(1, math.ceil(n / ASRPT_JOBS_PER_GROUP))
    n_users = max(1, math.ceil(n_groups / 3))
    groups: list[dict[str, Any]] = []
    g_rng = rng if groups_rng is None else groups_rng
    for k in range(n_groups):
        gpus = shares[g_rng.choice(len(shares), p=weights / weights.sum())][0]
        options = [(m, c) for m in ASRPT_MODELS for c in m.configs if c[0] * c[1] == gpus]
        model, (n_stages, replicas) = options[g_rng.integers(len(options))]
        stages = pipeline_stages(model, n_stages, replicas)
        alpha = min_iteration_time(stages, ASRPT_GPUS_PER_SERVER, ASRPT_NIC_GBPS, ASRPT_NVLINK_GBPS)
        # Typical run time of the group: log-normal, median 30 min, 1 minute to 7 days.
        seconds = float(np.clip(g_rng.lognormal(math.log(1800), 1.5), 60, 7 * 86400))
        user = f"u{int(g_rng.integers(n_users)):03d}"
        groups.append({"id": f"g{k:04d}", "gpus": gpus, "model": model.name, "stages": stages, "alpha": alpha})
        groups[-1].update({"seconds": seconds, "user": user})
    popularity = 1.0 / np.arange(1, n_groups + 1)  # Zipf-like: a few groups recur very often
    members = rng.choice(n_groups, size=n, p=popularity / popularity.sum())

    jobs: list[dict[str, Any]] = []
    gpu_seconds = 0.0
    for i in range(n):
        grp = groups[members[i]]
        seconds = grp["seconds"] * rng.lognormal(0.0, 0.4)  # runs of one group vary around its typical length
        iterations = max(1, round(seconds / grp["alpha"]))
        gpu_seconds += grp["gpus"] * iterations * grp["alpha"]
        jobs.append(
            {
                "job_id": _job_id(i),
                "arrival": 0,
                "arch": "pipeline",
                "model": grp["model"],
                "group": grp["id"],
                "user": grp["user"],
                "gpus": grp["gpus"],
                "iterations": iterations,
                "work": iterations,
                "batch_time": round(grp["alpha"], 6),
                "stages": grp["stages"],
            }
        )
    # Poisson arrivals (uniform order statistics) over a window that offers ASRPT_LOAD of the GPUs.
    window = gpu_seconds / ((ASRPT_LOAD if load is None else load) * total_gpus)
    arrivals = np.sort(rng.uniform(0.0, window, size=n))
    for job, at in zip(jobs, arrivals, strict=True):
        job["arrival"] = int(at // ASRPT_SLOT_SECONDS)

    cluster = {
        "slot_seconds": ASRPT_SLOT_SECONDS,
        "restart_seconds": PAPER_RESTART_SECONDS,
        "resources": [{"name": "gpu", "unit": "GPU"}],
        "servers": [
            {
                "id": "gpu-node",
                "count": n_servers,
                "capacity": {"gpu": ASRPT_GPUS_PER_SERVER},
                "nic_bw_gbps": ASRPT_NIC_GBPS,
                "intra_bw_gbps": ASRPT_NVLINK_GBPS,
                "gpu_model": "V100",
            }
        ],
        "worker_types": [{"id": "gpu", "demand": {"gpu": 1}}],
    }
    return PresetFiles(_json(cluster), _json(jobs), "trace.json")


def asrpt_history(n: int, seed: int, history_seed: int, size: float, load: float | None = None) -> PresetFiles:
    """The asrpt preset's own history for the trace of ``seed``: the same job groups (model,
    configuration, GPUs, user, typical length: drawn from ``seed`` as the trace draws them) with other
    jobs of them (membership, lengths and arrivals from ``history_seed``). A-SRPT's predictor learns
    a group's iterations from its past jobs (Sec. IV-A: recurring jobs), so a history of other groups
    that reuse the trace's group ids would teach it nothing true."""
    return _asrpt(n, np.random.default_rng(history_seed), size, load, groups_rng=np.random.default_rng(seed))
