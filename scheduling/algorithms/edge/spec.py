"""Registry entries of the edge-cloud package: ``edge-cloud``, ``tiresias-l`` and ``batchsche``.

Declared here, apart from the algorithms, so that listing them imports none of them: each entry
names its factory as "module:function" (scheduling.registry).
"""

from __future__ import annotations

from scheduling.algorithms.baselines import WORKER_PARAMS, check_worker_range
from scheduling.model import Instance
from scheduling.registry import AlgorithmSpec, Feature, Param, register
from scheduling.speed import is_edge_cloud

PS_SLOT = "ps_slot"


def _edge_cloud_missing(instance: Instance) -> str | None:
    cluster = instance.cluster
    if not is_edge_cloud(cluster):
        return "the cluster has no server with site 'edge'"
    if not any(s.site == "cloud" and s.unlimited for s in cluster.servers):
        return "the cluster has no unlimited cloud server"
    if len(cluster.ps_types) != 1 or cluster.ps_types[0].demand.keys() != {PS_SLOT}:
        return f"the cluster must have exactly one PS type demanding only {PS_SLOT!r}"
    for wt in cluster.worker_types:
        if any(a not in (0, 1) for a in wt.demand.values()):
            return f"worker type {wt.id!r} must demand one unit of each of its worker_slot resources"
    for job in instance.jobs:
        if job.arch != "ps" or job.rigid or job.work is not None:
            return f"job {job.job_id!r} is not an elastic PS job (arch 'ps', no gpus/duration/work)"
    return None


EDGE_CLOUD_MODEL = Feature(
    "edge-cloud",
    "an edge-cloud cluster with worker_slot resources (edge servers, an unlimited cloud, PS jobs)",
    _edge_cloud_missing,
)


register(
    AlgorithmSpec(
        name="edge-cloud",
        kind="paper",
        summary="A_online: per-chunk greedy dispatch (eq. (5)), HAPRF worker queues, worker-level preemption.",
        semantics=(
            "At each arrival slot, each chunk of each arriving job (in arrival, then job-id order) goes to "
            "the qualified edge worker (its type is the job's one worker type) or the cloud with the "
            "smallest Q_jdsw of eq. (5); ties go to the first worker in cluster order, the cloud only "
            "when strictly smaller. Chunk processing times are whole slots, ceil(E_j B_j / n_j) with n_j "
            "of eq. (1); zeta_j = 1 (no gradient traffic) only when the first chunk goes to the cloud, "
            "in which case every chunk does (Alg. 2 lines 12-16); after a first edge dispatch the cloud's "
            "Q is recomputed with zeta_j = 0 (lines 17-20; the pseudo-code calls CALCULATEQ with d = d1, "
            "which would set zeta_j = 1 again; we follow the text). Each edge worker trains, in every "
            "slot, the first chunk of its queue (HAPRF: larger gamma_jd = n_j/(E_j D_j B_j) first, ties "
            "by dispatch order) whose data has arrived (r_j + upload delay of the server); a displaced "
            "running chunk is a worker-level preemption (report: chunk_preemptions; the job is listed in "
            "Decision.preempted when it keeps other workers). Cloud chunks start at r_j + the cloud's "
            "upload delay and are never preempted. Chunks never change worker. A_ps gives each running "
            "job one PS: the same as in the previous segment if it ran continuously, else a random one "
            "(seeded), weighted by free PS slots, on the edge for zeta_j = 0 jobs (a cloud PS only if "
            "every edge PS is taken: report ps_fallbacks_to_cloud) and in the cloud for zeta_j = 1. "
            "edge_only=true is A_online-E: no cloud candidate (a job whose worker type exists on no edge "
            "server still goes to the cloud: edge_only_fallbacks_to_cloud). Upload delays are per "
            "job and server: the job's `upload_delay` for that server (or its site), else the server's. "
            "storage=true is Sec. VI's extension: a chunk (u_j = chunk_gb) is dispatched only to servers whose "
            "storage (U_s = storage_gb) has room for it next to the chunks stored there, which stay from "
            "the job's arrival until their training ends; when no edge server has room the chunk goes to "
            "the cloud (also under edge_only: storage_fallbacks_to_cloud). On an instance with storage "
            "limits the result lists every chunk stored on a limited server (result field storage), "
            "whatever the parameter, and the validator checks it against U_s. Under a restart cost (the "
            "paper charges none; the engine charges every change of a job's worker set, as for every "
            "algorithm) the engine's progress is authoritative: a job whose planned chunks have all "
            "ended short of its work gets a make-up chunk of its remaining work plus the restart time on "
            "the worker that trained its last chunk (or in the cloud if that chunk ran there), in HAPRF "
            "order with the job's gamma; the chunks of a job the engine completed first are dropped "
            "(report: make_up_chunks, chunks_dropped; docs/algorithms-edge.md, Restart cost). With "
            "restarts free neither happens."
        ),
        reference="Edge-cloud paper (seeds/003) Sec. IV, Algs. 1-5, eqs. (1), (5)",
        factory="scheduling.algorithms.edge.online:make_edge_cloud",
        params=(
            Param("edge_only", bool, False, "A_online-E: dispatch to edge servers only."),
            Param("storage", bool, False, "Sec. VI: dispatch a chunk only to a server with storage room for it."),
        ),
        needs=(EDGE_CLOUD_MODEL,),
    )
)

register(
    AlgorithmSpec(
        name="tiresias-l",
        summary="Tiresias-L: 2D-LAS on attained GPU-time, all-or-nothing, whole-job suspend/resume.",
        semantics=(
            "The `tiresias` baseline (queues by attained GPU-time, FIFO by first start within a queue, "
            "fixed worker count per job by `worker_rule` as in fifo (default `drawn` in [workers_min, workers_max]; "
            "`request`: the trace's `gpu_request`, the paper's testbed rule), one PS, all-or-nothing "
            "placement, whole-job preemption; a resumed job may land on other servers, i.e. its data "
            "migrates for free) on the edge-cloud model, where a job becomes schedulable once its data "
            "can be on the nearest server, r_j + min_s Delta_js (optimistic for the baseline: it may then "
            "be placed on any server, including the cloud; the engine then holds it without progress until its "
            "data is on every server its workers use, r_j + Delta_js, as for every algorithm). "
            "Thresholds default to 100 and 1000 GPU-hours, for one-hour slots."
        ),
        reference="Gu et al., Tiresias (NSDI'19); edge-cloud paper (seeds/003) Sec. V-A baseline Tiresias-L",
        factory="scheduling.algorithms.edge.baselines:make_tiresias_l",
        check=check_worker_range,
        params=(
            *WORKER_PARAMS,
            Param("queue_thresholds", str, "360000,3600000", "Queue limits in GPU-seconds, comma-separated."),
        ),
        needs=(EDGE_CLOUD_MODEL,),
    )
)


register(
    AlgorithmSpec(
        name="batchsche",
        summary="BatchSche: batches of waiting jobs, each placed at least resource cost (edge or cloud).",
        semantics=(
            "When no job of the current batch is left, every arrived unfinished job forms the next batch. "
            "Each job of the batch, in arrival order, gets the worker count of `worker_rule` (as fifo; "
            "`most`: min(D_j, workers_max), this baseline's count before the rule was shared) of its type and "
            "one PS, either all on the cloud or all on edge servers (first fit, only if they fit now), "
            "whichever costs less: price x workers x (upload delay + run time), with edge price 1 and "
            "cloud price `cloud_price` (the cloud is cheap, as the paper notes). It starts once its data "
            "is uploaded (r_j + the largest upload delay of its servers) and keeps its placement until it "
            "completes (no preemption). A simplification of the TCC paper's cost-minimising batch "
            "schedule: the worker count is fixed instead of optimised."
        ),
        reference="Edge-cloud paper (seeds/003) Sec. V-A baseline BatchSche ([11], Zhou et al.)",
        factory="scheduling.algorithms.edge.baselines:make_batchsche",
        check=check_worker_range,
        params=(
            *WORKER_PARAMS,
            Param("cloud_price", float, 0.5, "Price of a cloud worker-slot relative to an edge one.", min=0.0),
        ),
        needs=(EDGE_CLOUD_MODEL,),
    )
)
