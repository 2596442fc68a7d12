"""Preset ``edge-cloud``: online preemptive scheduling in edge-cloud networks (PS architecture), Sec. V-A."""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduling.presets._common import PAPER_RESTART_SECONDS, PresetFiles, _csv, _job_id, _json, _scaled

EDGE_SLOT_SECONDS = 3600  # "setting one time slot to one hour long"
EDGE_WORKER_TYPES = 8  # "The types of workers and PSs are set to be 8 to 10"
EDGE_MEAN_GAP = 1.0  # mean inter-arrival time, slots (Poisson arrivals)

# Edge servers "follow the distributions in the trace": (GPUs, vCPUs, nodes) of the 1,213 GPU
# nodes of Alibaba's cluster-trace-gpu-v2023 (openb_node_list_gpu_node.csv), by shape.
OPENB_NODE_SHAPES: tuple[tuple[int, int, int], ...] = (
    (8, 96, 570),
    (2, 104, 387),
    (2, 16, 107),
    (8, 128, 39),
    (4, 32, 28),
    (2, 64, 22),
    (1, 8, 22),
    (4, 96, 17),
    (4, 48, 9),
    (8, 64, 7),
    (2, 8, 2),
    (1, 128, 2),
    (8, 82, 1),
)
# "the worker requirement of each job is computed according to the number of GPUs of the real
# trace" (Sec. V-A): GPU requests (num_gpu -> pods) of the 8,064 GPU pods of the same trace's
# openb_pod_list_default.csv (pods without GPUs left out). The fixed-configuration baselines give a
# job this many workers (trace column gpu_request); A_online is elastic and not bound by it.
OPENB_GPU_REQUESTS: tuple[tuple[int, int], ...] = ((1, 6989), (2, 16), (4, 15), (8, 44))
EDGE_VCPUS_PER_PS = 8  # "the number of ... PSs corresponds to that of ... CPUs": one PS slot per 8 vCPUs

# Table II: (model, data chunks D_j, mini-batches per chunk B_j).
EDGE_MODELS: tuple[tuple[str, int, int], ...] = (
    ("ResNet-50", 27, 58),
    ("ResNet-101", 27, 58),
    ("GoogLeNet", 115, 58),
    ("LeNet", 115, 58),
    ("AlexNet", 60, 58),
    ("Inception-BN", 60, 58),
)


def _edge_cloud(n: int, rng: np.random.Generator, size: float, load: float | None = None) -> PresetFiles:
    types = [f"w{k + 1}" for k in range(EDGE_WORKER_TYPES)]
    shares = np.array([c for *_, c in OPENB_NODE_SHAPES], dtype=float)
    servers: list[dict[str, Any]] = []
    for k in range(_scaled(100, size)):
        gpus, vcpus, _ = OPENB_NODE_SHAPES[rng.choice(len(OPENB_NODE_SHAPES), p=shares / shares.sum())]
        # Each pre-deployed unit worker (one per GPU) gets a random type; a job can only use
        # workers of the type it names (v_jsw), so per-type slot counts are capacities too.
        per_type = np.bincount(rng.integers(0, EDGE_WORKER_TYPES, size=gpus), minlength=EDGE_WORKER_TYPES)
        cap: dict[str, int] = {"gpu": gpus, "worker_slot": gpus, "ps_slot": max(1, vcpus // EDGE_VCPUS_PER_PS)}
        cap.update({f"worker_slot_{t}": int(c) for t, c in zip(types, per_type, strict=True) if c > 0})
        delay = int(rng.integers(1, 5))  # upload delay to an edge server: [1, 4] slots
        servers.append({"id": f"edge-{k:03d}", "site": "edge", "capacity": cap, "upload_delay": delay})
    cloud_delay = int(rng.integers(10, 16))  # to the cloud: [10, 15] slots
    servers.append({"id": "cloud", "site": "cloud", "unlimited": True, "capacity": {}, "upload_delay": cloud_delay})
    worker_types = []
    for t in types:
        gbps = round(rng.uniform(100, 5 * 1024) / 1000, 3)  # b_j in [100, 5*1024] Mbps per worker type
        demand = {"gpu": 1, "worker_slot": 1, f"worker_slot_{t}": 1}
        worker_types.append({"id": t, "demand": demand, "bandwidth_gbps": gbps})

    # Offered load (--load, default 1): the arrival rate relative to one job per slot on average.
    gaps = rng.exponential(EDGE_MEAN_GAP, size=n) / (1.0 if load is None else load)
    arrivals = np.floor(np.cumsum(gaps) - gaps[0]).astype(int)
    rows: list[dict[str, Any]] = []
    for i in range(n):
        model, chunks, minibatches = EDGE_MODELS[rng.integers(len(EDGE_MODELS))]
        wtype = types[rng.integers(EDGE_WORKER_TYPES)]
        row: dict[str, Any] = {"job_id": _job_id(i), "arrival": int(arrivals[i]), "arch": "ps", "model": model}
        row["epochs"] = int(rng.integers(20, 61))  # E_j in [20, 60]
        row["chunks"] = chunks
        row["minibatches"] = minibatches
        row[f"batch_time.{wtype}"] = round(rng.uniform(0.001, 0.05) * EDGE_SLOT_SECONDS, 3)  # m_j, hours
        row["ps_update"] = round(rng.uniform(0.010, 0.100), 4)  # G_j, ms
        row["gradient_mb"] = round(rng.uniform(30, 575), 1)  # q_j
        rows.append(row)

    resources = [
        {"name": "gpu", "unit": "GPU"},
        {"name": "worker_slot", "unit": "workers"},
        {"name": "ps_slot", "unit": "PSs"},
    ]
    resources += [{"name": f"worker_slot_{t}", "unit": "workers"} for t in types]
    cluster = {
        "slot_seconds": EDGE_SLOT_SECONDS,
        # The paper charges no restart; DESIGN section 9 charges every algorithm alike (Pollux's 30 s,
        # PAPER_RESTART_SECONDS). A_online makes up the work a restart costs its plan
        # (docs/algorithms-edge.md, "Restart cost").
        "restart_seconds": PAPER_RESTART_SECONDS,
        "resources": resources,
        "servers": servers,
        "worker_types": worker_types,
        "ps_types": [{"id": "ps", "demand": {"ps_slot": 1}}],
    }
    # Delta_js per job and server (Sec. V-A: [1, 4] slots to an edge server, [10, 15] to the cloud),
    # drawn last so that the cluster and the other job fields do not depend on them.
    edge_ids = [s["id"] for s in servers if s["site"] == "edge"]
    edge_delays = rng.integers(1, 5, size=(n, len(edge_ids)))
    cloud_delays = rng.integers(10, 16, size=n)
    for i, row in enumerate(rows):
        row.update({f"upload_delay.{sid}": int(d) for sid, d in zip(edge_ids, edge_delays[i], strict=True)})
        row["upload_delay.cloud"] = int(cloud_delays[i])
    # GPU requests drawn after everything else, so that the other fields stay those of earlier versions.
    sizes = np.array([g for g, _ in OPENB_GPU_REQUESTS])
    weights = np.array([c for _, c in OPENB_GPU_REQUESTS], dtype=float)
    for row, g in zip(rows, rng.choice(sizes, size=n, p=weights / weights.sum()), strict=True):
        row["gpu_request"] = int(g)
    columns = ["job_id", "arrival", "arch", "model", "epochs", "chunks", "minibatches"]
    columns += [f"batch_time.{t}" for t in types] + ["ps_update", "gradient_mb"]
    columns += [f"upload_delay.{sid}" for sid in edge_ids] + ["upload_delay.cloud", "gpu_request"]
    return PresetFiles(_json(cluster), _csv(columns, rows), "trace.csv")
