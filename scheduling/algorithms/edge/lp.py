"""Competitive-ratio check of the edge-cloud paper (Sec. V-C, Figs. 12-13): speed augmentation and an
LP lower bound of ILP (4).

* ``speed_augmented(instance, eps)``: the instance on (1 + eps)-speed servers (Definition 1): m_j, G_j
  and q_j are divided by (1 + eps), so n_j of eq. (1) is multiplied by (1 + eps). The engine owns
  speeds, so augmentation is a transformation of the instance, not an algorithm parameter.
* ``lp_lower_bound(instance)``: the optimum of the LP relaxation of ILP (4) simplified, as the paper
  does, by zeta_j = 1 for every job (no gradient traffic anywhere, so its optimum is smaller). Chunks
  of one job are symmetric in the relaxation, so the variables are aggregated per job:
  Y_jm(t) = sum_d y_jdm(t) for each machine m (the workers of one type on one edge server, or the
  cloud). By Lemma 1 the value is at most the optimal total JCT of MINLP (2).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from scheduling.algorithms.edge.online import job_type
from scheduling.model import Instance, Job, Server, frozen_amounts
from scheduling.speed import chunk_slots


def speed_augmented(instance: Instance, eps: float) -> Instance:
    """The instance with every job's n_j multiplied by (1 + eps) (Definition 1)."""
    f = 1.0 + eps

    def scale(job: Job) -> Job:
        return dataclasses.replace(
            job,
            batch_time=frozen_amounts({k: v / f for k, v in job.batch_time.items()}),
            ps_update=frozen_amounts({k: v / f for k, v in job.ps_update.items()}),
            gradient_mb=job.gradient_mb / f,
        )

    return Instance(instance.cluster, tuple(scale(j) for j in instance.jobs))


def lp_lower_bound(instance: Instance) -> float:
    """min sum_j sum_d f_jd(y) (eq. (3)-(4)) over the LP relaxation with zeta_j = 1 (HiGHS).

    Slot t counts as finishing at t + 1, so a chunk trained in slot t adds n/(E D B) (t + 1 - r_j).
    Job j only needs slots t < r_j + max_s Delta_js + P_j (P_j = whole slots per chunk): by then the
    cloud alone, with its D_j parallel workers, could have finished it, so later slots never pay.
    """
    cluster = instance.cluster
    machines: list[tuple[Server, str, int]] = []  # (server, worker type, workers)
    for s in cluster.servers:
        for wt in cluster.worker_types:
            if s.unlimited:
                machines.append((s, wt.id, -1))
            elif s.site == "edge":
                n = int(min((s.capacity.get(r, 0.0) for r, a in wt.demand.items() if a > 0), default=0))
                if n > 0:
                    machines.append((s, wt.id, n))
    cost: list[float] = []
    cap_keys: dict[tuple[int, int], int] = {}  # (machine, t) -> row of (4b)
    par_keys: dict[tuple[int, int], int] = {}  # (job, t) -> row of (4e)
    rows_a: list[tuple[int, int]] = []
    rows_b: list[tuple[int, int]] = []
    rows_e: list[tuple[int, int]] = []
    need = []
    for ji, job in enumerate(instance.jobs):
        wtype = job_type(cluster, job)
        slots = chunk_slots(cluster, job, wtype, colocated=True)
        need.append(job.chunks * slots)
        end = job.arrival + max(job.upload_delay_to(m[0]) for m in machines) + slots
        for mi, (server, mtype, count) in enumerate(machines):
            if mtype != wtype:
                continue
            delay = job.upload_delay_to(server)
            for t in range(job.arrival + delay, end):
                col = len(cost)
                cost.append((t + 1 - job.arrival) / (job.chunks * slots))
                rows_a.append((ji, col))  # (4a) summed over d: -sum Y <= -D_j P_j
                if count > 0:
                    rows_b.append((cap_keys.setdefault((mi, t), len(cap_keys)), col))
                rows_e.append((par_keys.setdefault((ji, t), len(par_keys)), col))
    n_jobs, n_cap = len(instance.jobs), len(cap_keys)
    entries = [(r, c) for r, c in rows_a]
    entries += [(n_jobs + r, c) for r, c in rows_b]
    entries += [(n_jobs + n_cap + r, c) for r, c in rows_e]
    data = [-1.0] * len(rows_a) + [1.0] * (len(rows_b) + len(rows_e))
    r_idx = [r for r, _c in entries]
    c_idx = [c for _r, c in entries]
    a_ub = sparse.csr_matrix((data, (r_idx, c_idx)), shape=(n_jobs + n_cap + len(par_keys), len(cost)))
    counts = {i: machines[mi][2] for (mi, _t), i in cap_keys.items()}
    b_ub = np.concatenate(
        [
            -np.array(need, dtype=float),
            np.array([counts[i] for i in range(n_cap)], dtype=float),
            np.array([instance.jobs[ji].chunks for (ji, _t) in par_keys], dtype=float),
        ]
    )
    res = linprog(np.array(cost), A_ub=a_ub, b_ub=b_ub, bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"LP lower bound failed: {res.message}")
    return float(res.fun)


def fractional_flow_time(instance: Instance, doc: Mapping[str, Any]) -> float:
    """The ILP (4) objective sum_j sum_d f_jd(y) of a result: every worker-slot of job j adds
    (t + 1 - r_j) / (D_j P_j), with P_j the whole slots per chunk of the job's actual zeta_j."""
    cluster = instance.cluster
    jobs = {j.job_id: j for j in instance.jobs}
    sites = {s.id: s.site for s in cluster.servers}
    by_job: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for p in doc["placements"]:
        by_job[p["job_id"]].append(p)
    total = 0.0
    for job_id, placements in by_job.items():
        job = jobs[job_id]
        zeta = all(sites[p["server"]] == "cloud" for p in placements)
        slots = chunk_slots(cluster, job, job_type(cluster, job), colocated=zeta)
        for p in placements:
            if p["role"] != "worker":
                continue
            a, b = p["start"] + 1 - job.arrival, p["end"] - job.arrival  # sum of (t + 1 - r) over the segment
            total += p["count"] * (a + b) * (b - a + 1) / 2 / (job.chunks * slots)
    return total
