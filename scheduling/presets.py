"""Presets: a cluster and a seeded trace per paper's evaluation setting (docs/formats.md, "Presets").

Every builder draws from one ``numpy.random.default_rng(seed)`` in a fixed order and formats
numbers explicitly, so the same (preset, jobs, seed, size) gives byte-identical files. The ranges
come from each paper's evaluation section (cited per builder); where a paper leaves something open,
the choice is made here once, commented, and listed in docs/formats.md.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scheduling.errors import InputError


@dataclass(frozen=True)
class PresetFiles:
    cluster: str  # cluster spec, JSON text
    trace: str  # trace, CSV or JSON text
    trace_name: str  # "trace.csv" or "trace.json"


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
        "capacity 0.2-0.5 of the jobs' ideal demand.",
        40,
    ),
    "zhou-allreduce": Preset(
        "zhou-allreduce",
        "Zhou et al. (TCC'23) Sec. 7, Ring-AllReduce architecture: as zhou-ps without parameter servers.",
        40,
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


def build(name: str, jobs: int | None = None, seed: int = 0, size: float = 1.0) -> PresetFiles:
    """The cluster spec and trace of preset ``name``.

    ``jobs`` overrides the preset's default job count; ``size`` (0 < size <= 1) scales the cluster
    down, and the default job count with it, for quick runs.
    """
    if name not in PRESETS:
        raise InputError(f"unknown preset {name!r} (known: {', '.join(sorted(PRESETS))})", field="preset")
    if jobs is not None and jobs < 1:
        raise InputError(f"{jobs} must be at least 1", field="jobs")
    if not 0 < size <= 1:
        raise InputError(f"{size:g} must be in (0, 1]", field="size")
    n = jobs if jobs is not None else max(1, round(PRESETS[name].default_jobs * size))
    return _BUILDERS[name](n, np.random.default_rng(seed), size)


def generate(name: str, jobs: int | None, seed: int, size: float, out: Path) -> list[Path]:
    files = build(name, jobs, seed, size)
    out.mkdir(parents=True, exist_ok=True)
    cluster, trace = out / "cluster.json", out / files.trace_name
    cluster.write_text(files.cluster, encoding="utf-8")
    trace.write_text(files.trace, encoding="utf-8")
    # A trace of the other format left by an earlier run would not match this cluster.
    stale = out / ("trace.json" if files.trace_name == "trace.csv" else "trace.csv")
    stale.unlink(missing_ok=True)
    return [cluster, trace]


# ---------------------------------------------------------------------------------------------
# Formatting helpers: explicit number formats keep the output byte-stable across platforms.


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


# ---------------------------------------------------------------------------------------------
# demo


def _demo(n: int, rng: np.random.Generator, size: float) -> PresetFiles:
    cluster = {
        "slot_seconds": 60,
        "resources": [{"name": "gpu", "unit": "GPU"}, {"name": "cpu", "unit": "vCPU"}, {"name": "bw", "unit": "Gbps"}],
        "servers": [{"id": "node", "count": max(1, round(2 * size)), "capacity": {"gpu": 8, "cpu": 32, "bw": 40}}],
        "worker_types": [{"id": "w1", "demand": {"gpu": 1, "cpu": 2, "bw": 1}}],
        "ps_types": [{"id": "p1", "demand": {"cpu": 2, "bw": 5}}],
    }
    lines = ["job_id,arrival,epochs,chunks,minibatches,batch_time,ps_update,gradient_mb,weight"]
    t = 0
    for i in range(n):
        t += int(rng.integers(0, 3))
        lines.append(
            f"j{i},{t},{rng.integers(2, 11)},{rng.integers(2, 9)},{rng.integers(5, 20)},"
            f"{rng.uniform(3, 12):.3f},{rng.uniform(0.5, 2):.3f},{rng.uniform(30, 300):.1f},{rng.integers(1, 10)}"
        )
    return PresetFiles(json.dumps(cluster, indent=1), "\n".join(lines) + "\n", "trace.csv")


# ---------------------------------------------------------------------------------------------
# Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed ML Jobs", TCC 2023, Sec. 7


ZHOU_SLOT_SECONDS = 3600  # "Each time slot is one hour long."
ZHOU_T = 150  # "T in [100, 300] time slots (default value: 150)": the arrival window here
ZHOU_SERVERS = 150  # "The default number of servers is 150."
ZHOU_IDEAL_WORKERS = 15  # midpoint of the baselines' fixed worker count [1, 30], capped at D_j

# Amazon EC2 GPU instances of the P3, P2 and G3 families: (name, GPUs, vCPUs, network Gbps).
# "Up to 10 Gigabit" is taken as 10; the p2.xlarge's "High" network as 1 Gbps.
EC2_GPU_SERVERS: tuple[tuple[str, int, int, float], ...] = (
    ("p3.2xlarge", 1, 8, 10),
    ("p3.8xlarge", 4, 32, 10),
    ("p3.16xlarge", 8, 64, 25),
    ("p2.xlarge", 1, 4, 1),
    ("p2.8xlarge", 8, 32, 10),
    ("p2.16xlarge", 16, 64, 25),
    ("g3.4xlarge", 1, 16, 10),
    ("g3.8xlarge", 2, 32, 10),
    ("g3.16xlarge", 4, 64, 25),
)

# 8 worker types within the paper's ranges (1-4 GPUs, 1-16 vCPUs, 100 Mbps-5 Gbps):
# (id, GPUs, vCPUs, Gbps, relative speed of one GPU: K80 0.5, M60 0.6, V100 1.0).
ZHOU_WORKER_TYPES: tuple[tuple[str, int, int, float, float], ...] = (
    ("k80-1", 1, 1, 0.1, 0.5),
    ("m60-1", 1, 4, 0.5, 0.6),
    ("v100-1", 1, 8, 1.0, 1.0),
    ("k80-2", 2, 4, 1.0, 0.5),
    ("m60-2", 2, 8, 2.0, 0.6),
    ("v100-2", 2, 8, 2.5, 1.0),
    ("k80-4", 4, 16, 2.5, 0.5),
    ("v100-4", 4, 16, 5.0, 1.0),
)

# 10 PS types within the paper's ranges (1-16 vCPUs, 5-20 Gbps): (id, vCPUs, Gbps).
ZHOU_PS_TYPES: tuple[tuple[str, int, float], ...] = (
    ("ps-1", 1, 5),
    ("ps-2", 2, 5),
    ("ps-3", 2, 8),
    ("ps-4", 4, 8),
    ("ps-5", 4, 10),
    ("ps-6", 8, 10),
    ("ps-7", 8, 15),
    ("ps-8", 12, 15),
    ("ps-9", 12, 20),
    ("ps-10", 16, 20),
)


def _worker_speed(gpus: int, gpu_speed: float) -> float:
    # Sub-linear in the GPU count: one worker's GPUs share one mini-batch.
    return gpu_speed * math.pow(gpus, 0.8)


def _zhou(n: int, rng: np.random.Generator, arch: str, size: float) -> PresetFiles:
    speeds = np.array([_worker_speed(g, s) for _, g, _, _, s in ZHOU_WORKER_TYPES])
    w_ratio = speeds.max() / speeds.min()
    ps_speeds = np.sqrt([c for _, c, _ in ZHOU_PS_TYPES])  # update time ~ 1/sqrt(vCPUs)
    p_ratio = ps_speeds.max() / ps_speeds.min()
    rows: list[dict[str, Any]] = []
    arrivals = np.sort(rng.integers(0, ZHOU_T, size=n))
    for i in range(n):
        row: dict[str, Any] = {"job_id": _job_id(i), "arrival": int(arrivals[i]), "arch": arch}
        row["weight"] = int(rng.integers(200, 5001))
        row["epochs"] = int(rng.integers(50, 101))
        row["chunks"] = int(rng.integers(5, 51))
        row["minibatches"] = int(rng.integers(10, 51))
        # v_jm in [0.001, 0.05] slots on every type: the fastest type's time is drawn so that the
        # slowest type (speed ratio w_ratio) stays within the range.
        v_fast = rng.uniform(0.001, 0.05 / w_ratio)
        for (tid, *_), s in zip(ZHOU_WORKER_TYPES, speeds, strict=True):
            row[f"batch_time.{tid}"] = round(v_fast * speeds.max() / s * ZHOU_SLOT_SECONDS, 3)
        if arch == "ps":
            u_fast = rng.uniform(0.010, 0.100 / p_ratio)  # U_j^p in [10, 100] ms on every PS type
            for (pid, *_), s in zip(ZHOU_PS_TYPES, ps_speeds, strict=True):
                row[f"ps_update.{pid}"] = round(u_fast * ps_speeds.max() / s, 5)
        else:
            row["ps_update"] = round(rng.uniform(0.010, 0.100), 5)  # U_j of eq. (14)
        row["gradient_mb"] = round(rng.uniform(30, 575), 1)
        rows.append(row)

    # Servers: "The default number of servers is 150" (scaled by ``size``), shapes drawn from the
    # EC2 P3/P2/G3 families; the first is the largest shape, so that every worker and PS type fits
    # somewhere. Capacity "approximately [0.2, 0.5] of the overall job resource demand" (the sum of
    # the jobs' ideal per-slot demands: fastest worker type, min(D_j, 15) workers) then follows
    # from the job count: the default 40 jobs (x size) give a GPU ratio of about 0.3-0.4
    # (tests/test_presets.py); other job counts move it, as the paper's Figs. 2/5 vary the jobs
    # at 150 servers.
    servers: list[dict[str, Any]] = []
    for i in range(_scaled(ZHOU_SERVERS, size)):
        name, g, c, bw = EC2_GPU_SERVERS[5] if i == 0 else EC2_GPU_SERVERS[rng.integers(len(EC2_GPU_SERVERS))]
        servers.append({"id": f"{name}-{i:03d}", "capacity": {"gpu": g, "cpu": c, "bw": bw}})

    cluster: dict[str, Any] = {
        "slot_seconds": ZHOU_SLOT_SECONDS,
        "resources": [{"name": "gpu", "unit": "GPU"}, {"name": "cpu", "unit": "vCPU"}, {"name": "bw", "unit": "Gbps"}],
        "servers": servers,
        "worker_types": [
            {"id": tid, "demand": {"gpu": g, "cpu": c, "bw": bw}} for tid, g, c, bw, _ in ZHOU_WORKER_TYPES
        ],
        "ps_types": [{"id": pid, "demand": {"cpu": c, "bw": bw}} for pid, c, bw in ZHOU_PS_TYPES]
        if arch == "ps"
        else [],
    }
    if arch == "ps":
        # Constraint (2i) of the paper's model binds every algorithm, not only zhou's own (13d): a
        # job's PSs on a server carry the bandwidth of its workers on the other servers.
        cluster["network"] = {"ps_bandwidth_reservation": 1}
    columns = ["job_id", "arrival", "arch", "weight", "epochs", "chunks", "minibatches"]
    columns += [f"batch_time.{t[0]}" for t in ZHOU_WORKER_TYPES]
    columns += [f"ps_update.{p[0]}" for p in ZHOU_PS_TYPES] if arch == "ps" else ["ps_update"]
    columns += ["gradient_mb"]
    return PresetFiles(_json(cluster), _csv(columns, rows), "trace.csv")


def _zhou_ps(n: int, rng: np.random.Generator, size: float) -> PresetFiles:
    return _zhou(n, rng, "ps", size)


def _zhou_allreduce(n: int, rng: np.random.Generator, size: float) -> PresetFiles:
    return _zhou(n, rng, "allreduce", size)


# ---------------------------------------------------------------------------------------------
# OASiS (Bao et al., INFOCOM 2018), Sec. V-A


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


def _oasis(n: int, rng: np.random.Generator, size: float) -> PresetFiles:
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


# ---------------------------------------------------------------------------------------------
# Online preemptive scheduling in edge-cloud networks (PS architecture), Sec. V-A


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


def _edge_cloud(n: int, rng: np.random.Generator, size: float) -> PresetFiles:
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

    gaps = rng.exponential(EDGE_MEAN_GAP, size=n)
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
    columns = ["job_id", "arrival", "arch", "model", "epochs", "chunks", "minibatches"]
    columns += [f"batch_time.{t}" for t in types] + ["ps_update", "gradient_mb"]
    columns += [f"upload_delay.{sid}" for sid in edge_ids] + ["upload_delay.cloud"]
    return PresetFiles(_json(cluster), _csv(columns, rows), "trace.csv")


# ---------------------------------------------------------------------------------------------
# A-SRPT (Luo et al., prediction-assisted online DDL scheduling), Sec. V-B


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


def _asrpt(n: int, rng: np.random.Generator, size: float) -> PresetFiles:
    n_servers = _scaled(250, size)
    total_gpus = n_servers * ASRPT_GPUS_PER_SERVER
    shares = [(g, p) for g, p in ASRPT_GPU_SHARES if g <= total_gpus]
    weights = np.array([p for _, p in shares])

    # Job groups (recurring jobs): a GPU demand, a model and configuration, a user, a typical length.
    n_groups = max(1, math.ceil(n / ASRPT_JOBS_PER_GROUP))
    n_users = max(1, math.ceil(n_groups / 3))
    groups: list[dict[str, Any]] = []
    for k in range(n_groups):
        gpus = shares[rng.choice(len(shares), p=weights / weights.sum())][0]
        options = [(m, c) for m in ASRPT_MODELS for c in m.configs if c[0] * c[1] == gpus]
        model, (n_stages, replicas) = options[rng.integers(len(options))]
        stages = pipeline_stages(model, n_stages, replicas)
        alpha = min_iteration_time(stages, ASRPT_GPUS_PER_SERVER, ASRPT_NIC_GBPS, ASRPT_NVLINK_GBPS)
        # Typical run time of the group: log-normal, median 30 min, 1 minute to 7 days.
        seconds = float(np.clip(rng.lognormal(math.log(1800), 1.5), 60, 7 * 86400))
        user = f"u{int(rng.integers(n_users)):03d}"
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
    window = gpu_seconds / (ASRPT_LOAD * total_gpus)
    arrivals = np.sort(rng.uniform(0.0, window, size=n))
    for job, at in zip(jobs, arrivals, strict=True):
        job["arrival"] = int(at // ASRPT_SLOT_SECONDS)

    cluster = {
        "slot_seconds": ASRPT_SLOT_SECONDS,
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


Builder = Callable[[int, np.random.Generator, float], PresetFiles]

_BUILDERS: dict[str, Builder] = {
    "demo": _demo,
    "zhou-ps": _zhou_ps,
    "zhou-allreduce": _zhou_allreduce,
    "oasis": _oasis,
    "edge-cloud": _edge_cloud,
    "asrpt": _asrpt,
}
