"""The input schema: one declarative table of the job trace's columns (and of a stage object's
fields), and the field tables of the cluster spec (its top level, a server entry, a worker or PS
type). Each entry states a field's name, what kind of value it holds, its bounds or allowed values,
its unit, its default and its meaning.

The table drives the readers: ``scheduling.job_rows.job_from_row`` reads a trace row column by
column in table order, ``scheduling.plain_csv`` builds its fast readers from the same bounds, and
``scheduling.cluster_spec`` reads the spec's plain fields by their entries; so their messages
("must be >= 1", "is not one of ps, allreduce, pipeline", "unknown field (known: ...)") state the
bounds and names written here. docs/formats.md's field tables are generated from it
(``make docs``; tests/test_docs.py fails when they are stale), as docs/algorithms.md is from the
registry.

This module holds data only and imports only the bounds, the model's constants and ``records``:
every ``python -m scheduling simulate`` loads it.
"""

from __future__ import annotations

from scheduling.bounds import (
    MAX_AMOUNT,
    MAX_RESTART_SECONDS,
    MAX_SERVERS,
    MAX_SLOTS,
    MAX_WORK,
    MAX_WORKERS,
    SLOT_SECONDS,
    STEP_SECONDS,
)
from scheduling.model import ARCHITECTURES, POOLS, SITES
from scheduling.records import record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


KINDS = {
    "id": "a non-empty string, required",
    "integer": "a whole number within [minimum, maximum]",
    "number": "a finite number within [minimum, maximum] (> minimum when strict)",
    "seconds": "a number of seconds within [minimum, maximum], read as slots",
    "choice": "one of choices",
    "flag": "a JSON boolean",
    "label": "a string; empty means not given",
    "utility": "the nested `utility` object holding the utility terms",
    "utility_term": "a number of the sigmoid utility, as a column or inside `utility`",
    "seconds_per_type": "seconds (within [minimum, maximum]) as one number or per type (`name.<type>`); read as slots",
    "amounts": "resource -> amount, each within [minimum, maximum]",
    "duration": "seconds > minimum, read as whole slots rounded up, at most maximum slots",
    "stages": "a list of stage objects (STAGE_FIELDS)",
    "upload_delay": "slots, one number or per server id / site / `*`",
    "gpu_speed": "GPU type -> speed factor (scheduling.gpu_types)",
    "stated": "accepted; read by the trace as a whole or by nobody",
    "structure": "a nested value read by its own function (see the meaning)",
}
"""What each ``kind`` of field holds (the readers in scheduling.job_rows and scheduling.values)."""


@record
class Field:
    """One field of an input file. ``minimum``/``maximum``/``strict`` bound a numeric kind (and
    ``maximum`` a duration's slots); ``choices`` list a choice's values; ``keys`` name what a
    per-key field's keys are checked against (a ``ClusterNames`` attribute); ``blank`` makes a null
    or empty value mean "not given" (else it is read, and refused); ``fallback`` is the value read
    when the field is left out, for fields read with one (stage, server, type and some cluster
    fields); ``unit`` (trace columns) or ``meaning`` (spec fields) may hold ``{range}``, where the
    docs put the bounds or choices."""

    name: str
    kind: str
    unit: str
    meaning: str
    default: str = "none"
    required: bool = False
    minimum: float | None = 0.0
    maximum: float = MAX_AMOUNT
    strict: bool = False
    choices: tuple[str, ...] = ()
    keys: str = ""
    blank: bool = False
    fallback: Any = None
    source: str = ""
    """The paper (section, equation, symbol) or the system the field comes from, if any."""


# ---------------------------------------------------------------------------------------------
# Job trace: one row (CSV) or object (JSON) per job. Table order is reading order: a row with
# several bad values is refused for the first of them in this order.

TRACE_COLUMNS: tuple[Field, ...] = (
    Field("job_id", "id", "string", "unique id", "required", required=True),
    Field(
        "arrival", "integer", "slot", "a_j: the slot the job arrives at", "required", required=True, maximum=MAX_SLOTS
    ),
    Field("arch", "choice", "", "distributed training architecture", "`ps`", choices=ARCHITECTURES),
    Field("weight", "number", "", "w_j in Σ w_j c_j", "1", source="Zhou et al. eq. (2)"),
    Field("utility", "utility", "object", "`{priority, decay, target}`: the utility terms below, nested"),
    Field(
        "priority",
        "utility_term",
        "",
        "sigmoid utility f(jct) = priority / (1 + exp(decay (jct - target))); also `utility.priority`",
        "1",
        blank=True,
        source="OASiS Sec. V-A",
    ),
    Field(
        "decay",
        "utility_term",
        "per slot",
        "the utility's decay; 0 = time-insensitive (constant priority/2); also `utility.decay`",
        "0",
        blank=True,
        source="OASiS Sec. V-A",
    ),
    Field(
        "target",
        "utility_term",
        "slots",
        "the utility's target JCT; also `utility.target`",
        "0",
        blank=True,
        source="OASiS Sec. V-A",
    ),
    Field("epochs", "integer", "", "E_j, training epochs", "1", minimum=1, maximum=MAX_WORK),
    Field(
        "chunks",
        "integer",
        "",
        "D_j data chunks; also the most workers the job may use",
        "1",
        minimum=1,
        maximum=MAX_WORKERS,
        source="Zhou et al. (2g)",
    ),
    Field("minibatches", "integer", "", "K_j mini-batches per chunk", "1", minimum=1, maximum=MAX_WORK),
    Field(
        "batch_time",
        "seconds_per_type",
        "**seconds** ({range}), a number or per worker type (`batch_time.<type>`, `*` = any type)",
        "v_jm: time for one worker to train one mini-batch. A job that names types may only use those types. "
        "For `pipeline` jobs: the time of one training iteration of the whole job",
        "1 slot",
        minimum=STEP_SECONDS[0],
        maximum=STEP_SECONDS[1],
        keys="worker_types",
    ),
    Field(
        "ps_update",
        "seconds_per_type",
        "**seconds** ({range}), a number or per PS type (`ps_update.<type>`, `*` = any type)",
        "U_j^p: PS update time per iteration (`ps`); U_j of eq. (14) (`allreduce`, use the plain number)",
        "0",
        minimum=STEP_SECONDS[0],
        maximum=STEP_SECONDS[1],
        keys="ps_types",
    ),
    Field("gradient_mb", "number", "MB", "π_j: gradients each worker exchanges per mini-batch", "0"),
    Field(
        "worker_demand",
        "amounts",
        "resource units (`bw` in Gbps), per resource (`worker_demand.<resource>`)",
        "a per-job worker demand instead of the worker type's; its `bw` is the worker bandwidth b_i",
        keys="resources",
        source="OASiS",
    ),
    Field(
        "ps_demand",
        "amounts",
        "resource units (`bw` in Gbps), per resource (`ps_demand.<resource>`)",
        "a per-job PS demand",
        keys="resources",
        source="OASiS",
    ),
    Field(
        "gpus",
        "integer",
        "",
        "GPUs requested (rigid jobs; pipeline jobs: GPUs = workers needed)",
        minimum=1,
        maximum=MAX_WORKERS,
    ),
    Field(
        "gpu_request",
        "integer",
        "",
        "GPUs (one-GPU workers) the owner of an elastic job requested in the source trace: the fixed worker "
        "count of the fixed-configuration baselines under `worker_rule=request` (docs/algorithms-edge.md; the "
        "default rule is `drawn`); elastic algorithms are not bound by it. Not the rigid `gpus`",
        minimum=1,
        maximum=MAX_WORKERS,
    ),
    Field(
        "duration",
        "duration",
        "**seconds**",
        "recorded run time of a production job; rounded **up** to whole slots (at least 1). Requires `gpus`",
        strict=True,
        maximum=MAX_SLOTS,
    ),
    Field("iterations", "integer", "", "true training iterations", maximum=MAX_WORK, source="A-SRPT"),
    Field("predicted_iterations", "integer", "", "predicted iterations", maximum=MAX_WORK, source="A-SRPT"),
    Field(
        "work", "number", "work units", "overrides the derived amount of work (below)", strict=True, maximum=MAX_WORK
    ),
    Field(
        "stages",
        "stages",
        "JSON only: a list of stage objects (below)",
        "pipeline stages",
        "`[]`",
        source="A-SRPT Sec. III",
    ),
    Field(
        "chunk_gb",
        "number",
        "GB",
        "u_j: storage one data chunk of the job occupies on the server it is dispatched to",
        "none (no storage needed)",
        strict=True,
        source="edge-cloud paper Sec. VI",
    ),
    Field(
        "upload_delay",
        "upload_delay",
        "**slots**, integer {range}: a number, or per server (`upload_delay.<server id>`, `upload_delay.edge` / "
        "`upload_delay.cloud` for every server of that site, `*` for any)",
        "Δ↑_js: slots to upload one data chunk of this job to that server. Looked up by server id, then site, "
        "then `*`; a server the job names nowhere keeps the server's own `upload_delay` (cluster spec). Unknown "
        "server ids are errors",
        "the server's",
        maximum=MAX_SLOTS,
        keys="delay_keys",
        source="edge-cloud paper",
    ),
    Field(
        "restart_seconds",
        "number",
        "**seconds**",
        "the job's own restart cost (e.g. from its checkpoint size): replaces the cluster's `restart_costs` row "
        'and the constant `restart_seconds` for this job. An empty cell: not given. See "Per-job restart costs"',
        maximum=MAX_RESTART_SECONDS,
        blank=True,
    ),
    Field(
        "checkpoint_gb",
        "number",
        "GB",
        "the job's checkpoint size: with the cluster's `checkpoint_gbps`, its restart cost (\"Per-job restart costs\")",
        blank=True,
    ),
    Field(
        "gpu_speed",
        "gpu_speed",
        "per GPU type (`gpu_speed.<type>`), factor > 0 and <= 1,000",
        "the job's speed factor on GPUs of that type (rigid jobs; see \"GPU types\"); replaces the cluster's "
        "`gpu_speeds` for that type",
    ),
    Field("group", "label", "string", "recurring-job group id", blank=True),
    Field("user", "label", "string", "user id", blank=True),
    Field(
        "model",
        "label",
        "string",
        "model name (e.g. `ResNet152`); keys the cluster's `restart_costs` and `gpu_speeds` rows, else informational",
        blank=True,
    ),
    Field(
        "status",
        "stated",
        "string",
        "how the job ended in the source trace (imports carry the raw trace's status): read only by a status "
        'replay (cluster `replay_status`; "Status replay"), else ignored',
    ),
    Field(
        "slot_seconds",
        "stated",
        "seconds ({range}), the same in every row",
        "the slot length the trace's slot-valued fields (`arrival`, `upload_delay`, `target`, `decay`) are written "
        'in; see "Slot length of a trace" below. JSON may also give it once: `{"slot_seconds": 60, "jobs": [...]}`',
        "not stated: the cluster's",
        strict=True,
        maximum=SLOT_SECONDS[1],
    ),
)
"""The job trace's columns (docs/formats.md, "Job trace"), in the order a row is read."""

COLUMNS = {c.name: c for c in TRACE_COLUMNS}
REQUIRED_COLUMNS = tuple(c.name for c in TRACE_COLUMNS if c.required)
KNOWN_COLUMNS = frozenset(COLUMNS)
"""Every column a trace may have; any other is an error ("unknown field")."""

STAGE_FIELDS: tuple[Field, ...] = (
    Field("replicas", "integer", "", "k_(i,s): replicas of the stage", "1", minimum=1, maximum=MAX_WORKERS, fallback=1),
    Field(
        "forward",
        "seconds",
        "**seconds**",
        "forward time per mini-batch per replica",
        "0",
        maximum=STEP_SECONDS[1],
        fallback=0,
    ),
    Field(
        "backward",
        "seconds",
        "**seconds**",
        "backward time per mini-batch per replica",
        "0",
        maximum=STEP_SECONDS[1],
        fallback=0,
    ),
    Field(
        "activation_in", "number", "MB", "activations received from the previous stage per mini-batch", "0", fallback=0
    ),
    Field("activation_out", "number", "MB", "activations sent to the next stage per mini-batch", "0", fallback=0),
    Field("params", "number", "MB", "parameters of the stage", "0", fallback=0),
)
"""The fields of one object of a trace row's ``stages`` (A-SRPT Sec. III)."""

# ---------------------------------------------------------------------------------------------
# Cluster spec (JSON). A "{range}" in a meaning places the field's bounds (else they follow it).

CLUSTER_FIELDS: tuple[Field, ...] = (
    Field(
        "slot_seconds",
        "number",
        "seconds",
        'wall-clock length of one slot, seconds ({range}; see "Bounds" below)',
        "",
        required=True,
        minimum=SLOT_SECONDS[0],
        maximum=SLOT_SECONDS[1],
    ),
    Field(
        "resources",
        "structure",
        "",
        'the resource dimensions: a list of names (`["gpu", "cpu"]`), a list of `{name, unit}`, or an object '
        "`{name: unit}`; at least one, no duplicates. The unit is a label (e.g. `GPU`, `vCPU`, `GB`, `Gbps`)",
        "",
        required=True,
    ),
    Field("servers", "structure", "", "non-empty list of server entries (below)", "", required=True),
    Field(
        "worker_types",
        "structure",
        "",
        "list of `{id, demand, bandwidth_gbps}` (below): a worker type with its per-instance `demand` and "
        "bandwidth b_m",
        "`[]`",
        fallback=[],
        source="Zhou et al.'s M types",
    ),
    Field(
        "ps_types",
        "structure",
        "",
        "the same for parameter-server types, bandwidth B_p",
        "`[]`",
        fallback=[],
        source="Zhou et al.'s P types",
    ),
    Field(
        "horizon",
        "integer",
        "slots",
        "T: the run stops at this slot (an integer, {range}) even if jobs are unfinished",
        "none: run until every job is done",
        minimum=1,
        maximum=MAX_SLOTS,
    ),
    Field(
        "network",
        "structure",
        "",
        'free-form named numbers (e.g. `{"inter_gbps": 10}`) for algorithms that want them',
        "`{}`",
        minimum=None,
        fallback={},
    ),
    Field(
        "restart_seconds",
        "number",
        "seconds",
        'restart cost: seconds a job loses each time it restarts on another allocation ({range}; see "Restart '
        'cost" below). A run may override it (`simulate`/`compare --restart-seconds S`, '
        "`scheduling.api.run(restart_seconds=...)`)",
        "0",
        maximum=MAX_RESTART_SECONDS,
        fallback=0,
    ),
    Field(
        "restart_costs",
        "structure",
        "",
        "per-job restart costs keyed by model and GPU count: a list of `{model, gpus, seconds}` (a row without "
        "`model` is for any model, without `gpus` for any GPU count; at least one of them; no two rows for the "
        'same key; `seconds` 0 to 604,800). See "Per-job restart costs" below',
    ),
    Field(
        "failures",
        "structure",
        "",
        "a failure trace: a list of `{server, start, end}`, the (expanded) server id down over the slots "
        '[start, end); start < end; no two failures of one server overlap. See "Failures" below',
    ),
    Field(
        "failure_model",
        "structure",
        "",
        "seeded failures per server type: `{seed, until, servers: [{gpu_model, mtbf_hours, repair_hours}]}`, "
        'added to `failures`. See "Failures"',
    ),
    Field(
        "checkpoint_seconds",
        "number",
        "seconds",
        "with `failures`: a running job saves its state this often (rounded up to whole slots; {range}). "
        'See "Failures"',
        "0: only when its allocation changes",
        maximum=MAX_RESTART_SECONDS,
        fallback=0,
    ),
    Field(
        "checkpoint_gbps",
        "number",
        "GB/s",
        "GB/s at which a restart reloads a job's checkpoint ({range}): a job with `checkpoint_gb` pays "
        '`checkpoint_gb` / `checkpoint_gbps` seconds per restart ("Per-job restart costs")',
        "0: sizes unused",
        maximum=1e6,
        fallback=0,
    ),
    Field(
        "replay_status",
        "flag",
        "",
        "`true`: replay the trace's recorded job outcomes: a job whose `status` is a failure or a kill ends so "
        'once its work is done instead of completing. See "Status replay" below',
        "`false`",
        fallback=False,
    ),
    Field(
        "gpu_speeds",
        "structure",
        "",
        'speed factors of rigid jobs per GPU type: `{model or "*": {gpu type: factor}}`, factor > 0 and <= 1,000, '
        'the GPU type being a server\'s `gpu_model`. See "GPU types" below',
    ),
)
"""The cluster spec's top-level fields (docs/formats.md, "Cluster spec"); other keys are ignored."""

SERVER_FIELDS: tuple[Field, ...] = (
    Field("id", "id", "", "server id (string)", "", required=True),
    Field(
        "capacity",
        "amounts",
        "",
        "resource -> amount available in every slot (declared resources only; a resource left out has capacity "
        "0; {range}). May be `{}` only when `unlimited`",
        "",
        required=True,
    ),
    Field(
        "count",
        "integer",
        "",
        "repeat the entry: `count: N > 1` expands into N servers with ids `<id>-0` ... `<id>-(N-1)`; with "
        "`count: 1` the id is kept as is. Expanded ids must be unique; at most {maximum} servers in all",
        "1",
        minimum=1,
        maximum=MAX_SERVERS,
        fallback=1,
    ),
    Field(
        "pool",
        "choice",
        "",
        "{range}: which roles may be placed here (OASiS keeps workers and PSs on separate server sets)",
        "`any`",
        choices=POOLS,
        fallback="any",
    ),
    Field("site", "choice", "", "{range} (edge-cloud paper)", "`cloud`", choices=SITES, fallback="cloud"),
    Field(
        "unlimited",
        "flag",
        "",
        "capacity is never exhausted (the edge-cloud paper's cloud); not counted in utilisation. A JSON boolean "
        '(`true`/`false`; a string such as `"false"` is an error)',
        "`false`",
        fallback=False,
    ),
    Field(
        "upload_delay",
        "integer",
        "slots",
        "slots needed to upload a job's data to this server before it can train here (integer {range})",
        "0",
        maximum=MAX_SLOTS,
        fallback=0,
    ),
    Field(
        "storage_gb",
        "number",
        "GB",
        "U_s of the edge-cloud paper's Sec. VI: GB of data chunks the server can store ({range}); omitted = "
        "unlimited. Limits dispatching only for algorithms that honour it (`edge-cloud` with `storage=true`); the "
        'validator checks every result against it (see "Storage" below)',
        "unlimited",
        strict=True,
    ),
    Field("nic_bw_gbps", "number", "Gbps", "NIC bandwidth, Gbps ({range})", source="A-SRPT"),
    Field("intra_bw_gbps", "number", "Gbps", "intra-server (NVLink/PCIe) bandwidth, Gbps ({range})", source="A-SRPT"),
    Field(
        "gpu_model",
        "label",
        "",
        "GPU type name (imported node lists): the type `gpu_speeds` and a job's `gpu_speed` are keyed by; "
        "without them informational",
    ),
)
"""The fields of one entry of the cluster spec's ``servers``."""

TYPE_FIELDS: tuple[Field, ...] = (
    Field("id", "id", "", "type id (string), unique among the worker (or PS) types", "", required=True),
    Field(
        "demand",
        "amounts",
        "",
        "resource -> amount one instance of the type takes (declared resources only; {range})",
        "`{}`",
        fallback={},
    ),
    Field(
        "bandwidth_gbps",
        "number",
        "Gbps",
        "the bandwidth of one instance, b_m (worker types) or B_p (PS types), Gbps ({range})",
        "`demand.bw`, else 0",
    ),
)
"""The fields of one entry of the cluster spec's ``worker_types`` or ``ps_types``."""

CLUSTER = {f.name: f for f in CLUSTER_FIELDS}
SERVER = {f.name: f for f in SERVER_FIELDS}
TYPE = {f.name: f for f in TYPE_FIELDS}
REQUIRED_CLUSTER_FIELDS = tuple(f.name for f in CLUSTER_FIELDS if f.required)
