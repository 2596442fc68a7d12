"""What A-SRPT and its baselines share: per-job profiles, free GPUs per server, placement.

A job is either a *stage-graph* job (``arch: pipeline`` with ``stages``: one GPU per replica,
alpha by eqs. (4)-(7) from where its replicas run) or an *opaque* GPU job (a rigid trace job:
``gpus`` one-GPU workers, one work unit per slot once it holds them all, so alpha = 1 slot per
unit wherever it runs and it is never communication-heavy).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from scheduling.algorithms.asrpt.mapping import (
    JobGraph,
    alpha_min_estimate,
    counts_of,
    heavy_edge,
    heavy_edge_fast,
    job_graph,
)
from scheduling.algorithms.common import Config
from scheduling.algorithms.placement import Placement
from scheduling.capacity import Ledger
from scheduling.model import RIGID_WORKER_TYPE, Cluster, Instance, Job, Server
from scheduling.pipeline import Link, alpha, alpha_max, links, stage_type
from scheduling.speed import Allocation, demand_of

GPU_ONLY = {"gpu": 1.0}

Selection = Literal["first", "most", "least"]
"""Which servers give a job its GPUs (Gpus.select)."""
SELECTIONS: tuple[Selection, ...] = get_args(Selection)


def check_selection(how: str) -> Selection:
    """``how`` as a Selection, else ValueError (any other string once ran ``least`` silently)."""
    for name in SELECTIONS:
        if how == name:
            return name
    raise ValueError(f"selection {how!r}: one of {', '.join(SELECTIONS)}")


def usable(server: Server) -> bool:
    """Servers A-SRPT places on: limited, accepting workers, with GPUs."""
    return server.accepts("worker") and not server.unlimited and server.capacity.get("gpu", 0.0) >= 1


def unsupported_reason(instance: Instance) -> str | None:
    """Why A-SRPT cannot model this instance, or None (used as the registry's Feature)."""
    total = sum(int(s.capacity.get("gpu", 0.0)) for s in instance.cluster.servers if usable(s))
    for job in instance.jobs:
        if job.arch == "pipeline" and job.stages and job.worker_demand is None:
            gpus = sum(s.replicas for s in job.stages)
        elif job.rigid and dict(demand_of(instance.cluster, job, "worker", RIGID_WORKER_TYPE) or {}) == GPU_ONLY:
            gpus = job.gpus or 0
        else:
            return f"job {job.job_id!r} is neither a pipeline job with stages nor a rigid job on one-GPU workers"
        if gpus > total:
            return f"job {job.job_id!r} needs {gpus} GPUs, the cluster's worker servers hold {total}"
    return None


@dataclass(frozen=True)
class Profile:
    """A job as A-SRPT sees it (Sec. III/IV)."""

    job: Job
    gpus: int  # g_i
    alpha_min: float  # alpha~_i^min, slots per work unit (Heavy-Edge on the fewest servers)
    alpha_max: float  # alpha_i^max, slots per work unit (every replica on its own server)
    predicted: float  # n~_i, work units
    graph: JobGraph | None  # stage graph; None for opaque (rigid) jobs

    @property
    def comm_ratio(self) -> float:
        return self.alpha_max / self.alpha_min if self.alpha_min > 0 else 1.0


def reference_link(cluster: Cluster) -> Link:
    """The link of the largest worker server: the homogeneous server of Sec. III."""
    best = max((s for s in cluster.servers if usable(s)), key=lambda s: s.capacity.get("gpu", 0.0))
    return Link(float(best.capacity.get("gpu", 0.0)), best.nic_bw, best.intra_bw)


def profiles(instance: Instance, predicted: Mapping[str, float], allreduce: str) -> dict[str, Profile]:
    link = reference_link(instance.cluster)
    out: dict[str, Profile] = {}
    cache: dict[tuple[object, ...], tuple[JobGraph, float, float]] = {}
    for job in instance.jobs:
        if job.stages:
            key = (job.stages, allreduce)
            if key not in cache:
                graph = job_graph(job.stages, allreduce)
                a_min = alpha_min_estimate(graph, link)
                cache[key] = (graph, a_min, max(a_min, alpha_max(job.stages, link)))
            graph, a_min, a_max = cache[key]
            out[job.job_id] = Profile(job, graph.size, a_min, a_max, predicted[job.job_id], graph)
        else:
            assert job.gpus is not None
            out[job.job_id] = Profile(job, job.gpus, 1.0, 1.0, predicted[job.job_id], None)
    return out


class Gpus:
    """Free GPUs per usable server, kept by the scheduler between events.

    ``select`` is the readable transcription (sort the servers by free GPUs); with ``fast`` the
    scheduler uses ``select_fast`` (the servers kept in buckets by free GPUs, each bucket in cluster
    order) and ``mapping`` reuses a Heavy-Edge plan per (job graph, free GPUs of the chosen servers).
    Both give the same servers and mappings (tests/test_fast_twins.py).
    """

    def __init__(self, cluster: Cluster, fast: bool = False) -> None:
        self.cluster = cluster
        servers = [s for s in cluster.servers if usable(s)]
        self.ids = [s.id for s in servers]
        self.order = {s.id: i for i, s in enumerate(servers)}
        self.free = {s.id: int(s.capacity.get("gpu", 0.0)) for s in servers}
        self.total = sum(self.free.values())  # G
        self.available = self.total  # free GPUs in the cluster
        self.links, _ = links(cluster)
        self.fast = fast
        # Buckets: free GPUs -> positions (cluster order, ascending) of the servers with that many free.
        self.by_free: list[list[int]] = [[] for _ in range(max(self.free.values(), default=0) + 1)]
        for i, server in enumerate(self.ids):
            self.by_free[self.free[server]].append(i)
        # Heavy-Edge plans of ``mapping`` (fast path): (graph id, free GPUs per chosen server) ->
        # per stage, (chosen server's index, replicas); alphas by the chosen servers' link classes.
        self.plans: dict[tuple[int, tuple[int, ...]], tuple[tuple[tuple[int, int], ...], ...]] = {}
        self.alphas: dict[tuple[int, tuple[int, ...], tuple[int, ...]], float] = {}
        classes: dict[Link, int] = {}
        self.link_class = {s: classes.setdefault(self.links[s], len(classes)) for s in self.ids}

    def select(self, gpus: int, how: Selection) -> list[tuple[str, int]]:
        """g_i GPUs from the servers with the most (``most``, Alg. 1 line 9) or least (``least``,
        line 22) free GPUs, or in cluster order (``first``); ties by cluster order. Assumes
        ``gpus <= self.available``."""
        if self.fast:
            return self.select_fast(gpus, how)
        return select(list(self.free.items()), gpus, how)

    def select_fast(self, gpus: int, how: Selection) -> list[tuple[str, int]]:
        """``select`` from the buckets: O(servers chosen + distinct free counts)."""
        out: list[tuple[str, int]] = []
        left = gpus
        if how == "first":
            for server in self.ids:
                if left == 0:
                    break
                f = self.free[server]
                if f > 0:
                    out.append((server, min(left, f)))
                    left -= min(left, f)
            return out
        levels = range(len(self.by_free) - 1, 0, -1) if how == "most" else range(1, len(self.by_free))
        ids = self.ids
        for f in levels:
            for i in self.by_free[f]:
                if left == 0:
                    return out
                k = min(left, f)
                out.append((ids[i], k))
                left -= k
        return out

    def _move(self, server: str, delta: int) -> None:
        old = self.free[server]
        self.free[server] = new = old + delta
        self.available += delta
        i = self.order[server]
        bucket = self.by_free[old]
        del bucket[bisect.bisect_left(bucket, i)]
        bisect.insort(self.by_free[new], i)

    def take(self, allocations: Sequence[Allocation]) -> None:
        for a in allocations:
            self._move(a.server, -a.count)

    def release(self, allocations: Sequence[Allocation]) -> None:
        for a in allocations:
            self._move(a.server, a.count)


def select(free: Sequence[tuple[str, int]], gpus: int, how: Selection) -> list[tuple[str, int]]:
    """Gpus.select over ``free`` ((server, free GPUs) in cluster order): the readable transcription."""
    out: list[tuple[str, int]] = []
    left = gpus
    if how == "first":
        for server, f in free:
            if left == 0:
                break
            if f > 0:
                out.append((server, min(left, f)))
                left -= min(left, f)
        return out
    sign = -1 if how == "most" else 1
    ranked = [(sign * f, i, f) for i, (_s, f) in enumerate(free) if f > 0]
    heapq.heapify(ranked)  # (by free GPUs, then cluster order), read only as far as the job needs
    while left > 0 and ranked:
        _key, i, f = heapq.heappop(ranked)
        out.append((free[i][0], min(left, f)))
        left -= min(left, f)
    return out


def heavy_edge_placement(cluster: Cluster, profiles: Mapping[str, Profile], how: Selection, fast: bool) -> Placement:
    """The A-SRPT baselines' placement as a list scheduler's placement (placement.Placement): a job
    fits when its g_i GPUs are free on the usable servers; they come from the servers ``how``
    selects (Gpus.select) and the job's stage graph is mapped onto them by Heavy-Edge (``mapping``;
    with ``fast`` reusing plans per shape, as Gpus(fast=True)). The free GPUs are read from the
    ledger the walk books on, so the placement keeps no state of its own but the plans.

    It is not one of placement.PLACEMENTS: it needs each job's profile (its stage graph, which
    depends on the ``allreduce`` parameter) and places only stage jobs and one-GPU rigid jobs, every
    worker of which needs exactly one GPU (unsupported_reason)."""
    how = check_selection(how)
    gpus = Gpus(cluster, fast=fast)  # its links and Heavy-Edge plans; the free GPUs come from the ledger
    ids = set(gpus.ids)
    # Free GPUs per usable server: Ledger.room of one GPU (floor(capacity - used) = int(capacity) -
    # used for the whole GPUs booked here), the usable servers only. When every server that accepts
    # workers is usable, the ledger's free worker GPUs bound the usable ones from above: a job
    # needing more cannot fit, and the servers need not be read.
    whole = all(usable(s) for s in cluster.servers if s.accepts("worker"))

    def place(ledger: Ledger, job: Job, cfg: Config) -> tuple[Allocation, ...] | None:
        p = profiles[job.job_id]
        if whole and p.gpus > ledger.role_free("worker", "gpu") + 1e-6:
            return None
        free = ledger.room("worker", GPU_ONLY)  # servers accepting workers: the usable ones if ``whole``
        if not whole:
            free = [(s, k) for s, k in free if s in ids]
        if p.gpus > sum(k for _s, k in free):
            return None
        allocs, _alpha = mapping(p, select(free, p.gpus, how), gpus)
        for a in allocs:
            ledger.book(a.server, GPU_ONLY, a.count)
        return allocs

    return Placement(
        "heavy-edge",
        place,
        repack=False,
        monotone=lambda cluster: True,  # a job fits iff its GPUs are free: more GPUs never fit where fewer did not
        summary=f"Heavy-Edge onto the servers with the {how} free GPUs" if how != "first" else "Heavy-Edge, first fit",
    )


def mapping(p: Profile, servers: Sequence[tuple[str, int]], gpus: Gpus) -> tuple[tuple[Allocation, ...], float]:
    """Heavy-Edge mapping of ``p`` onto ``servers`` (Alg. 1 lines 10/23) and its alpha (line 11)."""
    job_id = p.job.job_id
    if p.graph is None:
        return tuple(Allocation(job_id, m, "worker", RIGID_WORKER_TYPE, k) for m, k in servers), p.alpha_min
    if gpus.fast:
        return _planned(p, p.graph, servers, gpus)
    where = heavy_edge(p.graph, servers)
    counts = counts_of(p.graph, where)
    allocs = tuple(
        Allocation(job_id, m, "worker", stage_type(s), x)
        for s, per in enumerate(counts)
        for m, x in sorted(per.items())
    )
    return allocs, alpha(p.graph.stages, counts, gpus.links)


def _planned(
    p: Profile, graph: JobGraph, servers: Sequence[tuple[str, int]], gpus: Gpus
) -> tuple[tuple[Allocation, ...], float]:
    """``mapping`` with Heavy-Edge's outcome reused: it depends only on the graph and the free GPUs
    of the chosen servers, in their order (servers are named by their index here), and eq. (7)
    only on the counts and the servers' links. A new shape is mapped by ``heavy_edge_fast``."""
    caps = tuple(c for _, c in servers)
    key = (id(graph), caps)  # the graph lives as long as the profiles that hold it
    plan = gpus.plans.get(key)
    if plan is None:
        where = heavy_edge_fast(graph, [(str(i), c) for i, c in enumerate(caps)])
        plan = tuple(tuple((int(m), x) for m, x in per.items()) for per in counts_of(graph, where))
        gpus.plans[key] = plan
    classes = tuple(gpus.link_class[m] for m, _ in servers)
    a = gpus.alphas.get((*key, classes))
    if a is None:
        named = [{servers[i][0]: x for i, x in per} for per in plan]
        a = gpus.alphas[(*key, classes)] = alpha(graph.stages, named, gpus.links)
    job_id = p.job.job_id
    allocs = tuple(
        Allocation(job_id, m, "worker", stage_type(s), x)
        for s, per in enumerate(plan)
        for m, x in sorted((servers[i][0], x) for i, x in per)
    )
    return allocs, a
