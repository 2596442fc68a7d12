"""The ``generic-gpu`` import: a raw GPU-job CSV -> a job trace (docs/formats.md, "generic-gpu").

Columns ``job_id, submit_time, num_gpus, duration`` and optional ``user, group, status, model``
(Philly as published needs no mapping; ``--map`` names others). Each kept row becomes a rigid job
(its GPUs and recorded duration) with seeded elastic fields beside it: a model profile per group,
epochs chosen so that the ideal duration matches the recorded one.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from scheduling.batch_draws import draws
from scheduling.errors import InputError
from scheduling.raw_tables import bound, check_ids, numbers, require, resolve_columns, submit_seconds, write_atomically

if TYPE_CHECKING:
    import pandas as pd

NEVER_RAN = frozenset({"pending", "queued", "waiting", "submitted", "not_started", "unscheduled", "rejected"})
"""Statuses (case-insensitive) of jobs that never held GPUs; such rows are skipped and counted."""


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


def profile_of(seed: int, key: str, model: str) -> Profile:
    """The trace's own model when it is a known profile, else one drawn per (seed, group key)."""
    for p in PROFILES:
        if p.name.lower() == model.lower():
            return p
    digest = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:16], 16)
    rng = np.random.default_rng([seed, digest])
    return PROFILES[int(rng.integers(len(PROFILES)))]


def elastic_fields(profile: Profile, gpus: int, duration: float) -> dict[str, Any]:
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
class Selected:
    """The rows of a generic GPU trace that become jobs (``rows``, in arrival order) and the columns
    read: what ``generic_gpu`` writes and what ``generic_gpu_preview`` summarises."""

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


def generic_rows(
    table: pd.DataFrame,
    raw: Path,
    mapping: Mapping[str, str],
    start: str | None,
    end: str | None,
    limit: int | None,
) -> Selected:
    """The rows of ``table`` the import keeps, after skipping and the --start/--end/--limit filters."""
    label = str(raw)
    columns = list(table.columns)
    difference = duration_difference(mapping.get("duration", ""), columns, label)
    if difference is not None:  # --map duration=END-START: computed, not a column
        mapping = {k: v for k, v in mapping.items() if k != "duration"}
    cols = resolve_columns(table, label, GENERIC_FIELDS, mapping)
    submit_col = require(cols, "submit_time", label, columns)
    gpus_col = require(cols, "num_gpus", label, columns)
    submit, datetimes = submit_seconds(table, submit_col, label)
    gpus = numbers(table, gpus_col, label)
    if difference is not None:
        duration = elapsed(table, *difference, label)
    else:
        duration = numbers(table, require(cols, "duration", label, columns), label)
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
        check_ids(ids, keep, label, cols["job_id"])
    else:
        prefix = re.sub(r"[^a-z0-9]+", "-", raw.stem.lower()).strip("-") or "job"
        width = max(6, len(str(n_rows)))
        ids = np.array([f"{prefix}-{k + 1:0{width}d}" for k in range(n_rows)], dtype=object)

    trace_start = float(submit.min())
    lo = bound(start, "--start", datetimes, trace_start)
    hi = bound(end, "--end", datetimes, trace_start)
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
    return Selected(submit, gpus, duration, text, ids, n_rows, keep, never_ran, bad_duration, bad_gpus, rows)


def generic_gpu(
    table: pd.DataFrame,
    raw: Path,
    out: Path,
    mapping: Mapping[str, str],
    slot: float,
    seed: int,
    start: str | None,
    end: str | None,
    limit: int | None,
    selected: Selected | None = None,
) -> str:
    sel = selected or generic_rows(table, raw, mapping, start, end, limit)
    submit, gpus, duration, text, ids, rows = sel.submit, sel.gpus, sel.duration, sel.text, sel.ids, sel.rows
    n_rows, keep, never_ran = sel.n_rows, sel.keep, sel.never_ran
    bad_duration, bad_gpus = sel.bad_duration, sel.bad_gpus
    first = submit[rows[0]]
    ids_kept = [str(v) for v in ids[rows]]
    texts = {f: [str(x) for x in v[rows]] for f, v in text.items()}
    kept = Columns(
        ids=ids_kept,
        arrivals=((submit[rows] - first) // slot).astype(np.int64).tolist(),
        gpus=np.ceil(gpus[rows] - 1e-9).astype(np.int64).tolist(),  # fractional shares: whole GPUs
        durations=duration[rows].tolist(),
        texts=texts,
        profiles=profiles_of(seed, ids_kept, texts),
    )
    body = trace_json(kept, slot) if out.suffix.lower() == ".json" else trace_csv(kept, slot)
    write_atomically(out, body)
    skipped = int(n_rows - keep.sum())
    filtered = int(keep.sum()) - len(rows)
    span = kept.arrivals[-1]
    return (
        f"generic-gpu: wrote {len(rows)} jobs to {out} (arrivals over {span + 1} slots of {slot:g} s); "
        f"skipped {skipped} of {n_rows} rows ({int(bad_duration.sum())} non-positive duration, "
        f"{int(bad_gpus.sum())} non-positive num_gpus, {int(never_ran.sum())} never ran); "
        f"{filtered} outside --start/--end/--limit"
    )


def duration_difference(value: str, columns: Sequence[str], label: str) -> tuple[str, str] | None:
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


def elapsed(table: pd.DataFrame, end: str, start: str, label: str) -> np.ndarray:
    """Seconds from ``start`` to ``end`` per row: both numbers of seconds, or both datetimes."""
    t_end, end_dates = submit_seconds(table, end, label)
    t_start, start_dates = submit_seconds(table, start, label)
    if end_dates != start_dates:
        raise InputError(
            f"{end} and {start} must both be datetimes or both numbers of seconds", file=label, line=2, field=end
        )
    return np.asarray(t_end - t_start, dtype=float)


def cell(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.6g}"
    return str(value)


@dataclass(frozen=True)
class Columns:
    """The imported jobs, one list per field (row k: the k-th job in arrival order)."""

    ids: list[str]
    arrivals: list[int]
    gpus: list[int]
    durations: list[float]
    texts: dict[str, list[str]]  # the raw user, group, status, model present ("" where a row has none)
    profiles: list[Profile]


def profiles_of(seed: int, ids: Sequence[str], texts: Mapping[str, Sequence[str]]) -> list[Profile]:
    """``profile_of`` for every row (key: its group, else user, else id; its model), each distinct
    key drawn once and all draws made together (scheduling/batch_draws.py: numpy's values)."""
    by_name = {p.name.lower(): p for p in reversed(PROFILES)}  # the first profile of a name wins
    empty = [""] * len(ids)
    groups, users, models = (texts.get(f, empty) for f in ("group", "user", "model"))
    keys = [(g or u or i, m) for g, u, i, m in zip(groups, users, ids, models, strict=True)]
    chosen = {pair: by_name.get(pair[1].lower()) for pair in dict.fromkeys(keys)}
    undrawn: dict[str, Profile | None] = {pair[0]: None for pair, found in chosen.items() if found is None}
    digests = [int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:16], 16) for key in undrawn]
    for key, k in zip(undrawn, draws(seed, digests, len(PROFILES)), strict=True):
        undrawn[key] = PROFILES[k]
    out = []
    for pair in keys:
        found = chosen[pair] or undrawn[pair[0]]
        assert found is not None
        out.append(found)
    return out


ELASTIC = ("arch", "epochs", "chunks", "minibatches", "batch_time", "ps_update", "gradient_mb")


def _rows(columns: Columns) -> Iterator[tuple[dict[str, str], Profile, int, float, dict[str, Any]]]:
    """Per job: its non-empty raw texts, profile, GPUs, duration and elastic fields (each distinct
    (profile, GPUs, duration) computed once)."""
    elastic: dict[tuple[str, int, float], dict[str, Any]] = {}
    names = list(columns.texts)
    for k, (profile, g, d) in enumerate(zip(columns.profiles, columns.gpus, columns.durations, strict=True)):
        fields = elastic.get((profile.name, g, d))
        if fields is None:
            fields = elastic[profile.name, g, d] = elastic_fields(profile, g, d)
        extra = {f: columns.texts[f][k] for f in names if columns.texts[f][k] != ""}
        yield extra, profile, g, d, fields


def trace_csv(columns: Columns, slot: float) -> Callable[[TextIO], None]:
    """The trace as CSV, written row by row to the file given (write_atomically)."""
    present = {"job_id", "arrival", "slot_seconds", "gpus", "duration", "model", *ELASTIC}
    present.update(f for f, values in columns.texts.items() if any(v != "" for v in values))
    order = [c for c in TRACE_COLUMNS if c in present]  # optional columns no job has are left out
    before_model = [c for c in ("group", "user") if c in present]
    status = "status" in present
    slot_text = cell(float(slot))

    def lines() -> Iterator[list[str]]:
        numbers: dict[float, str] = {}
        tails: dict[tuple[str, int, float], list[str]] = {}
        rows = zip(_rows(columns), columns.ids, columns.arrivals, strict=True)
        for (extra, profile, g, d, fields), job_id, arrival in rows:
            duration_text = numbers.get(d)
            if duration_text is None:
                duration_text = numbers[d] = cell(d)
            tail = tails.get((profile.name, g, d))
            if tail is None:
                tail = tails[profile.name, g, d] = [cell(fields[c]) for c in ELASTIC]
            line = [job_id, str(arrival), slot_text, str(g), duration_text]
            line.extend(extra.get(c, "") for c in before_model)
            line.append(extra.get("model") or profile.name)
            if status:
                line.append(extra.get("status", ""))
            line.extend(tail)
            yield line

    def write(f: TextIO) -> None:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(order)
        writer.writerows(lines())

    return write


def trace_json(columns: Columns, slot: float) -> str:
    ordered = []
    for (extra, profile, g, d, fields), job_id, arrival in zip(
        _rows(columns), columns.ids, columns.arrivals, strict=True
    ):
        job: dict[str, Any] = {"job_id": job_id, "arrival": arrival, "slot_seconds": slot, "gpus": g, "duration": d}
        job.update(extra)
        job.setdefault("model", profile.name)
        job.update(fields)
        ordered.append({c: job[c] for c in TRACE_COLUMNS if c in job})
    return json.dumps(ordered, indent=1) + "\n"
