"""Loaders for the cluster spec (JSON) and job traces (CSV or JSON); see docs/formats.md.

Every problem raises ``InputError`` naming the file, the line or job id, the field and what is
wrong. A file is parsed completely before anything is returned, so a malformed file never
half-loads. Units are converted here, once: seconds -> slots, Gbps -> MB per slot.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType

from scheduling import failures, gpu_types, records, restart_costs, status_replay
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
from scheduling.errors import InputError
from scheduling.model import (
    ARCHITECTURES,
    POOLS,
    SITES,
    Cluster,
    Failure,
    InstanceType,
    Job,
    Resource,
    Server,
    Stage,
    Utility,
    frozen_amounts,
    gbps_to_mb_per_slot,
)
from scheduling.plain_csv import PlainCsv
from scheduling.records import record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


MAX_INPUT_BYTES = 256 * 1024 * 1024
"""Largest cluster spec or trace file the CLI and the library read (a 150,000-job A-SRPT trace is
65 MiB); raw imports have their own limit."""
MAX_UPLOAD_BYTES = 32 * 1024 * 1024
"""Largest cluster spec or trace the dashboard and the JSON API accept: the text is stored in the
database, and the whole Philly trace imported is about 4 MiB. Larger traces run with the CLI."""


def read_text(path: Path | str, name: str | None = None, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """A whole input file as text, refusing empty, oversized and non-UTF-8 files."""
    label = name or str(path)
    try:  # (os, not pathlib: a short run starts without importing pathlib)
        size = os.stat(path).st_size
        if size > max_bytes:
            raise InputError(
                f"file is {size / 2**20:.1f} MiB, larger than the {max_bytes // 2**20} MiB limit", file=label
            )
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:  # missing, a folder, no permission
        raise InputError(f"cannot read the file ({exc.strerror})", file=label) from None
    return decode(data, label)


def decode(data: bytes, label: str) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})", file=label, line=line
        ) from exc
    if not text.strip():
        raise InputError("file is empty", file=label)
    if "\x00" in text:
        raise InputError("contains a NUL byte", file=label, line=text.count("\n", 0, text.index("\x00")) + 1)
    return text


# ---------------------------------------------------------------------------------------------
# Small typed readers for one field; they raise InputError without the file, which callers add.


def number(
    value: Any, field: str, *, minimum: float | None = 0.0, strict: bool = False, maximum: float = MAX_AMOUNT
) -> float:
    """A finite number >= ``minimum`` (> with ``strict``; None: any sign) and at most ``maximum`` in magnitude."""
    if isinstance(value, bool) or value is None or value == "":
        raise InputError("missing number" if value in (None, "") else f"{_shown(value)} is not a number", field=field)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{_shown(value)} is not a number", field=field) from None
    except OverflowError:  # a JSON integer beyond the float range
        raise InputError(f"{_shown(value)} is not a finite number", field=field) from None
    if not math.isfinite(x):
        raise InputError(f"{_shown(value)} is not a finite number", field=field)
    if minimum is not None and (x <= minimum if strict else x < minimum):
        raise InputError(f"{_shown(value)} must be {'>' if strict else '>='} {minimum:g}", field=field)
    if abs(x) > maximum:
        bound = f"<= {maximum:g}" if x > 0 else f">= {-maximum:g}"
        raise InputError(f"{_shown(value)} must be {bound}", field=field)
    return x


def _shown(value: Any) -> str:
    """``repr(value)``, cut short: a value with thousands of digits is named, not printed."""
    shown = repr(value)
    return shown if len(shown) <= 40 else f"{shown[:30]}... ({len(shown)} characters)"


def integer(value: Any, field: str, *, minimum: int = 0, maximum: float = MAX_AMOUNT) -> int:
    x = number(value, field, minimum=None, maximum=maximum)
    if x != int(x):
        raise InputError(f"{_shown(value)} is not a whole number", field=field)
    if x < minimum:
        raise InputError(f"{_shown(value)} must be >= {minimum}", field=field)
    return int(x)


def text(value: Any, field: str) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError("missing value", field=field)
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise InputError(f"{_shown(value)} is not a string", field=field)
    return no_nul(str(value).strip(), field)


def first_duplicate(values: Iterable[str]) -> str | None:
    """The first value seen a second time, or None: one pass with a set (the inputs may hold
    100,000 names, where comparing each with all earlier ones takes minutes)."""
    seen: set[str] = set()
    for v in values:
        if v in seen:
            return v
        seen.add(v)
    return None


def _listed(names: Sequence[str], most: int = 20) -> str:
    """Names for a message: the first ``most`` of them and how many more."""
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown}, ... ({len(names) - most:,} more)"


def no_nul(value: str, field: str) -> str:
    """``value``, unless it holds a NUL character (JSON's "\\u0000"), which no database text column stores."""
    if "\x00" in value:
        raise InputError(f"{_shown(value)} contains a NUL character", field=field)
    return value


def choice(value: Any, field: str, options: tuple[str, ...]) -> str:
    v = text(value, field)
    if v not in options:
        raise InputError(f"{v!r} is not one of {', '.join(options)}", field=field)
    return v


def amounts(value: Any, field: str, resources: frozenset[str] | set[str] | None = None) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise InputError("expected an object of resource amounts", field=field)
    out = {}
    for k, v in value.items():
        if resources is not None and k not in resources:
            raise InputError(
                f"unknown resource {_shown(k)} (declared: {_listed(sorted(resources))})", field=f"{field}.{k}"
            )
        out[str(k)] = number(v, f"{field}.{k}")
    return out


def parse_json(content: str, label: str) -> Any:
    """The JSON document in ``content``, or InputError naming the line of a syntax error."""
    try:
        return json.loads(content)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg} (column {exc.colno})", file=label, line=exc.lineno) from None
    except ValueError:  # an integer of more digits than Python converts
        raise InputError(
            f"invalid JSON: a number has more than {sys.get_int_max_str_digits()} digits", file=label
        ) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", file=label) from None


def check_strings(doc: Any, field: str = "") -> None:
    """InputError naming the field of the first string (key or value) of a JSON document holding
    a NUL character ("\\u0000": PostgreSQL text refuses it) or an unpaired surrogate ("\\ud800":
    not encodable as UTF-8, so no CSV or page could show it). Iterative, linear in the document."""
    stack: list[tuple[str, Any]] = [(field, doc)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise InputError(f"{_shown(item)} contains a NUL character", field=where or None)
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise InputError(
                    f"{_shown(item)} contains an unpaired surrogate character", field=where or None
                ) from None
        elif isinstance(item, dict):
            for k, v in reversed(item.items()):
                key = f"{where}.{k}" if where else str(k)
                stack.append((key, v))
                stack.append((key, k))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))


# ---------------------------------------------------------------------------------------------
# Cluster spec


def load_cluster(path: Path | str, name: str | None = None) -> Cluster:
    label = name or str(path)
    return parse_cluster(read_text(path, label), label)


def parse_cluster(content: str, label: str = "cluster.json") -> Cluster:
    doc = parse_json(content, label)
    try:
        check_strings(doc)
        return cluster_from_dict(doc)
    except InputError as exc:
        raise exc.located(label) from None


def cluster_from_dict(doc: Any) -> Cluster:
    if not isinstance(doc, Mapping):
        raise InputError("expected a JSON object with slot_seconds, resources and servers")
    for key in ("slot_seconds", "resources", "servers"):
        if key not in doc:
            raise InputError("missing", field=key)
    slot = number(doc["slot_seconds"], "slot_seconds", minimum=SLOT_SECONDS[0], maximum=SLOT_SECONDS[1])
    resources = _resources(doc["resources"])
    names = {r.name for r in resources}
    servers = _servers(doc["servers"], names, slot)
    worker_types = _types(doc.get("worker_types", []), "worker_types", names, slot)
    ps_types = _types(doc.get("ps_types", []), "ps_types", names, slot)
    horizon = doc.get("horizon")
    network = doc.get("network", {})
    if not isinstance(network, Mapping):
        raise InputError("expected an object", field="network")
    if "spread_slowdown" in network:  # speed.SPREAD_SLOWDOWN: a fraction of speed per extra server
        number(network["spread_slowdown"], "network.spread_slowdown", minimum=0, maximum=100)
    return Cluster(
        slot_seconds=slot,
        resources=resources,
        servers=servers,
        worker_types=worker_types,
        ps_types=ps_types,
        horizon=None if horizon is None else integer(horizon, "horizon", minimum=1, maximum=MAX_SLOTS),
        network=frozen_amounts({str(k): number(v, f"network.{k}", minimum=None) for k, v in network.items()}),
        restart_seconds=number(
            doc.get("restart_seconds", 0), "restart_seconds", minimum=0, maximum=MAX_RESTART_SECONDS
        ),
        restart_costs=restart_costs.parse_table(doc["restart_costs"]) if "restart_costs" in doc else (),
        checkpoint_gbps=number(doc.get("checkpoint_gbps", 0), "checkpoint_gbps", maximum=1e6),
        gpu_speeds=gpu_types.parse_table(doc["gpu_speeds"]) if "gpu_speeds" in doc else MappingProxyType({}),
        failures=_failures(doc, servers, slot),
        checkpoint_slots=failures.checkpoint_slots(doc.get("checkpoint_seconds", 0), slot),
        replay_status=status_replay.flag(doc),
    )


def _failures(doc: Mapping[str, Any], servers: tuple[Server, ...], slot: float) -> tuple[Failure, ...]:
    """The failure trace and the failures its ``failure_model`` draws (scheduling.failures)."""
    if "failures" not in doc and "failure_model" not in doc:
        return ()
    given = failures.parse_table(doc["failures"], (s.id for s in servers)) if "failures" in doc else []
    drawn = failures.generate(doc["failure_model"], servers, slot) if "failure_model" in doc else []
    return failures.checked(given + drawn)


def _resources(value: Any) -> tuple[Resource, ...]:
    if isinstance(value, Mapping):
        items = [Resource(text(k, "resources"), str(v or "")) for k, v in value.items()]
    elif isinstance(value, list):
        items = []
        for i, r in enumerate(value):
            if isinstance(r, str):
                items.append(Resource(text(r, f"resources[{i}]")))
            elif isinstance(r, Mapping):
                items.append(Resource(text(r.get("name"), f"resources[{i}].name"), str(r.get("unit", ""))))
            else:
                raise InputError("expected a name or {name, unit}", field=f"resources[{i}]")
    else:
        raise InputError("expected a list of resources", field="resources")
    if not items:
        raise InputError("at least one resource is needed", field="resources")
    if (dup := first_duplicate(r.name for r in items)) is not None:
        raise InputError(f"duplicate resource {dup!r}", field="resources")
    return tuple(items)


def _servers(value: Any, resources: set[str], slot: float) -> tuple[Server, ...]:
    if not isinstance(value, list) or not value:
        raise InputError("expected a non-empty list of servers", field="servers")
    out: list[Server] = []
    total = 0
    for i, s in enumerate(value):
        f = f"servers[{i}]"
        if not isinstance(s, Mapping):
            raise InputError("expected an object", field=f)
        sid = text(s.get("id"), f"{f}.id")
        if "capacity" not in s:
            raise InputError("missing capacity", field=f"{f}.capacity")
        capacity = amounts(s["capacity"], f"{f}.capacity", resources)
        unlimited = s.get("unlimited", False)
        if not isinstance(unlimited, bool):
            raise InputError(f"{_shown(unlimited)} is not true or false", field=f"{f}.unlimited")
        if not capacity and not unlimited:
            raise InputError("capacity is empty", field=f"{f}.capacity")
        count = integer(s.get("count", 1), f"{f}.count", minimum=1, maximum=MAX_SERVERS)
        total += count
        if total > MAX_SERVERS:
            raise InputError(f"{total:,} servers so far, more than the {MAX_SERVERS:,} accepted", field=f"{f}.count")
        nic = s.get("nic_bw_gbps")
        storage = s.get("storage_gb")
        intra = s.get("intra_bw_gbps")
        # read once for the ``count`` servers of the entry (in the order the fields were always read)
        pool = choice(s.get("pool", "any"), f"{f}.pool", POOLS)
        site = choice(s.get("site", "cloud"), f"{f}.site", SITES)
        delay = integer(s.get("upload_delay", 0), f"{f}.upload_delay", maximum=MAX_SLOTS)
        intra_bw = None if intra is None else gbps_to_mb_per_slot(number(intra, f"{f}.intra_bw_gbps"), slot)
        nic_bw = None if nic is None else gbps_to_mb_per_slot(number(nic, f"{f}.nic_bw_gbps"), slot)
        gpu_model = None if s.get("gpu_model") is None else str(s["gpu_model"])
        storage_gb = None if storage is None else number(storage, f"{f}.storage_gb", strict=True)
        for k in range(count):
            out.append(
                Server(
                    id=sid if count == 1 else f"{sid}-{k}",
                    capacity=frozen_amounts(capacity),
                    pool=pool,
                    site=site,
                    unlimited=unlimited,
                    upload_delay=delay,
                    intra_bw=intra_bw,
                    nic_bw=nic_bw,
                    gpu_model=gpu_model,
                    storage_gb=storage_gb,
                )
            )
    if (dup := first_duplicate(s.id for s in out)) is not None:
        raise InputError(f"duplicate server id {dup!r} (after expanding count)", field="servers")
    return tuple(out)


def _types(value: Any, field: str, resources: set[str], slot: float) -> tuple[InstanceType, ...]:
    if not isinstance(value, list):
        raise InputError("expected a list", field=field)
    out = []
    for i, t in enumerate(value):
        f = f"{field}[{i}]"
        if not isinstance(t, Mapping):
            raise InputError("expected an object", field=f)
        demand = amounts(t.get("demand", {}), f"{f}.demand", resources)
        gbps = t.get("bandwidth_gbps", demand.get("bw", 0.0))
        out.append(
            InstanceType(
                id=text(t.get("id"), f"{f}.id"),
                demand=frozen_amounts(demand),
                bandwidth=gbps_to_mb_per_slot(number(gbps, f"{f}.bandwidth_gbps"), slot),
            )
        )
    if (dup := first_duplicate(t.id for t in out)) is not None:
        raise InputError(f"duplicate type id {dup!r}", field=field)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Job traces


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
        fast = PlainCsv.of(header, cluster)
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
    last: Any = None  # the raw value last read: traces repeat one value on every row
    for line, raw, job_id in rows:
        if stated is not None and type(raw) is type(last) and raw == last:
            continue  # the same value (type too: True == 1) reads the same and agrees again
        last = raw
        try:
            value = number(raw, "slot_seconds", strict=True, maximum=1e7)
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
        raise InputError(f"duplicate column {_shown(duplicate)}", file=label, line=1, field=duplicate[:80])
    columns = set(header)
    for required in ("job_id", "arrival"):
        if required not in columns:
            raise InputError(
                f"missing column {required!r} (columns: {_listed(header)})", file=label, line=1, field=required
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


def _per_type(value: Any, field: str, known: frozenset[str], slot: float) -> dict[str, float]:
    """Seconds per type (or one number for every type) -> slots per type, "*" for any type."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if k != "*" and k not in known:
                raise InputError(
                    f"unknown type {_shown(k)} (cluster defines: {_listed(sorted(known)) or 'none'})",
                    field=f"{field}.{k}",
                )
            out[str(k)] = _step(v, f"{field}.{k}") / slot
        return out
    return {"*": _step(value, field) / slot}


def _step(value: Any, field: str) -> float:
    """A mini-batch or update time, seconds."""
    return number(value, field, minimum=STEP_SECONDS[0], maximum=STEP_SECONDS[1])


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


_KNOWN_COLUMNS = frozenset(records.names(Job)) | {"priority", "decay", "target", "status", "slot_seconds"}


def job_from_row(row: Mapping[str, Any], cluster: Cluster, names: ClusterNames | None = None) -> Job:
    """One job from a trace row (CSV columns unflattened, or a JSON object); units per formats.md.
    ``names``: ``ClusterNames.of(cluster)``, passed by callers that load many rows."""
    job_id = text(row.get("job_id"), "job_id")
    slot = cluster.slot_seconds
    names = names or ClusterNames.of(cluster)
    resources = names.resources
    for key in row:
        if key not in _KNOWN_COLUMNS:
            raise InputError(f"unknown field (known: {', '.join(sorted(_KNOWN_COLUMNS))})", job=job_id, field=key)
    try:
        kw: dict[str, Any] = {"job_id": job_id, "arrival": integer(row.get("arrival"), "arrival", maximum=MAX_SLOTS)}
        if "arch" in row:
            kw["arch"] = choice(row["arch"], "arch", ARCHITECTURES)
        if "weight" in row:
            kw["weight"] = number(row["weight"], "weight")
        kw["utility"] = _utility(row)
        for key in ("epochs", "chunks", "minibatches"):
            if key in row:
                kw[key] = integer(row[key], key, minimum=1, maximum=MAX_WORKERS if key == "chunks" else MAX_WORK)
        if "batch_time" in row:
            kw["batch_time"] = frozen_amounts(_per_type(row["batch_time"], "batch_time", names.worker_types, slot))
        if "ps_update" in row:
            kw["ps_update"] = frozen_amounts(_per_type(row["ps_update"], "ps_update", names.ps_types, slot))
        if "gradient_mb" in row:
            kw["gradient_mb"] = number(row["gradient_mb"], "gradient_mb")
        for key in ("worker_demand", "ps_demand"):
            if key in row:
                kw[key] = frozen_amounts(amounts(row[key], key, resources))
        if "gpus" in row:
            kw["gpus"] = integer(row["gpus"], "gpus", minimum=1, maximum=MAX_WORKERS)
        if "gpu_request" in row:
            kw["gpu_request"] = integer(row["gpu_request"], "gpu_request", minimum=1, maximum=MAX_WORKERS)
        if "duration" in row:
            kw["duration"] = _duration(row["duration"], slot)
        for key in ("iterations", "predicted_iterations"):
            if key in row:
                kw[key] = integer(row[key], key, maximum=MAX_WORK)
        if "work" in row:
            kw["work"] = number(row["work"], "work", strict=True, maximum=MAX_WORK)
        if "stages" in row:
            kw["stages"] = _stages(row["stages"], slot)
        if "chunk_gb" in row:
            kw["chunk_gb"] = number(row["chunk_gb"], "chunk_gb", strict=True)
        if "upload_delay" in row:
            kw["upload_delay"] = _upload_delays(row["upload_delay"], names.delay_keys)
        if row.get("restart_seconds") not in (None, ""):  # the job's own restart cost (restart_costs)
            kw["restart_seconds"] = number(
                row["restart_seconds"], "restart_seconds", minimum=0, maximum=MAX_RESTART_SECONDS
            )
        if row.get("checkpoint_gb") not in (None, ""):  # a restart cost from the checkpoint size
            kw["checkpoint_gb"] = number(row["checkpoint_gb"], "checkpoint_gb")
        if "gpu_speed" in row:  # speed factors per GPU type (gpu_types)
            kw["gpu_speed"] = gpu_types.parse_job(row["gpu_speed"])
        for key in ("group", "user", "model"):
            if row.get(key) not in (None, ""):
                kw[key] = no_nul(str(row[key]), key)
        if row.get("status") not in (None, ""):  # how the job ended, for a status replay (status_replay)
            found = status_replay.outcome(no_nul(str(row["status"]), "status"))
            if found is not None:
                kw["outcome"] = found
    except InputError as exc:
        raise InputError(exc.problem, job=job_id, field=exc.field) from None
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


def _duration(value: Any, slot: float) -> int:
    """A recorded run time in seconds -> whole slots, rounded up (at least 1)."""
    slots = max(1, math.ceil(number(value, "duration", strict=True, maximum=math.inf) / slot - 1e-9))
    if slots > MAX_SLOTS:
        raise InputError(f"{_shown(value)} s is more than {MAX_SLOTS:g} slots of {slot:g} s", field="duration")
    return slots


def _upload_delays(value: Any, known: frozenset[str]) -> Mapping[str, int]:
    """Delta_js in whole slots: one number for every server ("*"), or server id / site / "*" -> slots."""
    if not isinstance(value, Mapping):
        return MappingProxyType({"*": integer(value, "upload_delay", maximum=MAX_SLOTS)})
    out = {}
    for k, v in value.items():
        if k not in known:
            raise InputError(
                f"unknown server {k!r} (a server id of the cluster, a site {' or '.join(SITES)}, or *)",
                field=f"upload_delay.{k}",
            )
        out[str(k)] = integer(v, f"upload_delay.{k}", maximum=MAX_SLOTS)
    return MappingProxyType(out)


def _utility(row: Mapping[str, Any]) -> Utility:
    u = row.get("utility")
    src: Mapping[str, Any] = u if isinstance(u, Mapping) else row
    prefix = "utility." if isinstance(u, Mapping) else ""
    kw = {}
    for key in ("priority", "decay", "target"):
        if src.get(key) not in (None, ""):
            kw[key] = number(src[key], prefix + key)
    return Utility(**kw)


def _stages(value: Any, slot: float) -> tuple[Stage, ...]:
    if not isinstance(value, list):
        raise InputError("expected a list of stage objects", field="stages")
    out = []
    for i, s in enumerate(value):
        f = f"stages[{i}]"
        if not isinstance(s, Mapping):
            raise InputError("expected an object", field=f)
        out.append(
            Stage(
                replicas=integer(s.get("replicas", 1), f"{f}.replicas", minimum=1, maximum=MAX_WORKERS),
                forward=number(s.get("forward", 0), f"{f}.forward", maximum=STEP_SECONDS[1]) / slot,
                backward=number(s.get("backward", 0), f"{f}.backward", maximum=STEP_SECONDS[1]) / slot,
                activation_in=number(s.get("activation_in", 0), f"{f}.activation_in"),
                activation_out=number(s.get("activation_out", 0), f"{f}.activation_out"),
                params=number(s.get("params", 0), f"{f}.params"),
            )
        )
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Feasibility: a job that fits nowhere is bad input, not a scheduling outcome.


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
