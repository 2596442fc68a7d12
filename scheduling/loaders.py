"""Loaders for the cluster spec (JSON) and job traces (CSV or JSON); see docs/formats.md.

Every problem raises ``InputError`` naming the file, the line or job id, the field and what is
wrong. A file is parsed completely before anything is returned, so a malformed file never
half-loads. Units are converted once, on load: seconds -> slots, Gbps -> MB per slot.

This module reads trace files (CSV and JSON rows, the slot length a trace states); the parts live in
their own modules and are importable from here as before: scheduling.values (files and typed
values), scheduling.cluster_spec (the cluster spec), scheduling.job_rows (one job from a row, by the
column table of scheduling.schema), scheduling.plain_csv (the fast path of plain CSV traces) and
scheduling.feasibility (jobs that fit nowhere).
"""

from __future__ import annotations

import _csv as csv  # csv.reader and csv.Error are _csv's; csv.py imports re (start-up)
import io
import math
from collections.abc import Callable, Mapping

from scheduling.bounds import MAX_SLOTS
from scheduling.cluster_spec import cluster_from_dict, load_cluster, parse_cluster
from scheduling.errors import InputError
from scheduling.feasibility import Feasibility, check_job_fits, usable_worker_types
from scheduling.job_rows import ClusterNames, job_from_row
from scheduling.model import Cluster, Job
from scheduling.plain_csv import PlainCsv
from scheduling.schema import COLUMNS, REQUIRED_COLUMNS
from scheduling.values import (
    MAX_INPUT_BYTES,
    MAX_UPLOAD_BYTES,
    amounts,
    check_strings,
    choice,
    decode,
    first_duplicate,
    integer,
    listed,
    no_nul,
    number,
    parse_json,
    read_text,
    shown,
    text,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


__all__ = [
    "CHECK_EVERY",
    "MAX_INPUT_BYTES",
    "MAX_UPLOAD_BYTES",
    "ClusterNames",
    "Feasibility",
    "amounts",
    "check_job_fits",
    "check_strings",
    "choice",
    "cluster_from_dict",
    "decode",
    "first_duplicate",
    "integer",
    "job_from_row",
    "load_cluster",
    "load_trace",
    "no_nul",
    "number",
    "parse_cluster",
    "parse_json",
    "parse_trace",
    "read_text",
    "text",
    "usable_worker_types",
]


def load_trace(
    path: Path | str, cluster: Cluster, name: str | None = None, *, convert_slots: bool = False
) -> tuple[Job, ...]:
    label = name or str(path)
    content = read_text(path, label)
    fmt = "json" if str(name or path).lower().endswith(".json") else "csv"
    return parse_trace(content, cluster, label, fmt, convert_slots=convert_slots)


CHECK_EVERY = 1000
"""Rows between two calls of ``parse_trace``'s ``checkpoint``."""


def parse_trace(
    content: str,
    cluster: Cluster,
    label: str = "trace.csv",
    fmt: str = "csv",
    checkpoint: Callable[[], None] | None = None,
    *,
    convert_slots: bool = False,
) -> tuple[Job, ...]:
    """The jobs of a trace, for ``cluster``. A trace that states its ``slot_seconds`` (docs/formats.md,
    "Slot length") must match the cluster's: else it is refused, or, with ``convert_slots``, its
    slot-valued fields are converted to the cluster's slots. ``checkpoint`` (optional) is called every
    CHECK_EVERY rows and may raise to stop a long load (a worker's run cancelled meanwhile)."""
    fast: PlainCsv | None = None  # reads the rows of a plain CSV trace (rows are then lists of values)
    rows: list[tuple[int, Any]]
    if fmt == "json":
        rows = _json_rows(content, label)
        stated = _stated_slots(rows)
    else:
        header, table = _csv_table(content, label)
        # a NUL (decode() refuses it; text handed to parse_trace directly may hold one): the general path names it
        fast = PlainCsv.of(header, cluster) if "\x00" not in content else None
        if fast is not None:
            rows, stated = table, fast.stated_slots(table)
        else:
            rows = [(line, _csv_dict(header, values)) for line, values in table]
            stated = _stated_slots(rows)

    def as_dict(row: Any) -> dict[str, Any]:
        return _csv_dict(header, row) if fast is not None else row

    trace_slot = _trace_slot_seconds(stated, cluster, label, convert_slots)
    if trace_slot is not None:  # rare: converted on the general path
        dicts = [(line, as_dict(row)) for line, row in rows]
        rows, fast = [(line, _converted_row(row, trace_slot, cluster.slot_seconds)) for line, row in dicts], None
    jobs: list[Job] = []
    seen: dict[str, int] = {}
    names = ClusterNames.of(cluster)  # once per trace, not once per row
    feasibility = Feasibility(cluster)
    for k, (line, row) in enumerate(rows):
        if checkpoint is not None and k % CHECK_EVERY == 0:
            checkpoint()
        try:
            job = fast.job(row) if fast is not None else None
            if job is None:  # the general path, also for the rows the plain path leaves to it
                job = job_from_row(as_dict(row), cluster, names)
            check_job_fits(job, cluster, feasibility)
        except InputError as exc:
            raise InputError(
                exc.problem, file=label, line=line, job=exc.job or _row_id(as_dict(row)), field=exc.field
            ) from None
        if job.job_id in seen:
            raise InputError(
                f"duplicate job id (first on line {seen[job.job_id]})",
                file=label,
                line=line,
                job=job.job_id,
                field="job_id",
            )
        seen[job.job_id] = line
        jobs.append(job)
    if not jobs:
        raise InputError("the trace has no jobs", file=label)
    return tuple(sorted(jobs, key=lambda j: (j.arrival, j.job_id)))


def _stated_slots(rows: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, Any, str | None]]:
    """(line, value, job id) of each row that states ``slot_seconds``."""
    return [
        (line, row["slot_seconds"], _row_id(row)) for line, row in rows if row.get("slot_seconds") not in (None, "")
    ]


def _trace_slot_seconds(
    rows: list[tuple[int, Any, str | None]], cluster: Cluster, label: str, convert: bool
) -> float | None:
    """The trace's slot length when it differs from the cluster's and ``convert`` asks to convert;
    None when it matches or is not stated. ``rows``: (line, value, job id) of the rows that state
    one. A mismatch without ``convert`` is an InputError."""
    stated: tuple[int, float] | None = None
    stated_slot = COLUMNS["slot_seconds"]
    last: Any = None  # the raw value last read: traces repeat one value on every row
    for line, raw, job_id in rows:
        if stated is not None and type(raw) is type(last) and raw == last:
            continue  # the same value (type too: True == 1) reads the same and agrees again
        last = raw
        try:
            value = number(
                raw, "slot_seconds", minimum=stated_slot.minimum, strict=stated_slot.strict, maximum=stated_slot.maximum
            )
        except InputError as exc:
            raise InputError(exc.problem, file=label, line=line, job=job_id, field="slot_seconds") from None
        if stated is None:
            stated = (line, value)
        elif not math.isclose(value, stated[1], rel_tol=1e-9):
            raise InputError(
                f"{value:g} s differs from the {stated[1]:g} s stated on line {stated[0]}: one slot length per trace",
                file=label,
                line=line,
                job=job_id,
                field="slot_seconds",
            )
    if stated is None or math.isclose(stated[1], cluster.slot_seconds, rel_tol=1e-9):
        return None
    if not convert:
        raise InputError(
            f"the trace's arrivals are in slots of {stated[1]:g} s, the cluster's slots are "
            f"{cluster.slot_seconds:g} s: import the raw trace again with --slot-seconds "
            f"{cluster.slot_seconds:g}, use a cluster with slot_seconds {stated[1]:g}, or convert the "
            "trace's slots explicitly (CLI --convert-slots)",
            file=label,
            line=stated[0],
            field="slot_seconds",
        )
    return stated[1]


def _converted_row(row: dict[str, Any], old: float, new: float) -> dict[str, Any]:
    """A row's slot-valued fields from slots of ``old`` seconds to slots of ``new`` seconds:
    arrival rounded down (as the importer does), upload delays rounded up, the utility's target
    scaled and its decay (per slot) scaled inversely. Fields in seconds need nothing."""
    factor = old / new
    out = dict(row)
    try:
        out["arrival"] = math.floor(integer(row.get("arrival"), "arrival", maximum=MAX_SLOTS) * factor + 1e-9)
        nested = isinstance(row.get("utility"), Mapping)
        src: dict[str, Any] = dict(row["utility"]) if nested else out
        if src.get("target") not in (None, ""):
            src["target"] = number(src["target"], "target") * factor
        if src.get("decay") not in (None, ""):
            src["decay"] = number(src["decay"], "decay") / factor
        if nested:
            out["utility"] = src
        delays = row.get("upload_delay")
        if isinstance(delays, Mapping):
            out["upload_delay"] = {k: _slots_up(v, factor) for k, v in delays.items()}
        elif delays not in (None, ""):
            out["upload_delay"] = _slots_up(delays, factor)
    except InputError as exc:
        raise InputError(exc.problem, job=_row_id(row), field=exc.field) from None
    return out


def _slots_up(value: Any, factor: float) -> int:
    return math.ceil(integer(value, "upload_delay", maximum=MAX_SLOTS) * factor - 1e-9)


def _row_id(row: Mapping[str, Any]) -> str | None:
    v = row.get("job_id")
    return None if v in (None, "") else str(v)


def _csv_table(content: str, label: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the (line, values) of each non-blank row, every name and value stripped,
    after checking the header and each row's number of values."""
    reader = csv.reader(io.StringIO(content))
    try:
        header = next(reader)
    except (StopIteration, csv.Error) as exc:
        raise InputError(f"cannot read the CSV header ({exc})", file=label, line=1) from None
    header = [h.strip() for h in header]
    named = [h for h in header if h]  # empty names (trailing commas) are refused only if a row fills them
    if (duplicate := first_duplicate(named)) is not None:
        raise InputError(f"duplicate column {shown(duplicate)}", file=label, line=1, field=duplicate[:80])
    columns = set(header)
    for required in REQUIRED_COLUMNS:
        if required not in columns:
            raise InputError(
                f"missing column {required!r} (columns: {listed(header)})", file=label, line=1, field=required
            )
    rows = []
    width = len(header)
    try:
        for row in reader:
            values = [c.strip() for c in row]
            if not any(values):
                continue
            if len(values) != width:
                raise InputError(f"{len(values)} values for {width} columns", file=label, line=reader.line_num)
            rows.append((reader.line_num, values))
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc})", file=label, line=reader.line_num) from None
    return header, rows


def _csv_dict(header: list[str], values: list[str]) -> dict[str, Any]:
    """One CSV row as job_from_row reads it: empty values left out, "a.b" columns nested."""
    return _unflatten({h: v for h, v in zip(header, values, strict=True) if v})


def _unflatten(flat: Mapping[str, str]) -> dict[str, Any]:
    """CSV columns "a.b" become nested {"a": {"b": ...}} (per-type times, per-job demands)."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        if "." in key:
            head, tail = key.split(".", 1)
            sub = out.setdefault(head, {})
            if not isinstance(sub, dict):  # scalar column and per-key column side by side
                sub = out[head] = {"*": sub}
            sub[tail] = value
        elif isinstance(out.get(key), dict):
            out[key]["*"] = value
        else:
            out[key] = value
    return out


def _json_rows(content: str, label: str) -> list[tuple[int, dict[str, Any]]]:
    doc = parse_json(content, label)
    shared: dict[str, Any] = {}
    if isinstance(doc, Mapping) and isinstance(doc.get("jobs"), list):
        if doc.get("slot_seconds") is not None:  # {"slot_seconds": S, "jobs": [...]}: for every job
            shared["slot_seconds"] = doc["slot_seconds"]
        doc = doc["jobs"]
    if not isinstance(doc, list):
        raise InputError('expected a list of job objects (or {"jobs": [...]})', file=label)
    rows = []
    for i, row in enumerate(doc):
        if not isinstance(row, Mapping):
            raise InputError(f"job #{i + 1} is not an object", file=label)
        try:
            check_strings(row)
        except InputError as exc:
            job = None if (exc.field or "").startswith("job_id") else _row_id(row)
            raise InputError(exc.problem, file=label, line=i + 1, job=job, field=exc.field) from None
        rows.append((i + 1, {**shared, **row}))
    return rows
