"""A_online of the edge-cloud paper (seeds/003, Sec. IV, Alg. 1) with A_greedy (Algs. 2-4) and A_ps (Alg. 5).

At each arrival slot A_online dispatches every chunk of every arriving job (Alg. 1 lines 2-3) with
A_greedy, then A_ps gives each running job one PS (Alg. 1 line 4). The engine is told the
resulting allocation of every slot: at each decision the algorithm emits which chunks the workers
train now and asks to be woken at the next slot where that changes.

Under a restart cost (DESIGN section 9; the paper charges none) the engine's record of a job's
progress is authoritative: the engine charges a restart at every change of a job's worker set, so
a job can end its planned chunks short of its work. Such a job gets a make-up chunk of its remaining
work plus the restart time on the worker that trained its last chunk (its data is there: no
migration), or in the cloud if that chunk ran there; a job the engine completes before its plan
ends has its remaining chunks dropped (docs/algorithms-edge.md, "Restart cost"). With restarts free
neither happens: plan and engine agree to the slot.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduling.algorithms.common import worker_types_for
from scheduling.algorithms.edge.greedy import Chunk, Pending, WorkerQueue, q_cloud, q_edge
from scheduling.algorithms.edge.spec import PS_SLOT
from scheduling.engine import Decision, View
from scheduling.model import Cluster, Instance, Job
from scheduling.speed import Allocation, chunk_rate, chunk_slots, processing_capacity
from scheduling.storage import has_storage
from scheduling.storage import limits as storage_limits


@dataclass
class CloudPart:
    """Chunks of one job dispatched to the cloud: each on its own cloud worker, [start, start + slots)."""

    job_id: str
    type: str
    count: int
    start: int  # r_j + Delta_j,sc
    slots: int  # E_j B_j / n_j with zeta_j of the job


@dataclass(frozen=True)
class Dispatch:
    """Where A_greedy put one job's chunks: edge worker per chunk (None = cloud), zeta_j, alpha_jd."""

    workers: tuple[WorkerQueue | None, ...]
    zeta: int  # 1: the whole job is in the cloud (eq. (1) without communication)
    alpha: tuple[float, ...]  # dual variables alpha_jd = min Q (Alg. 2 lines 13, 23)


def job_type(cluster: Cluster, job: Job) -> str:
    """The one worker type the job names (v_jsw = 1 only for workers of it): its fastest type."""
    return worker_types_for(cluster, job)[0]


class EdgeCloud:
    """A_online (Alg. 1). ``edge_only`` gives the paper's A_online-E (no cloud candidates)."""

    def __init__(
        self, instance: Instance, rng: np.random.Generator, edge_only: bool = False, storage: bool = False
    ) -> None:
        self.cluster = instance.cluster
        self.rng = rng
        self.edge_only = edge_only
        # Sec. VI: U_s per server with a storage limit; chunks are recorded when the instance has one,
        # and limit dispatching only when ``storage`` is on.
        self.track_storage = has_storage(instance)
        self.limited = storage_limits(instance)
        self.storage_cap = self.limited if storage and self.track_storage else {}
        self.stored: dict[str, float] = defaultdict(float)  # server -> GB of chunks stored now
        self.stored_since: dict[int, tuple[str, str, float, int]] = {}  # id(chunk) -> (job, server, GB, slot)
        self.storage_log: list[dict[str, Any]] = []  # finished storage segments (result "storage")
        self.storage_fallbacks = 0  # chunks sent to the cloud because no edge server had room
        self.horizon: int | None = None
        cloud = [s for s in self.cluster.servers if s.site == "cloud" and s.unlimited]
        self.cloud = cloud[0] if cloud else None
        self.servers = {s.id: s for s in self.cluster.servers if s.site == "edge" or s is self.cloud}
        self.workers: dict[str, list[WorkerQueue]] = defaultdict(list)  # type -> queues, cluster order
        for s in self.cluster.servers:
            if s.site != "edge":
                continue
            for wt in self.cluster.worker_types:
                n = int(min(s.capacity.get(r, 0.0) for r, a in wt.demand.items() if a > 0) if wt.demand else 0)
                for k in range(n):
                    self.workers[wt.id].append(WorkerQueue(s.id, wt.id, k, s.upload_delay))
        self.ps_capacity = {
            s.id: int(s.capacity.get(PS_SLOT, 0)) for s in self.cluster.servers if s.site == "edge" and not s.unlimited
        }
        self.seq = 0
        self.jobs: dict[str, Job] = {}
        self.zeta: dict[str, int] = {}
        self.dispatches: dict[str, Dispatch] = {}
        self.cloud_parts: list[CloudPart] = []
        self.current: dict[int, tuple[WorkerQueue, Chunk]] = {}  # id(queue) -> chunk running since t_last
        self.ps: dict[str, str] = {}  # job -> server of its PS in the previous segment
        self.t_last: int | None = None
        self.chunk_preemptions = 0  # times a running chunk was displaced by a higher-gamma chunk
        self.ps_fallbacks = 0  # zeta_j = 0 jobs that found no free edge PS and used a cloud PS
        self.edge_only_fallbacks = 0  # A_online-E jobs with no worker of their type at the edge
        # Restart-aware bookkeeping (used only when the run charges restarts): per job, its planned
        # chunks and cloud parts not yet trained, and where its last one ran (None: the cloud).
        self.left: dict[str, int] = defaultdict(int)
        self.last_place: dict[str, WorkerQueue | None] = {}
        self.drained: set[str] = set()  # jobs whose last planned piece ended at this decision
        self.make_ups = 0  # make-up chunks dispatched for work lost to restarts
        self.dropped = 0  # chunks dropped because the engine completed their job first

    # ---- A_greedy (Alg. 2) ------------------------------------------------------------------

    def dispatch(self, job: Job, t: int) -> Dispatch:
        """Alg. 2 for one arriving job j (lines 1-25): every chunk to the worker minimising Q_jdsw."""
        cluster = self.cluster
        wtype = job_type(cluster, job)
        d_j = job.chunks
        slots_edge = chunk_slots(cluster, job, wtype, colocated=False)  # zeta_j = 0 (line 2)
        gamma = processing_capacity(cluster, job, wtype, False) / (job.epochs * d_j * job.minibatches)
        queues = self.workers.get(wtype, [])
        # Delta_js of this job for every server (the job's own delays, else the server's).
        delay = {sid: job.upload_delay_to(s) for sid, s in self.servers.items()}
        # Lines 3-8: Q of the first chunk for every qualified worker (n_jsw > 0); the cloud with zeta_j = 1.
        cands: list[float] = [self._q(q, job, t, delay[q.server], slots_edge, gamma) for q in queues]
        size = job.chunk_gb or 0.0
        for i, q in enumerate(queues):  # Sec. VI: only servers with room for one more chunk
            if not self._has_room(q.server, size):
                cands[i] = math_inf
        use_cloud = self.cloud is not None and not (self.edge_only and queues)
        if not queues and self.edge_only:
            self.edge_only_fallbacks += 1
        cloud_q = math_inf
        if use_cloud:
            assert self.cloud is not None
            cloud_q = q_cloud(delay[self.cloud.id], d_j, chunk_slots(cluster, job, wtype, True)).total
        placed: list[WorkerQueue | None] = []
        alpha: list[float] = []
        zeta = 0
        for d in range(d_j):  # line 9
            best = min(range(len(cands)), key=cands.__getitem__, default=None)  # line 11
            if best is not None and cands[best] == math_inf:
                best = None  # Sec. VI: no edge server has room for the chunk
            if best is None and cloud_q == math_inf and self.cloud is not None:
                # A_online-E whose chunk fits on no edge server: the cloud after all (reported).
                self.storage_fallbacks += d_j - d
                cloud_q = q_cloud(delay[self.cloud.id], d_j, chunk_slots(cluster, job, wtype, d == 0)).total
            if best is None or cloud_q < cands[best]:
                # Lines 12-16: the cloud is the minimum; dispatching there leaves C_j unchanged, so
                # every remaining chunk goes there too. zeta_j = 1 only if the first chunk did.
                zeta = 1 if d == 0 else 0
                alpha.extend([cloud_q] * (d_j - d))  # line 13
                placed.extend([None] * (d_j - d))
                break
            if d == 0 and use_cloud:  # lines 17-20: recompute the cloud's Q with zeta_j = 0
                assert self.cloud is not None
                cloud_q = q_cloud(delay[self.cloud.id], d_j, slots_edge).total
            queue = queues[best]
            new = Chunk(job.job_id, d, gamma, 1.0 / d_j, t + delay[queue.server], slots_edge, self.seq)
            queue.insert(new)  # line 24, Alg. 4: y_jdsw(t) = 1 from t*, A2 postponed (HAPRF order)
            self.left[job.job_id] += 1
            self.seq += 1
            cands[best] = self._q(queue, job, t, delay[queue.server], slots_edge, gamma)  # lines 21-22
            if self.track_storage and queue.server in self.limited:
                self._store(new, queue.server, size, t)
                if not self._has_room(queue.server, size):  # Sec. VI: the server's storage is full
                    for i, q in enumerate(queues):
                        if q.server == queue.server:
                            cands[i] = math_inf
            alpha.append(min(*cands, cloud_q))  # line 23
            placed.append(queue)
        cloud_chunks = sum(1 for p in placed if p is None)
        if cloud_chunks:
            assert self.cloud is not None
            slots = chunk_slots(cluster, job, wtype, colocated=zeta == 1)
            self.cloud_parts.append(CloudPart(job.job_id, wtype, cloud_chunks, t + delay[self.cloud.id], slots))
            self.left[job.job_id] += 1
        return Dispatch(tuple(placed), zeta, tuple(alpha))

    def _has_room(self, server: str, size: float) -> bool:
        """Sec. VI: whether one more chunk of ``size`` GB fits in the server's storage (with ``storage``)."""
        cap = self.storage_cap.get(server)
        return cap is None or self.stored[server] + size <= cap + 1e-9

    def _store(self, chunk: Chunk, server: str, size: float, t: int) -> None:
        """Keep the chunk's data on the server from its dispatch (r_j) until it is trained ((7c)/(7d))."""
        self.stored[server] += size
        self.stored_since[id(chunk)] = (chunk.job_id, server, size, t)

    def _unstore(self, chunk: Chunk, t: int) -> None:
        entry = self.stored_since.pop(id(chunk), None)
        if entry is not None:
            job_id, server, size, start = entry
            self.stored[server] -= size
            self.storage_log.append({"job_id": job_id, "server": server, "start": start, "end": t, "gb": size})

    def _q(self, queue: WorkerQueue, job: Job, t: int, delay: int, slots: int, gamma: float) -> float:
        """CALCULATEQ (Alg. 3 lines 9-13) for an edge worker: eq. (5) on A(t0), t0 = r_j + Delta_js."""
        t0 = t + delay
        pending = [Pending(c.gamma, left, round(1.0 / c.weight)) for c, left in queue.project(t, t0)]
        return q_edge(delay, job.chunks, slots, gamma, pending).total

    # ---- A_online (Alg. 1) as an engine algorithm -------------------------------------------

    def decide(self, view: View) -> Decision:
        t = view.t
        self.horizon = view.horizon
        self._advance(t)
        for job in view.arrived:  # Alg. 1 lines 2-3
            self.jobs[job.job_id] = job
            dispatch = self.dispatch(job, t)
            self.dispatches[job.job_id] = dispatch
            self.zeta[job.job_id] = dispatch.zeta
        ended = [p for p in self.cloud_parts if p.start + p.slots <= t]
        if ended:
            self.cloud_parts = [p for p in self.cloud_parts if p.start + p.slots > t]
            for p in ended:
                self._piece_done(p.job_id, None)
        if view.engine is not None and (view.restart_slots() or view.per_job_restarts()):
            self._settle(view, t)
        self.drained.clear()
        # Which chunk every worker trains now (HAPRF with upload delays) and which were displaced.
        counts: dict[tuple[str, str, str], int] = defaultdict(int)
        running: dict[int, tuple[WorkerQueue, Chunk]] = {}
        wake: int | None = None
        preempted: set[str] = set()
        for queues in self.workers.values():
            for q in queues:
                c = q.running(t)
                before = self.current.get(id(q))
                if before is not None and before[1] is not c and before[1].remaining > 0:
                    self.chunk_preemptions += 1
                    preempted.add(before[1].job_id)
                if c is not None:
                    running[id(q)] = (q, c)
                    counts[(c.job_id, q.server, q.type)] += 1
                nxt = q.next_change(t)
                if nxt is not None:
                    wake = nxt if wake is None else min(wake, nxt)
        self.current = running
        for p in self.cloud_parts:
            if p.start <= t:
                assert self.cloud is not None
                counts[(p.job_id, self.cloud.id, p.type)] += p.count
                nxt = p.start + p.slots
            else:
                nxt = p.start
            wake = nxt if wake is None else min(wake, nxt)
        allocations = [Allocation(j, s, "worker", ty, n) for (j, s, ty), n in counts.items()]
        allocations += self._assign_ps(sorted({j for j, _s, _t in counts}))
        # A job that lost every worker is counted by the engine as suspended; report the others.
        holding = {j for j, _s, _t in counts}
        return Decision(
            allocations=tuple(allocations),
            wake_at=wake,
            preempted=tuple(sorted(preempted & holding)),
        )

    def _advance(self, t: int) -> None:
        """Every worker trained the chunk chosen at the previous decision up to ``t``, or to its end.

        The algorithm asks to be woken whenever a worker switches chunk, so a chunk ends at ``t`` at the
        latest, except when the engine skips the decisions of a slot with no active job: then the
        chunks running since the last decision were the last ones and ended before ``t``."""
        if self.t_last is not None:
            span = t - self.t_last
            for q, c in self.current.values():
                end = self.t_last + min(span, c.remaining)
                done = q.advance(c, end - self.t_last)
                if done is not None:
                    self._unstore(done, end)
                    self._piece_done(done.job_id, q)
        self.t_last = t

    # ---- restart cost (not in the paper; docs/algorithms-edge.md, "Restart cost") ---------------

    def _piece_done(self, job_id: str, place: WorkerQueue | None) -> None:
        """One planned chunk (or cloud part) of the job ended on ``place`` (None: the cloud)."""
        self.left[job_id] -= 1
        self.last_place[job_id] = place
        if self.left[job_id] == 0:
            self.drained.add(job_id)

    def _settle(self, view: View, t: int) -> None:
        """Make the plan agree with the engine's progress: drop the chunks of jobs the engine
        completed, and give a job whose planned chunks all ended short of its work a make-up chunk."""
        for job_id in view.completed:
            if self.left.get(job_id, 0) > 0:
                self._drop(job_id, t)
        for job_id in sorted(self.drained):
            if job_id in view.completed or self.left[job_id] > 0:
                continue
            remaining = view.job(job_id).remaining
            if remaining > 1e-9:
                self._make_up(self.jobs[job_id], remaining, t, view.restart_slots(job_id))

    def _make_up(self, job: Job, remaining: float, t: int, restart: int) -> None:
        """The job's remaining work as one more chunk, long enough to pay one more restart."""
        wtype = job_type(self.cluster, job)
        place = self.last_place.get(job.job_id)
        self.make_ups += 1
        self.left[job.job_id] += 1
        if place is None and self.cloud is not None:
            per_worker = chunk_rate(self.cluster, job, wtype, colocated=self.zeta[job.job_id] == 1)
            slots = max(1, math.ceil(remaining / per_worker - 1e-9)) + restart
            self.cloud_parts.append(CloudPart(job.job_id, wtype, 1, t, slots))
            return
        assert place is not None
        per_worker = chunk_rate(self.cluster, job, wtype, colocated=False)
        slots = max(1, math.ceil(remaining / per_worker - 1e-9)) + restart
        gamma = processing_capacity(self.cluster, job, wtype, False) / (job.epochs * job.chunks * job.minibatches)
        chunk = Chunk(job.job_id, job.chunks + self.make_ups, gamma, 1.0 / job.chunks, t, slots, self.seq)
        self.seq += 1
        place.insert(chunk)
        if self.track_storage and place.server in self.limited:
            self._store(chunk, place.server, job.chunk_gb or 0.0, t)

    def _drop(self, job_id: str, t: int) -> None:
        """The engine completed the job: its chunks still planned are not trained."""
        for queues in self.workers.values():
            for q in queues:
                for c in [c for c in q.chunks if c.job_id == job_id]:
                    i = q.chunks.index(c)
                    del q.chunks[i], q._keys[i]
                    c.remaining = 0
                    self._unstore(c, t)
                    self.dropped += 1
        self.cloud_parts = [p for p in self.cloud_parts if p.job_id != job_id]
        self.left[job_id] = 0

    # ---- A_ps (Alg. 5) ------------------------------------------------------------------

    def _assign_ps(self, running: list[str]) -> list[Allocation]:
        """One PS per running job (Alg. 5 line 2): keep the previous one if the job ran continuously
        (lines 3-4), else a random qualified PS (line 6): the cloud's for a job wholly in the cloud
        (zeta_j = 1), a free edge PS otherwise (the worker allocation decides where the PS goes)."""
        cloud_id = self.cloud.id if self.cloud is not None else None
        free = dict(self.ps_capacity)
        kept: dict[str, str] = {}
        for j in running:
            prev = self.ps.get(j)
            if prev is not None and (prev == cloud_id or free.get(prev, 0) > 0):
                kept[j] = prev
                if prev != cloud_id:
                    free[prev] -= 1
        chosen: dict[str, str] = {}
        for j in running:
            if j in kept:
                chosen[j] = kept[j]
                continue
            if self.zeta[j] == 1 and cloud_id is not None:
                chosen[j] = cloud_id
                continue
            servers = [s for s, n in free.items() if n > 0]
            if not servers:
                assert cloud_id is not None, "no free PS anywhere"
                self.ps_fallbacks += 1
                chosen[j] = cloud_id
                continue
            weights = np.array([free[s] for s in servers], dtype=float)
            s = servers[int(self.rng.choice(len(servers), p=weights / weights.sum()))]
            free[s] -= 1
            chosen[j] = s
        self.ps = chosen
        ps_type = self.cluster.ps_types[0].id
        return [Allocation(j, s, "ps", ps_type, 1) for j, s in chosen.items()]

    def report(self) -> Mapping[str, Any]:
        cloud = sum(1 for d in self.dispatches.values() for w in d.workers if w is None)
        total = sum(len(d.workers) for d in self.dispatches.values())
        extra: dict[str, Any] = {}
        if self.track_storage:
            # Chunks still queued after the last decision train on (HAPRF, nothing new arrives) until
            # they finish, or until the horizon stops the run.
            last = self.t_last or 0
            ends = {k: v for qs in self.workers.values() for q in qs for k, v in q.finish_slots(last).items()}
            stop = self.horizon if self.horizon is not None else max(ends.values(), default=last)
            unfinished = [
                {"job_id": j, "server": s, "start": a, "end": min(ends.get(k, stop), stop), "gb": g}
                for k, (j, s, g, a) in self.stored_since.items()
            ]
            log = [g for g in (*self.storage_log, *unfinished) if g["end"] > g["start"]]
            extra["storage"] = sorted(log, key=lambda g: (g["start"], g["job_id"], g["server"], g["end"]))
        return {
            **extra,
            "edge_cloud": {
                "chunk_preemptions": self.chunk_preemptions,
                "chunks_dispatched": total,
                "chunks_to_cloud": cloud,
                "jobs_wholly_in_cloud": sum(self.zeta.values()),
                "ps_fallbacks_to_cloud": self.ps_fallbacks,
                "edge_only_fallbacks_to_cloud": self.edge_only_fallbacks,
                "storage_fallbacks_to_cloud": self.storage_fallbacks,
                **({"make_up_chunks": self.make_ups, "chunks_dropped": self.dropped} if self.make_ups else {}),
            },
        }


math_inf = float("inf")


def make_edge_cloud(instance: Instance, params: Mapping[str, Any], rng: np.random.Generator) -> EdgeCloud:
    return EdgeCloud(instance, rng, edge_only=params["edge_only"], storage=params["storage"])
