"""One job from one trace row (a CSV row unflattened, or a JSON object): ``job_from_row``.
Units are converted here, once: seconds -> slots (docs/formats.md, "Job trace").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType

from scheduling import gpu_types, records, status_replay
from scheduling.bounds import MAX_WORK
from scheduling.errors import InputError
from scheduling.model import SITES, Cluster, Job, Stage, Utility, frozen_amounts
from scheduling.records import record
from scheduling.schema import KNOWN_COLUMNS, STAGE_FIELDS, TRACE_COLUMNS, Field
from scheduling.values import amounts, integer, listed, no_nul, number, reader_of, shown, text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


def _per_type(value: Any, column: Field, known: frozenset[str], slot: float) -> dict[str, float]:
    """Seconds per type (or one number for every type) -> slots per type, "*" for any type."""
    field, read = column.name, _FIELD_READERS[column.name]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if k != "*" and k not in known:
                raise InputError(
                    f"unknown type {shown(k)} (cluster defines: {listed(sorted(known)) or 'none'})",
                    field=f"{field}.{k}",
                )
            out[str(k)] = read(v, f"{field}.{k}") / slot
        return out
    return {"*": read(value, field) / slot}


@record
class ClusterNames:
    """The names a trace row is checked against, as sets built once per cluster: a row costs time
    in its own size, not in the cluster's (a trace of 10^5 rows against 10^5 servers)."""

    resources: frozenset[str]
    worker_types: frozenset[str]
    ps_types: frozenset[str]
    delay_keys: frozenset[str]  # what an upload_delay object may name: server ids, sites, "*"

    @classmethod
    def of(cls, cluster: Cluster) -> ClusterNames:
        return cls(
            resources=frozenset(cluster.resource_names()),
            worker_types=frozenset(t.id for t in cluster.worker_types),
            ps_types=frozenset(t.id for t in cluster.ps_types) | {"*"},
            delay_keys=frozenset(s.id for s in cluster.servers) | set(SITES) | {"*"},
        )


def _given_columns(row: Mapping[str, Any], slot: float, names: ClusterNames) -> dict[str, Any] | None:
    """The Job fields of a valid row, read in the row's order (a row costs time in the columns it
    has), or None for an unknown column or a missing required one; raises on a bad value."""
    kw: dict[str, Any] = {"job_id": text(row.get("job_id"), "job_id")}
    for key, value in row.items():
        step = _BY_NAME.get(key)
        if step is None:
            if key in KNOWN_COLUMNS:  # job_id, read above; utility terms; columns of the whole trace
                continue
            return None
        mode, plain, read, column = step
        if mode is _UNLESS_BLANK and value in (None, ""):
            continue
        kw[key] = plain(value, key) if plain is not None else read(column, value, row, slot, names)
    for key, read, column in _ALWAYS_READ:
        if key not in kw:
            if column.required:
                return None
            kw[key] = read(column, None, row, slot, names)  # the utility, from the row's terms
    return kw


def _in_table_order(row: Mapping[str, Any], slot: float, names: ClusterNames) -> dict[str, Any]:
    """The Job fields of a row, read in the order of ``schema.TRACE_COLUMNS``: the first problem
    raised is the one of the first column that has one."""
    job_id = text(row.get("job_id"), "job_id")
    for key in row:
        if key not in KNOWN_COLUMNS:
            raise InputError(f"unknown field (known: {', '.join(sorted(KNOWN_COLUMNS))})", job=job_id, field=key)
    try:
        kw: dict[str, Any] = {"job_id": job_id}
        for key, mode, plain, read, column in _STEPS:
            if mode is _ALWAYS:
                value = row.get(key)
            elif mode is _UNLESS_BLANK:
                value = row.get(key)
                if value in (None, ""):
                    continue
            elif key in row:
                value = row[key]
            else:
                continue
            kw[key] = plain(value, key) if plain is not None else read(column, value, row, slot, names)
    except InputError as exc:
        raise InputError(exc.problem, job=job_id, field=exc.field) from None
    return kw


_ROW_KINDS = frozenset({"id", "utility_term", "stated"})
"""Kinds read outside the column loop: the id first (it names the job in every message), the utility
terms by the ``utility`` column, and the columns the trace reads as a whole (``slot_seconds``) or
only a status replay reads (``status``, by ``job_from_row``)."""


def job_from_row(row: Mapping[str, Any], cluster: Cluster, names: ClusterNames | None = None) -> Job:
    """One job from a trace row (CSV columns unflattened, or a JSON object); units per formats.md.
    A row with several problems is refused for the first column in the order of
    ``schema.TRACE_COLUMNS`` that has one (an unknown column first).
    ``names``: ``ClusterNames.of(cluster)``, passed by callers that load many rows."""
    slot = cluster.slot_seconds
    names = names or ClusterNames.of(cluster)
    try:
        kw = _given_columns(row, slot, names)
    except (InputError, ArithmeticError, TypeError, ValueError):  # whatever it is, as the table order meets it
        kw = None
    if kw is None:  # a problem: read again in table order, which names the first one
        kw = _in_table_order(row, slot, names)
    job_id = kw["job_id"]
    status = row.get("status")
    if status not in (None, ""):  # how the job ended, read by a status replay only (scheduling/status_replay.py)
        try:
            found = status_replay.outcome(no_nul(str(status), "status"))
        except InputError as exc:
            raise InputError(exc.problem, job=job_id, field=exc.field) from None
        if found is not None:
            kw["outcome"] = found
    if "duration" in kw and "gpus" not in kw:
        raise InputError("a job with a recorded duration also needs gpus", job=job_id, field="gpus")
    job = Job(**kw)
    if job.work_required > MAX_WORK:
        raise InputError(
            f"epochs x chunks x minibatches = {job.work_required:g} mini-batches, more than {MAX_WORK:g}",
            job=job_id,
            field="epochs",
        )
    return job


# The reader of each kind of column that is not read by its field's bounds alone (values.reader_of):
# (column, value, row, slot seconds, cluster names) -> the Job field.
_Reader = Callable[[Field, "Any", Mapping[str, "Any"], float, ClusterNames], "Any"]


def _bounded(column: Field, value: Any, row: Mapping[str, Any], slot: float, names: ClusterNames) -> Any:
    return _FIELD_READERS[column.name](value, column.name)


def _label(column: Field, value: Any, row: Mapping[str, Any], slot: float, names: ClusterNames) -> str:
    return no_nul(str(value), column.name)


def _seconds_per_type(column: Field, value: Any, row: Mapping[str, Any], slot: float, names: ClusterNames) -> Any:
    return frozen_amounts(_per_type(value, column, getattr(names, column.keys), slot))


def _amounts(column: Field, value: Any, row: Mapping[str, Any], slot: float, names: ClusterNames) -> Any:
    return frozen_amounts(amounts(value, column.name, getattr(names, column.keys)))


def _duration(column: Field, value: Any, row: Mapping[str, Any], slot: float, names: ClusterNames) -> int:
    """A recorded run time in seconds -> whole slots, rounded up (at least 1, at most ``column.maximum``)."""
    seconds = number(value, column.name, minimum=column.minimum, strict=column.strict, maximum=math.inf)
    slots = max(1, math.ceil(seconds / slot - 1e-9))
    if slots > column.maximum:
        raise InputError(f"{shown(value)} s is more than {column.maximum:g} slots of {slot:g} s", field=column.name)
    return slots


def _upload_delay(column: Field, value: Any, row: Mapping[str, Any], slot: float, names: ClusterNames) -> Any:
    return _upload_delays(value, getattr(names, column.keys), column)


def _gpu_speed(column: Field, value: Any, row: Mapping[str, Any], slot: float, names: ClusterNames) -> Any:
    return gpu_types.parse_job(value)  # speed factors per GPU type


def _utility(column: Field, value: Any, row: Mapping[str, Any], slot: float, names: ClusterNames) -> Utility:
    """The utility terms, from the ``utility`` object if the row has one, else from the row's columns."""
    src: Mapping[str, Any] = value if isinstance(value, Mapping) else row
    prefix = "utility." if isinstance(value, Mapping) else ""
    kw = {}
    for name, read in _UTILITY_TERMS:
        if src.get(name) not in (None, ""):
            kw[name] = read(src[name], prefix + name)
    return Utility(**kw)


def _stages(column: Field, value: Any, row: Mapping[str, Any], slot: float, names: ClusterNames) -> Any:
    if not isinstance(value, list):
        raise InputError("expected a list of stage objects", field="stages")
    out = []
    for i, s in enumerate(value):
        f = f"stages[{i}]"
        if not isinstance(s, Mapping):
            raise InputError("expected an object", field=f)
        got = s.get
        values = [read(got(name, fallback), f"{f}.{name}") for name, fallback, read in _STAGE_FIELDS]
        for k in _STAGE_SECONDS:  # seconds -> slots
            values[k] /= slot
        out.append(Stage(*values))  # STAGE_FIELDS are in the order of Stage's fields
    return tuple(out)


_READERS: dict[str, _Reader] = {
    "label": _label,
    "utility": _utility,
    "seconds_per_type": _seconds_per_type,
    "amounts": _amounts,
    "duration": _duration,
    "stages": _stages,
    "upload_delay": _upload_delay,
    "gpu_speed": _gpu_speed,
}
_BY_BOUNDS = frozenset({"integer", "number", "choice"})
"""Kinds read by the field's bounds or choices alone (values.reader_of)."""
_FIELD_READERS = {
    c.name: reader_of(c)
    for c in (*TRACE_COLUMNS, *STAGE_FIELDS)
    if c.kind in (*_BY_BOUNDS, "seconds", "utility_term", "seconds_per_type")
}
_ALWAYS, _UNLESS_BLANK, _IF_GIVEN = "always", "unless blank", "if given"
_STEPS: tuple[tuple[str, str, Callable[[Any, str], Any] | None, _Reader, Field], ...] = tuple(
    (
        c.name,
        _ALWAYS if c.required or c.kind == "utility" else _UNLESS_BLANK if c.blank else _IF_GIVEN,
        _FIELD_READERS[c.name] if c.kind in _BY_BOUNDS else None,
        _bounded if c.kind in _BY_BOUNDS else _READERS[c.kind],
        c,
    )
    for c in TRACE_COLUMNS
    if c.kind not in _ROW_KINDS
)
"""The columns job_from_row reads, in table order: (name, when it is read, its reader by bounds
(or None: another kind), its reader (for kinds read by bounds, the same), the column)."""
_BY_NAME = {key: (mode, plain, read, column) for key, mode, plain, read, column in _STEPS}
_ALWAYS_READ = tuple((key, read, column) for key, mode, _, read, column in _STEPS if mode is _ALWAYS)
_UTILITY_TERMS = tuple((c.name, _FIELD_READERS[c.name]) for c in TRACE_COLUMNS if c.kind == "utility_term")
assert tuple(g.name for g in STAGE_FIELDS) == records.names(Stage)  # read positionally
_STAGE_FIELDS = tuple((g.name, g.fallback, _FIELD_READERS[g.name]) for g in STAGE_FIELDS)
_STAGE_SECONDS = tuple(k for k, g in enumerate(STAGE_FIELDS) if g.kind == "seconds")


def _upload_delays(value: Any, known: frozenset[str], column: Field) -> Mapping[str, int]:
    """Delta_js in whole slots: one number for every server ("*"), or server id / site / "*" -> slots."""
    if not isinstance(value, Mapping):
        return MappingProxyType({"*": integer(value, "upload_delay", maximum=column.maximum)})
    out = {}
    for k, v in value.items():
        if k not in known:
            raise InputError(
                f"unknown server {k!r} (a server id of the cluster, a site {' or '.join(SITES)}, or *)",
                field=f"upload_delay.{k}",
            )
        out[str(k)] = integer(v, f"upload_delay.{k}", maximum=column.maximum)
    return MappingProxyType(out)
