"""Preset ``oasis``: OASiS (Bao et al., INFOCOM 2018), Sec. V-A."""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduling.presets._common import PAPER_RESTART_SECONDS, PresetFiles, _csv, _job_id, _json, _scaled, no_load_knob

OASIS_SLOT_SECONDS = 3600  # the paper gives none for its simulations; one hour as in Zhou et al.
OASIS_T = 300  # "T = 100-300 time slots"; Figs. 3 and 6 use T = 300
OASIS_SERVER_STORAGE_GB = 200  # not given; C4/P2/G3 instances use EBS volumes (never binding here)

# Worker servers: EC2 C4 (vCPUs, GB). C4 instances have no GPUs, but the paper's workers demand
# 0-4 GPUs, so each worker server also gets GPUs (4 or 8 by size), else no GPU worker could run.
OASIS_WORKER_SERVERS: tuple[tuple[str, int, int, int], ...] = (
    ("c4.4xlarge", 4, 16, 30),  # (name, GPUs added, vCPUs, GB)
    ("c4.8xlarge", 8, 36, 60),
)
# PS servers: EC2 P2 and G3 (vCPUs, GB). Their GPUs are left out: PSs demand none, and GPUs no
# worker can reach would only dilute the reported GPU utilisation.
OASIS_PS_SERVERS: tuple[tuple[str, int, int], ...] = (
    ("p2.xlarge", 4, 61),
    ("p2.8xlarge", 32, 488),
    ("p2.16xlarge", 64, 732),
    ("g3.4xlarge", 16, 122),
    ("g3.8xlarge", 32, 244),
    ("g3.16xlarge", 64, 488),
)


def google_like_arrivals(rng: np.random.Generator, n: int, window: int) -> np.ndarray:
    """``n`` arrival slots in [0, window) shaped like job submissions in Google's cluster data.

    Google's 2011 trace shows a daily cycle and bursty hours (Reiss et al., SoCC'12). The rate of
    slot t (one hour) is (1 + 0.5 sin(2 pi t / 24)) x a Gamma(2, 1/2) burst factor drawn per slot
    (peak/trough 3:1, squared coefficient of variation 1/2 from hour to hour); the n arrivals are
    drawn independently with those weights.
    """
    t = np.arange(window)
    rate = (1.0 + 0.5 * np.sin(2 * np.pi * t / 24)) * rng.gamma(2.0, 0.5, size=window)
    return np.sort(rng.choice(window, size=n, p=rate / rate.sum()))


def _oasis(n: int, rng: np.random.Generator, size: float, load: float | None = None) -> PresetFiles:
    no_load_knob(
        "oasis", load, "its offered load is the number of jobs in the fixed T = 300 slots (--jobs), as in Fig. 3"
    )
    servers: list[dict[str, Any]] = []
    for k in range(_scaled(50, size)):  # H = 50 worker servers
        name, g, c, mem = OASIS_WORKER_SERVERS[-1] if k == 0 else OASIS_WORKER_SERVERS[rng.integers(2)]
        cap = {"gpu": g, "cpu": c, "mem": mem, "storage": OASIS_SERVER_STORAGE_GB, "bw": int(rng.integers(20, 51))}
        servers.append({"id": f"worker-{k:03d}-{name}", "pool": "worker", "capacity": cap})
    for k in range(_scaled(50, size)):  # K = 50 PS servers
        name, c, mem = OASIS_PS_SERVERS[2] if k == 0 else OASIS_PS_SERVERS[rng.integers(len(OASIS_PS_SERVERS))]
        cap = {"cpu": c, "mem": mem, "storage": OASIS_SERVER_STORAGE_GB, "bw": int(rng.integers(20, 51))}
        servers.append({"id": f"ps-{k:03d}-{name}", "pool": "ps", "capacity": cap})

    arrivals = google_like_arrivals(rng, n, OASIS_T)
    classes = rng.choice(3, size=n, p=[0.10, 0.55, 0.35])  # time-insensitive, -sensitive, -critical
    rows: list[dict[str, Any]] = []
    for i in range(n):
        row: dict[str, Any] = {"job_id": _job_id(i), "arrival": int(arrivals[i]), "arch": "ps"}
        # E_i, N_i, M_i: work = E_i * N_i mini-batches with at most M_i workers. (Sec. III reads
        # N_i chunks of M_i mini-batches, work E_i N_i M_i; with these ranges the median job would
        # need ~340 slots on all its workers, beyond T and the 1-15-slot targets: docs/formats.md.)
        epochs, n_i, m_i = int(rng.integers(50, 201)), int(rng.integers(5, 101)), int(rng.integers(10, 101))
        row["epochs"] = epochs
        row["chunks"] = m_i  # the worker limit
        row["work"] = epochs * n_i
        row["batch_time"] = round(rng.uniform(0.001, 0.1) * OASIS_SLOT_SECONDS, 3)  # tau_i, slots -> s
        row["gradient_mb"] = round(rng.uniform(30, 575), 1)  # e_i
        row["worker_demand.gpu"] = int(rng.integers(0, 5))
        row["worker_demand.cpu"] = int(rng.integers(1, 11))
        row["worker_demand.mem"] = int(rng.integers(2, 33))
        row["worker_demand.storage"] = int(rng.integers(5, 11))
        row["worker_demand.bw"] = round(rng.uniform(0.1, 5.0), 1)  # b_i
        row["ps_demand.cpu"] = int(rng.integers(1, 11))
        row["ps_demand.mem"] = int(rng.integers(2, 33))
        row["ps_demand.storage"] = int(rng.integers(5, 11))
        row["ps_demand.bw"] = round(rng.uniform(5.0, 20.0), 1)  # B_i
        row["priority"] = round(rng.uniform(1, 100), 2)  # gamma_1
        cls = classes[i]
        row["decay"] = 0 if cls == 0 else round(rng.uniform(0.01, 1.0) if cls == 1 else rng.uniform(4.0, 6.0), 3)
        row["target"] = round(rng.uniform(1, 15), 2)  # gamma_3, slots after arrival
        rows.append(row)

    cluster = {
        "slot_seconds": OASIS_SLOT_SECONDS,
        "horizon": OASIS_T,
        # Pollux's simulator's 30 s per re-allocation, as the Zhou and A-SRPT presets (_common.py);
        # OASiS plans each job's workload to cover its own plan's restarts (docs/algorithms-oasis.md).
        "restart_seconds": PAPER_RESTART_SECONDS,
        "resources": [
            {"name": "gpu", "unit": "GPU"},
            {"name": "cpu", "unit": "vCPU"},
            {"name": "mem", "unit": "GB"},
            {"name": "storage", "unit": "GB"},
            {"name": "bw", "unit": "Gbps"},
        ],
        "servers": servers,
    }
    columns = ["job_id", "arrival", "arch", "epochs", "chunks", "work", "batch_time", "gradient_mb"]
    columns += [f"worker_demand.{r}" for r in ("gpu", "cpu", "mem", "storage", "bw")]
    columns += [f"ps_demand.{r}" for r in ("cpu", "mem", "storage", "bw")]
    columns += ["priority", "decay", "target"]
    return PresetFiles(_json(cluster), _csv(columns, rows), "trace.csv")
