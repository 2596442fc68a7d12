"""One time-slotted model of clusters and jobs that all four papers fit into (DESIGN section 3).

Units are fixed here and converted once, at load time (see ``scheduling.io``):

* time: integer slots; ``Cluster.slot_seconds`` converts to wall time;
* per-mini-batch compute and PS update times: slots;
* gradient and parameter sizes: MB; bandwidths: MB per slot (converted from Gbps on load);
* resource amounts: the unit each ``Resource`` declares.

All classes are frozen; mappings are stored as tuples of pairs or read-only dicts so that a model
object can be hashed, shared between runs and never mutated by an algorithm.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType

from scheduling.records import field, record

Amounts = Mapping[str, float]
"""Resource name -> amount, in the unit of that resource."""

ARCHITECTURES = ("ps", "allreduce", "pipeline")
POOLS = ("any", "worker", "ps")
SITES = ("cloud", "edge")
RIGID_WORKER_TYPE = "gpu"
"""Type id of the one-GPU workers that rigid (trace-replayed) jobs run on."""


def frozen_amounts(values: Mapping[str, float] | None) -> Amounts:
    return MappingProxyType(dict(values or {}))


_NONE: Amounts = MappingProxyType({})


def no_amounts() -> Amounts:
    """The empty read-only mapping: one instance serves every field that defaults to it (a trace
    of 150,000 jobs would otherwise hold 450,000 empty mappings, about 45 MB)."""
    return _NONE


def gbps_to_mb_per_slot(gbps: float, slot_seconds: float) -> float:
    """Bandwidth in Gbps -> MB per slot (1 Gbps = 125 MB/s)."""
    return gbps * 125.0 * slot_seconds


@record
class Resource:
    """A resource every server may offer (docs/formats.md, cluster spec)."""

    name: str  # e.g. "gpu", "cpu", "mem", "bw"
    unit: str = ""  # e.g. "GPU", "vCPU", "GB", "MB/slot"


@record
class Server:
    """One server (a cluster entry with ``count`` is expanded into that many)."""

    id: str
    capacity: Amounts  # resource -> amount available in every slot
    pool: str = "any"  # "any" | "worker" | "ps": which roles may be placed here (OASiS pools)
    site: str = "cloud"  # "cloud" | "edge" (edge-cloud paper)
    unlimited: bool = False  # capacity is never exhausted (the edge-cloud paper's cloud)
    upload_delay: int = 0  # slots to upload a job's data here before it can train (edge-cloud)
    intra_bw: float | None = None  # intra-server (NVLink/PCIe) bandwidth, MB per slot (A-SRPT)
    nic_bw: float | None = None  # NIC bandwidth, MB per slot (A-SRPT)
    gpu_model: str | None = None  # GPU type name, informational (imported node lists)
    storage_gb: float | None = None  # U_s: storage for data chunks, GB; None = unlimited (Sec. VI)

    def accepts(self, role: str) -> bool:
        return self.pool in ("any", role)


@record
class InstanceType:
    """A worker type or PS type (Zhou et al.: M worker types, P PS types)."""

    id: str
    demand: Amounts  # per-instance demand per resource
    bandwidth: float = 0.0  # b_m (worker) or B_p (PS), MB per slot (from Gbps at load time)


@record
class RestartCost:
    """A row of the cluster's ``restart_costs`` table: seconds a job of ``model`` on ``gpus`` GPUs
    loses at each restart (None: any model, any GPU count; docs/formats.md "Per-job restart costs")."""

    seconds: float
    model: str | None = None
    gpus: int | None = None


@record
class Failure:
    """A server down over the slots [start, end) (the cluster's failure trace, scheduling.failures)."""

    server: str
    start: int
    end: int


@record
class Cluster:
    """The cluster spec as loaded: slot length, resources, servers, worker and PS types."""

    slot_seconds: float  # wall-clock length of one slot
    resources: tuple[Resource, ...]
    servers: tuple[Server, ...]  # expanded: "count" in the spec is already unrolled
    worker_types: tuple[InstanceType, ...] = ()
    ps_types: tuple[InstanceType, ...] = ()
    horizon: int | None = None  # T: slots the cluster runs for; None = until every job is done
    network: Amounts = field(default_factory=no_amounts)  # free-form figures
    restart_seconds: float = 0.0  # time a job loses each time it restarts on another allocation (s)
    # Optional per-job restart costs and GPU-type speeds (scheduling.restart_costs, scheduling.gpu_types).
    # Left out of repr (and so of the input digests of scheduling.provenance, which add them when set)
    # so that a cluster without them has the digest it always had.
    restart_costs: tuple[RestartCost, ...] = field(default=(), repr=False)
    checkpoint_gbps: float = field(default=0.0, repr=False)  # GB/s a restart reloads checkpoints at
    gpu_speeds: Mapping[str, Amounts] = field(default_factory=no_amounts, repr=False)
    """Model name (or "*": any model) -> GPU type -> speed factor of a rigid job on that type."""
    failures: tuple[Failure, ...] = field(default=(), repr=False)  # sorted by (start, server)
    checkpoint_slots: int = field(default=0, repr=False)  # a running job saves its state this often
    replay_status: bool = field(default=False, repr=False)  # recorded failures end failed (status_replay)

    def resource_names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.resources)

    def worker_type(self, type_id: str) -> InstanceType | None:
        for w in self.worker_types:  # a loop, not next(generator): called for every demand look-up
            if w.id == type_id:
                return w
        return None

    def ps_type(self, type_id: str) -> InstanceType | None:
        for p in self.ps_types:
            if p.id == type_id:
                return p
        return None

    def server(self, server_id: str) -> Server:
        for s in self.servers:
            if s.id == server_id:
                return s
        raise KeyError(server_id)

    def total_capacity(self, resource: str) -> float:
        return sum(s.capacity.get(resource, 0.0) for s in self.servers if not s.unlimited)


@record(slots=True)  # (a trace with utilities holds one per job)
class Utility:
    """Sigmoid utility of OASiS Sec. V-A: f(jct) = priority / (1 + exp(decay * (jct - target)))."""

    priority: float = 1.0  # gamma_1
    decay: float = 0.0  # gamma_2; 0 = time-insensitive (constant utility priority/2)
    target: float = 0.0  # gamma_3, target completion time in slots after arrival

    def value(self, jct: float) -> float:
        x = self.decay * (jct - self.target)
        if x > 700:  # exp overflows; the utility is 0 to double precision
            return 0.0
        return self.priority / (1.0 + math.exp(x))


@record
class Stage:
    """One pipeline stage of an A-SRPT job (Sec. III)."""

    replicas: int = 1  # k_(i,s)
    forward: float = 0.0  # forward time per mini-batch, slots
    backward: float = 0.0  # backward time per mini-batch, slots
    activation_in: float = 0.0  # MB received from the previous stage per mini-batch
    activation_out: float = 0.0  # MB sent to the next stage per mini-batch
    params: float = 0.0  # parameter size, MB


@record(slots=True)  # a slot per field, no __dict__: a trace holds one per job (a million at 1M jobs)
class Job:
    """One training job of a trace, as loaded (docs/formats.md, job trace)."""

    job_id: str
    arrival: int  # a_j, slot
    arch: str = "ps"  # "ps" | "allreduce" | "pipeline"
    weight: float = 1.0  # w_j in sum w_j c_j (Zhou et al. eq. (2))
    utility: Utility = Utility()  # frozen: one default instance serves every job
    epochs: int = 1  # E_j
    chunks: int = 1  # D_j data chunks; also the maximum number of workers (Zhou (2g))
    minibatches: int = 1  # K_j mini-batches per chunk
    batch_time: Amounts = field(default_factory=no_amounts)
    """Worker type -> v_jm, slots to train one mini-batch; key "*" applies to every type."""
    ps_update: Amounts = field(default_factory=no_amounts)
    """PS type -> U_j^p, slots per iteration; key "*" applies to every type."""
    gradient_mb: float = 0.0  # pi_j, MB of gradients per worker per mini-batch
    worker_demand: Amounts | None = None  # per-job worker demand (OASiS); overrides the type's
    ps_demand: Amounts | None = None  # per-job PS demand (OASiS)
    gpus: int | None = None  # GPUs requested (rigid trace jobs)
    # GPUs (one-GPU workers) an elastic job's owner requested in the source trace: the fixed worker
    # count of the fixed-configuration baselines (the edge-cloud paper's Sec. V-A); elastic
    # algorithms are not bound by it (``max_workers`` ignores it).
    gpu_request: int | None = None
    duration: int | None = None  # recorded run time in slots (rigid trace jobs)
    iterations: int | None = None  # true training iterations (A-SRPT)
    predicted_iterations: int | None = None  # predicted iterations (A-SRPT)
    stages: tuple[Stage, ...] = ()  # pipeline stages (A-SRPT)
    group: str | None = None  # recurring-job group id
    user: str | None = None
    model: str | None = None  # model name (e.g. "ResNet152")
    work: float | None = None  # explicit work units; overrides the derived amount
    upload_delay: Mapping[str, int] = field(default_factory=no_amounts)
    """Delta_js of the edge-cloud paper, slots: server id, site ("edge"/"cloud") or "*" -> delay;
    overrides the server's own ``upload_delay`` (see ``upload_delay_to``)."""
    chunk_gb: float | None = None  # u_j: storage one data chunk occupies, GB (edge-cloud Sec. VI)
    # Optional (left out of repr as Cluster's optional fields): the job's own restart cost, seconds,
    # and its speed factor per GPU type (rigid jobs).
    restart_seconds: float | None = field(default=None, repr=False)
    checkpoint_gb: float | None = field(default=None, repr=False)  # state a restart reloads (GB)
    gpu_speed: Amounts = field(default_factory=no_amounts, repr=False)
    outcome: str | None = field(default=None, repr=False)  # "failed"/"killed" from the trace's status

    @property
    def rigid(self) -> bool:
        """Replays a production trace: needs exactly ``gpus`` GPUs for ``duration`` slots."""
        return self.gpus is not None and self.duration is not None

    @property
    def work_required(self) -> float:
        """Work units to complete the job.

        Rigid jobs: ``duration`` units (one per slot on the requested GPUs). Otherwise the explicit
        ``work`` if given, else E_j * D_j * K_j mini-batches (Zhou et al. Sec. 3.2).
        """
        if self.rigid:
            assert self.duration is not None
            return float(self.duration)
        if self.work is not None:
            return float(self.work)
        return float(self.epochs * self.chunks * self.minibatches)

    def max_workers(self) -> int:
        """Most workers the job may use: its GPUs when it states them (rigid and pipeline jobs,
        one GPU per worker), else D_j (Zhou et al. (2g): each worker trains at least one chunk)."""
        if self.gpus is not None:
            return self.gpus
        if self.stages:
            return sum(s.replicas for s in self.stages)  # one GPU per stage replica (A-SRPT)
        return self.chunks

    def upload_delay_to(self, server: Server) -> int:
        """Delta_js in slots: the job's delay for this server id, else for its site, else its "*",
        else the server's own ``upload_delay``."""
        d = self.upload_delay
        if not d:
            return server.upload_delay
        for key in (server.id, server.site, "*"):
            if key in d:
                return d[key]
        return server.upload_delay

    def batch_time_for(self, worker_type: str) -> float:
        """v_jm in slots; 1 slot when the trace gives none."""
        return float(self.batch_time.get(worker_type, self.batch_time.get("*", 1.0)))

    def ps_update_for(self, ps_type: str) -> float:
        """U_j^p in slots; 0 when the trace gives none."""
        return float(self.ps_update.get(ps_type, self.ps_update.get("*", 0.0)))


@record
class Instance:
    """A cluster and a trace: what one simulation runs on."""

    cluster: Cluster
    jobs: tuple[Job, ...]  # sorted by (arrival, job_id)
    # A separate past the user supplies (e.g. ``--history FILE``): finished jobs with their true
    # sizes that online estimators may calibrate on. Never the jobs being scored (DESIGN section 9).
    history: tuple[Job, ...] = ()

    def job(self, job_id: str) -> Job:
        for j in self.jobs:
            if j.job_id == job_id:
                return j
        raise KeyError(job_id)
