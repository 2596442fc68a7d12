"""Feasibility on load: a job that fits nowhere on the empty cluster is bad input, not a scheduling
outcome (docs/formats.md, "Checks on load")."""

from __future__ import annotations

import math
from collections.abc import Mapping

from scheduling.errors import InputError
from scheduling.model import Cluster, Job, Server

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


class Feasibility:
    """Answers "does this demand fit the empty cluster?" once per distinct demand shape.

    Servers are grouped by shape (capacity, pool, unlimited): a node list of 1,213 servers has a
    handful of shapes, and a trace of 82,000 jobs a handful of distinct demands, so checking a
    whole trace costs O(jobs + servers) instead of O(jobs x servers).
    """

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        shapes: dict[tuple[Any, ...], list[Server]] = {}
        for s in cluster.servers:
            shapes.setdefault((tuple(sorted(s.capacity.items())), s.pool, s.unlimited), []).append(s)
        # (one server of the shape, how many servers have it)
        self._shapes: list[tuple[Server, int]] = [(group[0], len(group)) for group in shapes.values()]
        self._instances: dict[tuple[str, tuple[tuple[str, float], ...]], float] = {}
        self._fitting: dict[tuple[str, tuple[tuple[str, float], ...]], tuple[int, int]] = {}

    def instances(self, role: str, demand: Mapping[str, float]) -> float:
        """How many instances of ``demand`` the whole (empty) cluster holds."""
        key = (role, tuple(sorted(demand.items())))
        total = self._instances.get(key)
        if total is None:
            total = 0.0
            for s, n in self._shapes:
                if not s.accepts(role):
                    continue
                if s.unlimited:
                    total = math.inf
                    break
                per = min(
                    (math.floor(s.capacity.get(r, 0.0) / a + 1e-9) for r, a in demand.items() if a > 0),
                    default=math.inf,
                )
                total += n * per
            self._instances[key] = total
        return total

    def fitting(self, role: str, demand: Mapping[str, float]) -> tuple[int, int]:
        """(servers one instance of ``demand`` fits on, index of the first such shape or -1)."""
        key = (role, tuple(sorted(demand.items())))
        if key not in self._fitting:
            count, first = 0, -1
            for i, (s, n) in enumerate(self._shapes):
                if s.accepts(role) and _fits(s, demand):
                    count += n
                    first = i if first < 0 else first
            self._fitting[key] = (count, first)
        return self._fitting[key]

    def fits_somewhere(self, role: str, demand: Mapping[str, float]) -> bool:
        return self.fitting(role, demand)[0] > 0

    def pair_fits(self, worker: Mapping[str, float], ps: Mapping[str, float]) -> bool:
        """One worker and one PS fit at once: on two servers, or together on one."""
        nw, w_shape = self.fitting("worker", worker)
        np_, p_shape = self.fitting("ps", ps)
        if not nw or not np_:
            return False
        if nw > 1 or np_ > 1 or w_shape != p_shape:
            return True  # two different servers
        both = {r: worker.get(r, 0.0) + ps.get(r, 0.0) for r in set(worker) | set(ps)}
        return _fits(self._shapes[w_shape][0], both)


def check_job_fits(job: Job, cluster: Cluster, feasibility: Feasibility | None = None) -> None:
    """Raise InputError if no allocation of the cluster can ever run ``job``.

    Pass one ``Feasibility`` of ``cluster`` when checking many jobs: its answers are cached.
    """
    fit = feasibility if feasibility is not None and feasibility.cluster is cluster else Feasibility(cluster)
    if job.rigid:
        assert job.gpus is not None
        total = fit.instances("worker", job.worker_demand or {"gpu": 1.0})
        if total < job.gpus:
            raise InputError(f"needs {job.gpus} GPUs but the cluster has {total:g}", job=job.job_id, field="gpus")
        return
    from scheduling.speed import demand_of, needs_ps  # local: speed imports model only

    worker_types = usable_worker_types(job, cluster)
    demands: list[tuple[str, Mapping[str, float]]] = []
    if job.worker_demand is not None:
        demands = [("job", job.worker_demand)]
    else:
        if not worker_types:
            raise InputError("the cluster defines no worker type this job can use", job=job.job_id, field="batch_time")
        demands = [(t, demand_of(cluster, job, "worker", t) or {}) for t in worker_types]
    if not any(fit.fits_somewhere("worker", d) for _, d in demands):
        raise InputError("no worker of this job fits on any server", job=job.job_id, field="worker_demand")
    if job.gpus is not None:
        most = max(fit.instances("worker", d) for _, d in demands)
        if most < job.gpus:
            raise InputError(
                f"needs {job.gpus} workers at once but the cluster holds at most {most:g}", job=job.job_id, field="gpus"
            )
    if needs_ps(cluster, job):
        ps_demands = [job.ps_demand] if job.ps_demand is not None else [p.demand for p in cluster.ps_types]
        if not any(fit.fits_somewhere("ps", d) for d in ps_demands):
            raise InputError("no parameter server of this job fits on any server", job=job.job_id, field="ps_demand")
        if not any(fit.pair_fits(w, p) for _, w in demands for p in ps_demands):
            raise InputError(
                "no server pair holds one worker and one parameter server of this job",
                job=job.job_id,
                field="ps_demand",
            )


def usable_worker_types(job: Job, cluster: Cluster) -> list[str]:
    """Worker types ``job`` can train on: those its ``batch_time`` names, or all when it names none."""
    if "*" in job.batch_time or not job.batch_time:
        return [t.id for t in cluster.worker_types]
    return [t for t in job.batch_time if cluster.worker_type(t) is not None]


def _fits(server: Server, demand: Mapping[str, float]) -> bool:
    if server.unlimited:
        return True
    return all(server.capacity.get(r, 0.0) + 1e-9 >= a for r, a in demand.items())
