"""Baselines of the edge-cloud paper's Sec. V-A: Tiresias-L and BatchSche, on its edge-cloud model.

Both respect upload delays: a job's data must reach a server (r_j + Delta_js, the job's own delay for
that server if the trace gives one, else the server's) before it trains there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from scheduling.algorithms.baselines import fixed_configs, make_tiresias
from scheduling.algorithms.configs import FixedConfigs
from scheduling.algorithms.edge.online import job_type
from scheduling.capacity import Ledger
from scheduling.engine import Algorithm, Decision, View
from scheduling.model import Instance, Job, Server
from scheduling.speed import Allocation, chunk_slots, demand_of


def make_tiresias_l(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> Algorithm:
    """The tiresias key walk; a job is hidden from it until its data can be on some server, r_j +
    min_s Delta_js (the walk then wakes the run at that slot)."""
    servers = instance.cluster.servers
    ready = {j.job_id: j.arrival + min(j.upload_delay_to(s) for s in servers) for j in instance.jobs}
    return make_tiresias(instance, params, rng, ready)


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

    def __init__(self, instance: Instance, configs: FixedConfigs, cloud_price: float) -> None:
        self.cluster = instance.cluster
        self.configs = configs  # the worker count of each job (worker_rule, as every fixed-size baseline)
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
        workers = self.configs[job.job_id].workers
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
    return BatchSche(instance, fixed_configs(instance, params, rng), params["cloud_price"])
