"""Baselines of the edge-cloud paper's Sec. V-A: Tiresias-L and BatchSche, on its edge-cloud model.

Both respect upload delays: a job's data must reach a server (r_j + Delta_js, the job's own delay for
that server if the trace gives one, else the server's) before it trains there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from scheduling.algorithms.baselines import WORKER_PARAMS, check_worker_range, make_tiresias
from scheduling.algorithms.edge.online import EDGE_CLOUD_MODEL, job_type
from scheduling.algorithms.priority import ListScheduler
from scheduling.capacity import Ledger
from scheduling.engine import Decision, View
from scheduling.model import Instance, Job, Server
from scheduling.registry import AlgorithmSpec, Param, register
from scheduling.speed import Allocation, chunk_slots, demand_of


class UploadGated:
    """Hides a job from the wrapped scheduler until its data can be on some server (r_j + min Delta_s)."""

    def __init__(self, instance: Instance, inner: ListScheduler) -> None:
        servers = instance.cluster.servers
        self.ready = {j.job_id: j.arrival + min(j.upload_delay_to(s) for s in servers) for j in instance.jobs}
        self.inner = inner

    def decide(self, view: View) -> Decision:
        jobs = tuple(jv for jv in view.jobs if self.ready[jv.job.job_id] <= view.t)
        decision = self.inner.decide(dataclasses.replace(view, jobs=jobs))
        later = [self.ready[jv.job.job_id] for jv in view.jobs if self.ready[jv.job.job_id] > view.t]
        wake = [w for w in (decision.wake_at, min(later, default=None)) if w is not None]
        return dataclasses.replace(decision, wake_at=min(wake, default=None))

    def report(self) -> Mapping[str, Any]:
        return {}


def make_tiresias_l(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> UploadGated:
    inner = make_tiresias(instance, params, rng)
    return UploadGated(instance, inner)


register(
    AlgorithmSpec(
        name="tiresias-l",
        summary="Tiresias-L: 2D-LAS on attained GPU-time, all-or-nothing, whole-job suspend/resume.",
        semantics=(
            "The `tiresias` baseline (queues by attained GPU-time, FIFO by first start within a queue, "
            "fixed worker count per job: the trace's `gpu_request` (the paper's \"worker requirement of each "
            'job ... according to the number of GPUs of the real trace", Sec. V-A; `workers_from=drawn` or '
            "no request: drawn in [workers_min, workers_max]), one PS, all-or-nothing "
            "placement, whole-job preemption; a resumed job may land on other servers, i.e. its data "
            "migrates for free) on the edge-cloud model, where a job becomes schedulable once its data "
            "can be on the nearest server, r_j + min_s Delta_js (optimistic for the baseline: it may then "
            "be placed on any server, including the cloud, without waiting for that server's own "
            "upload delay). Thresholds default to 100 and 1000 GPU-hours, for one-hour slots."
        ),
        reference="Gu et al., Tiresias (NSDI'19); edge-cloud paper (seeds/003) Sec. V-A baseline Tiresias-L",
        factory=make_tiresias_l,
        check=check_worker_range,
        params=(
            *WORKER_PARAMS,
            Param("queue_thresholds", str, "360000,3600000", "Queue limits in GPU-seconds, comma-separated."),
        ),
        needs=(EDGE_CLOUD_MODEL,),
    )
)


@dataclasses.dataclass
class _Planned:
    allocations: tuple[Allocation, ...]
    start: int  # max(batch start, r_j + upload delay of the servers used)


class BatchSche:
    """Batch by batch (the TCC paper's BatchSche as the edge-cloud paper describes it).

    When the previous batch has completed, every arrived unfinished job forms the next batch. Each
    job of the batch (in arrival order) gets the placement of least resource cost, cost = price x
    workers x (upload delay + run time) over {the cloud, the edge servers that fit it now}, and
    keeps it until it completes (no preemption). The next batch waits for the last job of this one.
    """

    def __init__(self, instance: Instance, workers_max: int, cloud_price: float) -> None:
        self.cluster = instance.cluster
        self.workers_max = workers_max
        self.cloud_price = cloud_price
        self.edge = [s for s in self.cluster.servers if s.site == "edge"]
        self.cloud = next(s for s in self.cluster.servers if s.site == "cloud" and s.unlimited)
        self.batch: dict[str, _Planned] = {}
        self.batches = 0

    def decide(self, view: View) -> Decision:
        t = view.t
        alive = {jv.job.job_id for jv in view.jobs}
        self.batch = {j: p for j, p in self.batch.items() if j in alive}
        if not self.batch and view.jobs:
            self.batches += 1
            ledger = view.ledger()
            for jv in view.jobs:
                self.batch[jv.job.job_id] = self._plan(ledger, jv.job, t)
        allocations = [a for p in self.batch.values() if p.start <= t for a in p.allocations]
        later = [p.start for p in self.batch.values() if p.start > t]
        return Decision(allocations=tuple(allocations), wake_at=min(later, default=None))

    def _plan(self, ledger: Ledger, job: Job, t: int) -> _Planned:
        wtype = job_type(self.cluster, job)
        workers = min(job.chunks, self.workers_max)
        ps_type = self.cluster.ps_types[0].id
        run_cloud = job.chunks * chunk_slots(self.cluster, job, wtype, True) / workers
        cloud_delay = job.upload_delay_to(self.cloud)
        cloud_cost = self.cloud_price * workers * (cloud_delay + run_cloud)
        edge = self._edge_fit(ledger, job, wtype, workers)
        if edge is not None:
            delay = max(job.upload_delay_to(self.cluster.server(a.server)) for a in edge)
            run_edge = job.chunks * chunk_slots(self.cluster, job, wtype, False) / workers
            if workers * (delay + run_edge) <= cloud_cost:
                self._book(ledger, job, edge)
                return _Planned(edge, max(t, job.arrival + delay))
        cloud = (
            Allocation(job.job_id, self.cloud.id, "worker", wtype, workers),
            Allocation(job.job_id, self.cloud.id, "ps", ps_type, 1),
        )
        return _Planned(cloud, max(t, job.arrival + cloud_delay))

    def _edge_fit(self, ledger: Ledger, job: Job, wtype: str, workers: int) -> tuple[Allocation, ...] | None:
        """All ``workers`` workers and one PS on edge servers (first fit), or None; nothing booked."""
        demand = demand_of(self.cluster, job, "worker", wtype) or {}
        ps_type = self.cluster.ps_types[0]
        parts: list[Allocation] = []
        left = workers
        for s in self.edge:
            k = min(left, ledger.max_count(s.id, "worker", demand))
            if k > 0:
                parts.append(Allocation(job.job_id, s.id, "worker", wtype, k))
                left -= k
            if left == 0:
                break
        ps_server: Server | None = next((s for s in self.edge if ledger.fits(s.id, "ps", ps_type.demand)), None)
        if left > 0 or ps_server is None:
            return None
        return (*parts, Allocation(job.job_id, ps_server.id, "ps", ps_type.id, 1))

    def _book(self, ledger: Ledger, job: Job, allocations: tuple[Allocation, ...]) -> None:
        for a in allocations:
            ledger.take(a.server, a.role, demand_of(self.cluster, job, a.role, a.type) or {}, a.count)

    def report(self) -> Mapping[str, Any]:
        return {"batchsche": {"batches": self.batches}}


def make_batchsche(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> BatchSche:
    return BatchSche(instance, params["workers_max"], params["cloud_price"])


register(
    AlgorithmSpec(
        name="batchsche",
        summary="BatchSche: batches of waiting jobs, each placed at least resource cost (edge or cloud).",
        semantics=(
            "When no job of the current batch is left, every arrived unfinished job forms the next batch. "
            "Each job of the batch, in arrival order, gets min(D_j, workers_max) workers of its type and "
            "one PS, either all on the cloud or all on edge servers (first fit, only if they fit now), "
            "whichever costs less: price x workers x (upload delay + run time), with edge price 1 and "
            "cloud price `cloud_price` (the cloud is cheap, as the paper notes). It starts once its data "
            "is uploaded (r_j + the largest upload delay of its servers) and keeps its placement until it "
            "completes (no preemption). A simplification of the TCC paper's cost-minimising batch "
            "schedule: the worker count is fixed instead of optimised."
        ),
        reference="Edge-cloud paper (seeds/003) Sec. V-A baseline BatchSche ([11], Zhou et al.)",
        factory=make_batchsche,
        params=(
            Param("workers_max", int, 30, "Most workers per job (capped at D_j).", min=1, max=1000),
            Param("cloud_price", float, 0.5, "Price of a cloud worker-slot relative to an edge one.", min=0.0),
        ),
        needs=(EDGE_CLOUD_MODEL,),
    )
)
