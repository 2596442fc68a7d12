"""Importers for raw production traces and node lists (docs/formats.md, "Imports").

* ``generic-gpu``: a raw GPU-job CSV (``job_id, submit_time, num_gpus, duration`` and optional
  ``user, group, status, model``; Philly as published needs no mapping) -> a job trace of rigid jobs
  with seeded elastic assumptions beside them;
* ``node-list``: a node-list CSV (``sn, cpu_milli, memory_mib, gpu, model``) -> a cluster spec.

Raw files are read with pandas, as text, and checked completely before anything is written; every
problem raises ``InputError`` naming the file, the line (the header is line 1), the column and what
is wrong. The output is written to a temporary file beside the target and renamed at the end, so a
failed import never leaves a partial file.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
import secrets
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from scheduling.errors import InputError
from scheduling.lazy import LazyModule
from scheduling.loaders import cluster_from_dict, decode

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported at its first use: the CLI starts without pandas

FORMATS: dict[str, str] = {
    "generic-gpu": "job_id, submit_time, num_gpus, duration (+ user, group, status, model) -> job trace",
    "node-list": "a node-list CSV (sn, cpu_milli, memory_mib, gpu, model) -> cluster spec",
}

DEFAULT_SLOT_SECONDS = 60.0
"""Slot length when ``slot_seconds`` is not given: one minute resolves Philly's median job (~19
minutes) into ~20 slots while its longest (~54 days) stays under 80,000 slots."""

MAX_RAW_BYTES = 1 << 30
"""Largest raw file accepted (1 GiB); the loaders' 32 MiB limit is for cluster specs and traces."""

NEVER_RAN = frozenset({"pending", "queued", "waiting", "submitted", "not_started", "unscheduled", "rejected"})
"""Statuses (case-insensitive) of jobs that never held GPUs; such rows are skipped and counted."""


def run(
    fmt: str,
    raw: Path,
    out: Path,
    *,
    seed: int = 0,
    mapping: Mapping[str, str] | None = None,
    slot_seconds: float | None = None,
    start: str | None = None,
    end: str | None = None,
    limit: int | None = None,
) -> str:
    """Import ``raw`` (format ``fmt``) into ``out``; return a one-line summary."""
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r} (known: {', '.join(sorted(FORMATS))})", field="--format")
    slot = DEFAULT_SLOT_SECONDS if slot_seconds is None else float(slot_seconds)
    if not math.isfinite(slot) or slot <= 0:
        raise InputError(f"{slot_seconds!r} must be a positive number of seconds", field="--slot-seconds")
    if limit is not None and limit < 1:
        raise InputError(f"{limit} must be at least 1", field="--limit")
    suffix = out.suffix.lower()
    allowed = (".json",) if fmt == "node-list" else (".csv", ".json")
    if suffix not in allowed:
        raise InputError(f"output must end in {' or '.join(allowed)}", file=str(out), field="--out")
    table = read_raw(raw)
    if fmt == "node-list":
        if start is not None or end is not None:
            raise InputError("a node list has no submit times to window", field="--start" if start else "--end")
        return _node_list(table, raw, out, mapping or {}, slot, limit)
    return _generic_gpu(table, raw, out, mapping or {}, slot, seed, start, end, limit)


# ---------------------------------------------------------------------------------------------
# Reading and checking raw columns


def read_raw(path: Path) -> pd.DataFrame:
    """The whole raw CSV as text cells (header names stripped), or InputError."""
    label = str(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", file=label) from None
    if size > MAX_RAW_BYTES:
        raise InputError(f"file is {size / 2**20:.0f} MiB, larger than the {MAX_RAW_BYTES >> 20} MiB limit", file=label)
    refuse_compressed(path, label)
    try:
        with warnings.catch_warnings():
            # index_col=False: never take a first column as the index (pandas does when a row has one
            # more field than the header, shifting every column); rows with extra fields only warn.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            # compression=None: the bytes uploaded are the bytes read, whatever the file's name
            # (pandas infers gzip/zip/bz2/xz/zstd from the suffix by default, with no bound on the
            # inflated size).
            table = pd.read_csv(
                path,
                dtype=str,
                keep_default_na=False,
                na_filter=False,
                encoding="utf-8-sig",
                index_col=False,
                compression=None,
            )
    except pd.errors.ParserWarning:
        raise _longer_row(path, label) from None
    except OSError as exc:  # a folder, no permission
        raise InputError(f"cannot read the file ({exc.strerror})", file=label) from None
    except pd.errors.EmptyDataError:
        raise InputError("file is empty", file=label) from None
    except pd.errors.ParserError as exc:
        found = re.search(r"line (\d+)", str(exc))
        raise InputError(
            f"malformed CSV ({str(exc).strip()})", file=label, line=int(found.group(1)) if found else None
        ) from None
    except UnicodeDecodeError:
        decode(path.read_bytes(), label)  # raises, naming the line of the first bad byte
        raise
    table.columns = [str(c).strip() for c in table.columns]
    if table.empty:
        raise InputError("the file has a header but no rows", file=label, line=2)
    return table.apply(lambda col: col.str.strip())


COMPRESSED_MAGIC = {
    b"\x1f\x8b": "gzip",
    b"PK\x03\x04": "zip",
    b"BZh": "bzip2",
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
    b"7z\xbc\xaf\x27\x1c": "7z",
}


def refuse_compressed(path: Path, label: str) -> None:
    """InputError for a compressed archive, recognised by its first bytes (not its name): raw
    traces are imported as the plain CSV text uploaded, so that the work done is bounded by the
    upload's size (a small archive may inflate to gigabytes)."""
    try:
        with path.open("rb") as f:
            head = f.read(8)
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", file=label) from None
    for magic, kind in COMPRESSED_MAGIC.items():
        if head.startswith(magic):
            raise InputError(
                f"a {kind}-compressed file: upload the uncompressed CSV (up to {MAX_RAW_BYTES >> 20} MiB)", file=label
            )


def _longer_row(path: Path, label: str) -> InputError:
    """The error for the first row with more fields than the header."""
    with path.open(encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f)
        width = len(next(reader))
        for row in reader:
            if len(row) > width:
                return InputError(f"{len(row)} values for {width} columns", file=label, line=reader.line_num)
    return InputError(f"a row has more values than the {width} columns", file=label)


def resolve_columns(
    table: pd.DataFrame,
    label: str,
    fields: Mapping[str, Sequence[str]],
    mapping: Mapping[str, str],
) -> dict[str, str]:
    """Our field name -> the raw column holding it: ``mapping`` first, then built-in aliases."""
    columns = list(table.columns)
    by_lower = {c.lower(): c for c in reversed(columns)}  # first occurrence wins
    out: dict[str, str] = {}
    for key, column in mapping.items():
        if key not in fields:
            raise InputError(f"unknown field {key!r} (fields: {', '.join(fields)})", field="--map")
        found = column if column in columns else by_lower.get(column.lower())
        if found is None:
            raise InputError(
                f"no column {column!r} for {key} (columns: {', '.join(columns)})", file=label, line=1, field=column
            )
        out[key] = found
    for key, aliases in fields.items():
        if key in out:
            continue
        hit = next((by_lower[a] for a in aliases if a in by_lower and by_lower[a] not in out.values()), None)
        if hit is not None:
            out[key] = hit
    return out


def _require(resolved: Mapping[str, str], field: str, label: str, columns: Sequence[str]) -> str:
    if field not in resolved:
        raise InputError(
            f"missing column for {field} (columns: {', '.join(columns)}); map one with --map {field}=COLUMN",
            file=label,
            line=1,
            field=field,
        )
    return resolved[field]


def _numbers(table: pd.DataFrame, column: str, label: str) -> np.ndarray:
    """A column as floats; InputError at the first empty, non-numeric or infinite cell."""
    text = table[column]
    values: np.ndarray = np.asarray(pd.to_numeric(text, errors="coerce"), dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.argmax(bad))
        cell = text.iloc[row]
        problem = "missing value" if cell == "" else f"{cell!r} is not a number"
        raise InputError(problem, file=label, line=row + 2, field=column)
    return values


def _submit_seconds(table: pd.DataFrame, column: str, label: str) -> tuple[np.ndarray, bool]:
    """Submit times as float seconds and whether they were datetimes (then: seconds since 1970, UTC)."""
    text = table[column]
    empty = (text == "").to_numpy()
    if empty.any():
        raise InputError("missing value", file=label, line=int(np.argmax(empty)) + 2, field=column)
    numeric: np.ndarray = np.asarray(pd.to_numeric(text, errors="coerce"), dtype=float)
    if np.isfinite(numeric[0]):
        bad = ~np.isfinite(numeric)
        if bad.any():
            row = int(np.argmax(bad))
            raise InputError(
                f"{text.iloc[row]!r} is not a number of seconds like line 2's", file=label, line=row + 2, field=column
            )
        return numeric, False
    stamps = pd.to_datetime(text, format="mixed", utc=True, errors="coerce")
    bad = stamps.isna().to_numpy()
    if bad.any():
        row = int(np.argmax(bad))
        raise InputError(
            f"{text.iloc[row]!r} is not a datetime or a number of seconds", file=label, line=row + 2, field=column
        )
    seconds = (stamps - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    return np.asarray(seconds, dtype=float), True


def _bound(value: str | None, flag: str, datetimes: bool, trace_start: float) -> float | None:
    """A --start/--end value in the submit times' scale: seconds from the trace start, or a datetime."""
    if value is None:
        return None
    try:
        return trace_start + float(value)
    except ValueError:
        pass
    if not datetimes:
        raise InputError(f"{value!r}: the submit times are numbers, so give seconds from the trace start", field=flag)
    stamp = pd.to_datetime(value, format="mixed", utc=True, errors="coerce")
    if pd.isna(stamp):
        raise InputError(f"{value!r} is neither seconds from the trace start nor a datetime", field=flag)
    return float((stamp - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1))


# ---------------------------------------------------------------------------------------------
# generic-gpu


GENERIC_FIELDS: dict[str, tuple[str, ...]] = {
    "job_id": ("job_id", "jobid", "job_name", "job", "name", "id"),
    "submit_time": ("submit_time", "submission_time", "submitted_time", "submit", "timestamp", "creation_time"),
    "num_gpus": ("num_gpus", "num_gpu", "gpu_num", "gpus", "gpu_count"),
    "duration": ("duration", "run_time", "runtime", "duration_s", "elapsed"),
    "user": ("user", "user_id", "user_name", "username"),
    "group": ("group", "group_id", "cluster", "vc", "virtual_cluster"),
    "status": ("status", "state", "job_status", "pod_phase"),
    "model": ("model", "model_name"),
}
"""Our field -> raw column names tried in order (case-insensitive). Philly's ``timestamp`` is the
submit time and its ``cluster`` (a virtual cluster, i.e. a team) the group."""


@dataclass(frozen=True)
class Profile:
    """A model profile assumed for jobs the trace gives no model for (one per group, seeded)."""

    name: str
    batch_seconds: float  # one mini-batch on a one-GPU worker, s
    minibatches: int  # mini-batches per data chunk
    gradient_mb: float  # gradients exchanged per mini-batch, MB (fp32 model size)
    update_seconds: float  # all-reduce/update time per iteration, s


PROFILES: tuple[Profile, ...] = (
    Profile("ResNet-50", 0.12, 100, 98, 0.02),
    Profile("VGG16", 0.20, 100, 528, 0.08),
    Profile("Inception-V3", 0.15, 100, 92, 0.02),
    Profile("BERT-base", 0.25, 50, 420, 0.06),
    Profile("Transformer", 0.30, 50, 250, 0.04),
    Profile("LSTM-LM", 0.08, 200, 150, 0.03),
    Profile("DeepSpeech2", 0.40, 50, 300, 0.05),
    Profile("GNMT", 0.35, 50, 530, 0.08),
)


def _profile(seed: int, key: str, model: str) -> Profile:
    """The trace's own model when it is a known profile, else one drawn per (seed, group key)."""
    for p in PROFILES:
        if p.name.lower() == model.lower():
            return p
    digest = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:16], 16)
    rng = np.random.default_rng([seed, digest])
    return PROFILES[int(rng.integers(len(PROFILES)))]


def _elastic_fields(profile: Profile, gpus: int, duration: float) -> dict[str, Any]:
    """Elastic fields whose ideal duration matches the trace's: ``gpus`` one-GPU all-reduce workers
    on one server train E_j * K_j mini-batches each, step = v + U (gpus-1)/gpus (speed.py)."""
    step = profile.batch_seconds + profile.update_seconds * (gpus - 1) / gpus
    per_worker = max(1, round(duration / step))
    minibatches = min(profile.minibatches, per_worker)
    return {
        "arch": "allreduce",
        "epochs": max(1, round(per_worker / minibatches)),
        "chunks": gpus,
        "minibatches": minibatches,
        "batch_time": profile.batch_seconds,
        "ps_update": profile.update_seconds,
        "gradient_mb": profile.gradient_mb,
    }


TRACE_COLUMNS = (
    "job_id",
    "arrival",
    "slot_seconds",  # the slot length the arrivals are written in (docs/formats.md, "Slot length")
    "gpus",
    "duration",
    "group",
    "user",
    "model",
    "status",
    "arch",
    "epochs",
    "chunks",
    "minibatches",
    "batch_time",
    "ps_update",
    "gradient_mb",
)


@dataclass(frozen=True)
class _Selected:
    """The rows of a generic GPU trace that become jobs (``rows``, in arrival order) and the columns
    read: what the import writes and what ``generic_gpu_arrays`` summarises."""

    cols: dict[str, str]
    submit: np.ndarray
    gpus: np.ndarray
    duration: np.ndarray
    text: dict[str, np.ndarray]
    ids: np.ndarray
    n_rows: int
    keep: np.ndarray
    never_ran: np.ndarray
    bad_duration: np.ndarray
    bad_gpus: np.ndarray
    rows: np.ndarray


def _generic_rows(
    table: pd.DataFrame,
    raw: Path,
    mapping: Mapping[str, str],
    start: str | None,
    end: str | None,
    limit: int | None,
) -> _Selected:
    label = str(raw)
    columns = list(table.columns)
    difference = _difference(mapping.get("duration", ""), columns, label)
    if difference is not None:  # --map duration=END-START: computed, not a column
        mapping = {k: v for k, v in mapping.items() if k != "duration"}
    cols = resolve_columns(table, label, GENERIC_FIELDS, mapping)
    submit_col = _require(cols, "submit_time", label, columns)
    gpus_col = _require(cols, "num_gpus", label, columns)
    submit, datetimes = _submit_seconds(table, submit_col, label)
    gpus = _numbers(table, gpus_col, label)
    if difference is not None:
        duration = _elapsed(table, *difference, label)
    else:
        duration = _numbers(table, _require(cols, "duration", label, columns), label)
    text = {f: table[c].to_numpy(dtype=object) for f, c in cols.items() if f in ("user", "group", "status", "model")}
    n_rows = len(table)

    # Skip rows of jobs that never ran or hold nothing, each counted under its first reason.
    status = np.array([str(s).strip().lower() for s in text["status"]]) if "status" in text else None
    never_ran = np.isin(status, list(NEVER_RAN)) if status is not None else np.zeros(n_rows, dtype=bool)
    bad_duration = ~never_ran & (duration <= 0)
    bad_gpus = ~never_ran & ~bad_duration & (gpus <= 0)
    keep = ~(never_ran | bad_duration | bad_gpus)

    if "job_id" in cols:
        ids = table[cols["job_id"]].to_numpy(dtype=object)
        _check_ids(ids, keep, label, cols["job_id"])
    else:
        prefix = re.sub(r"[^a-z0-9]+", "-", raw.stem.lower()).strip("-") or "job"
        width = max(6, len(str(n_rows)))
        ids = np.array([f"{prefix}-{k + 1:0{width}d}" for k in range(n_rows)], dtype=object)

    trace_start = float(submit.min())
    lo = _bound(start, "--start", datetimes, trace_start)
    hi = _bound(end, "--end", datetimes, trace_start)
    rows = np.flatnonzero(keep)
    rows = rows[np.argsort(submit[rows], kind="stable")]
    in_window = np.ones(len(rows), dtype=bool)
    if lo is not None:
        in_window &= submit[rows] >= lo
    if hi is not None:
        in_window &= submit[rows] < hi
    rows = rows[in_window]
    if limit is not None:
        rows = rows[:limit]
    if len(rows) == 0:
        raise InputError("no jobs left after skipping and the --start/--end/--limit filters", file=label)
    return _Selected(cols, submit, gpus, duration, text, ids, n_rows, keep, never_ran, bad_duration, bad_gpus, rows)


def generic_gpu_preview(
    raw: Path,
    out: Path,
    head: int,
    *,
    seed: int = 0,
    mapping: Mapping[str, str] | None = None,
    slot_seconds: float | None = None,
    start: str | None = None,
    end: str | None = None,
    limit: int | None = None,
) -> dict[str, np.ndarray]:
    """A quick look at what ``run("generic-gpu", raw, out, ...)`` would write, without building every
    job: its first ``head`` jobs written to ``out`` (the same rows, ids and profiles as the whole
    import's), and every job as arrays in their order: ``arrival`` (slots), ``gpus`` (whole GPUs)
    and ``duration`` (seconds). InputError as ``run``'s."""
    slot = DEFAULT_SLOT_SECONDS if slot_seconds is None else float(slot_seconds)
    if not math.isfinite(slot) or slot <= 0:
        raise InputError(f"{slot_seconds!r} must be a positive number of seconds", field="--slot-seconds")
    if limit is not None and limit < 1:
        raise InputError(f"{limit} must be at least 1", field="--limit")
    table = read_raw(raw)
    sel = _generic_rows(table, raw, mapping or {}, start, end, limit)
    _generic_gpu(table, raw, out, mapping or {}, slot, seed, start, end, limit, replace(sel, rows=sel.rows[:head]))
    submit = sel.submit[sel.rows]
    return {
        "arrival": ((submit - submit[0]) // slot).astype(np.int64),
        "gpus": np.ceil(sel.gpus[sel.rows] - 1e-9).astype(np.int64),
        "duration": sel.duration[sel.rows].astype(float),
    }


def _generic_gpu(
    table: pd.DataFrame,
    raw: Path,
    out: Path,
    mapping: Mapping[str, str],
    slot: float,
    seed: int,
    start: str | None,
    end: str | None,
    limit: int | None,
    selected: _Selected | None = None,
) -> str:
    sel = selected or _generic_rows(table, raw, mapping, start, end, limit)
    submit, gpus, duration, text, ids, rows = sel.submit, sel.gpus, sel.duration, sel.text, sel.ids, sel.rows
    n_rows, keep, never_ran = sel.n_rows, sel.keep, sel.never_ran
    bad_duration, bad_gpus = sel.bad_duration, sel.bad_gpus
    first = submit[rows[0]]
    jobs: list[dict[str, Any]] = []
    profiles: dict[tuple[str, str], Profile] = {}
    for r in rows:
        g = math.ceil(gpus[r] - 1e-9)  # fractional GPU shares are rounded up to whole GPUs
        extra = {f: str(v[r]) for f, v in text.items() if str(v[r]) != ""}
        key = (extra.get("group") or extra.get("user") or str(ids[r]), extra.get("model", ""))
        profile = profiles.get(key) or profiles.setdefault(key, _profile(seed, *key))
        job: dict[str, Any] = {
            "job_id": str(ids[r]),
            "arrival": int((submit[r] - first) // slot),
            "slot_seconds": slot,
            "gpus": g,
            "duration": float(duration[r]),
        }
        job.update(extra)
        job.setdefault("model", profile.name)
        job.update(_elastic_fields(profile, g, float(duration[r])))
        jobs.append(job)

    body = _trace_json(jobs) if out.suffix.lower() == ".json" else _trace_csv(jobs)
    _write_atomically(out, body)
    skipped = int(n_rows - keep.sum())
    filtered = int(keep.sum()) - len(rows)
    span = jobs[-1]["arrival"]
    return (
        f"generic-gpu: wrote {len(jobs)} jobs to {out} (arrivals over {span + 1} slots of {slot:g} s); "
        f"skipped {skipped} of {n_rows} rows ({int(bad_duration.sum())} non-positive duration, "
        f"{int(bad_gpus.sum())} non-positive num_gpus, {int(never_ran.sum())} never ran); "
        f"{filtered} outside --start/--end/--limit"
    )


def _difference(value: str, columns: Sequence[str], label: str) -> tuple[str, str] | None:
    """``END-START`` naming two columns (and not itself a column): the (end, start) columns."""
    if not value or value in columns or "-" not in value:
        return None
    by_lower = {c.lower(): c for c in reversed(columns)}
    for k in range(1, len(value)):  # every split at a "-": column names may hold dashes themselves
        if value[k] != "-":
            continue
        end, start = value[:k].strip(), value[k + 1 :].strip()
        if end.lower() in by_lower and start.lower() in by_lower:
            return by_lower[end.lower()], by_lower[start.lower()]
    raise InputError(
        f"{value!r} names neither a column nor END-START of two columns (columns: {', '.join(columns)})",
        file=label,
        line=1,
        field="--map duration",
    )


def _elapsed(table: pd.DataFrame, end: str, start: str, label: str) -> np.ndarray:
    """Seconds from ``start`` to ``end`` per row: both numbers of seconds, or both datetimes."""
    t_end, end_dates = _submit_seconds(table, end, label)
    t_start, start_dates = _submit_seconds(table, start, label)
    if end_dates != start_dates:
        raise InputError(
            f"{end} and {start} must both be datetimes or both numbers of seconds", file=label, line=2, field=end
        )
    return np.asarray(t_end - t_start, dtype=float)


def _check_ids(ids: np.ndarray, keep: np.ndarray, label: str, column: str) -> None:
    seen: dict[str, int] = {}
    for row in np.flatnonzero(keep):
        value = str(ids[row])
        if value == "":
            raise InputError("missing value", file=label, line=int(row) + 2, field=column)
        if value in seen:
            raise InputError(
                f"duplicate id {value!r} (first on line {seen[value]})", file=label, line=int(row) + 2, field=column
            )
        seen[value] = int(row) + 2


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.6g}"
    return str(value)


def _trace_csv(jobs: Sequence[Mapping[str, Any]]) -> str:
    present = set().union(*(job.keys() for job in jobs))
    columns = [c for c in TRACE_COLUMNS if c in present]  # optional columns no job has are left out
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for job in jobs:
        writer.writerow([_cell(job[c]) if c in job else "" for c in columns])
    return buf.getvalue()


def _trace_json(jobs: Sequence[Mapping[str, Any]]) -> str:
    ordered = [{c: job[c] for c in TRACE_COLUMNS if c in job} for job in jobs]
    return json.dumps(ordered, indent=1) + "\n"


# ---------------------------------------------------------------------------------------------
# node-list


NODE_FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("sn", "node", "node_id", "hostname", "name", "id"),
    "cpu_milli": ("cpu_milli",),
    "cpu": ("cpu", "cpus", "vcpu", "vcpus", "num_cpu"),
    "memory_mib": ("memory_mib", "mem_mib"),
    "memory_gb": ("memory_gb", "mem_gb", "memory", "mem"),
    "gpu": ("gpu", "gpus", "num_gpu", "num_gpus"),
    "model": ("model", "gpu_model", "gpu_type"),
}
"""Our field -> raw column names tried in order. CPUs come from ``cpu_milli`` (thousandths) or
``cpu`` (vCPUs); memory from ``memory_mib`` or ``memory_gb``."""


def _node_list(
    table: pd.DataFrame,
    raw: Path,
    out: Path,
    mapping: Mapping[str, str],
    slot: float,
    limit: int | None,
) -> str:
    label = str(raw)
    cols = resolve_columns(table, label, NODE_FIELDS, mapping)
    columns = list(table.columns)
    id_col = _require(cols, "id", label, columns)
    gpu_col = _require(cols, "gpu", label, columns)
    if limit is not None:
        table = table.iloc[:limit]
    cpu = _amounts(table, cols, ("cpu_milli", 1000.0), ("cpu", 1.0), label, columns)
    mem = _amounts(table, cols, ("memory_mib", 1024.0), ("memory_gb", 1.0), label, columns)
    gpu = _non_negative(table, gpu_col, label)
    ids = table[id_col].to_numpy(dtype=object)
    _check_ids(ids, np.ones(len(ids), dtype=bool), label, id_col)
    models = table[cols["model"]].to_numpy(dtype=object) if "model" in cols else None

    servers = []
    for k in range(len(table)):
        server: dict[str, Any] = {
            "id": str(ids[k]),
            "capacity": {"gpu": _whole(gpu[k]), "cpu": _whole(cpu[k]), "mem": _whole(mem[k])},
        }
        if models is not None and str(models[k]) != "":
            server["gpu_model"] = str(models[k])
        servers.append(server)
    doc = {
        "slot_seconds": slot,
        "resources": [{"name": "gpu", "unit": "GPU"}, {"name": "cpu", "unit": "vCPU"}, {"name": "mem", "unit": "GB"}],
        "servers": servers,
        "worker_types": [{"id": "gpu", "demand": {"gpu": 1}}],
    }
    try:
        cluster_from_dict(doc)  # the spec we write must load
    except InputError as exc:
        raise InputError(f"the imported cluster does not load: {exc.problem}", file=label, field=exc.field) from None
    _write_atomically(out, json.dumps(doc, indent=1) + "\n")
    by_model: dict[str, float] = {}
    for s in servers:
        m = str(s.get("gpu_model", "unknown"))
        by_model[m] = by_model.get(m, 0.0) + float(s["capacity"]["gpu"])
    mix = ", ".join(f"{m} {g:g}" for m, g in sorted(by_model.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"node-list: wrote {len(servers)} servers ({float(gpu.sum()):g} GPUs: {mix}) to {out}"


def _amounts(
    table: pd.DataFrame,
    cols: Mapping[str, str],
    primary: tuple[str, float],
    fallback: tuple[str, float],
    label: str,
    columns: Sequence[str],
) -> np.ndarray:
    """One resource from whichever of two columns is present, divided by its unit factor."""
    for field, factor in (primary, fallback):
        if field in cols:
            return _non_negative(table, cols[field], label) / factor
    raise InputError(
        f"missing column for {primary[0]} or {fallback[0]} (columns: {', '.join(columns)}); "
        f"map one with --map {primary[0]}=COLUMN",
        file=label,
        line=1,
        field=primary[0],
    )


def _non_negative(table: pd.DataFrame, column: str, label: str) -> np.ndarray:
    values = _numbers(table, column, label)
    if (values < 0).any():
        row = int(np.argmax(values < 0))
        raise InputError(f"{table[column].iloc[row]!r} must be >= 0", file=label, line=row + 2, field=column)
    return values


def _whole(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(float(x), 3)


# ---------------------------------------------------------------------------------------------
# Output


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    The temporary file is opened with mode "x" (not mkstemp) so that the result gets the usual
    permissions from the umask.
    """
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("x", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write the output ({exc.strerror})", file=str(path)) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
