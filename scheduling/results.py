"""The result document (DESIGN section 4, schema ``mlsched.result/1``): build, write, read.

``build`` returns the document as plain JSON values (lists of dicts). With ``compact=True`` its
``jobs``, ``placements`` and ``progress`` are ``Rows`` instead: read-only sequences over the run's
own columns whose items are read-only mappings with the same keys and values, built when read (a
row holds two references, not a dict of eight values), so that a million-job result costs tens of
bytes a row until it is written. ``write`` streams either form to the same bytes, row by row.
Readers of the document (the validator, the metrics) see the same values through either form;
code that stores a document elsewhere (``json.dumps``) takes the plain form.
"""

from __future__ import annotations

import math
import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from operator import attrgetter

from scheduling import cjson, metrics, provenance, records, status_replay
from scheduling.cjson import encode_basestring_ascii
from scheduling.engine import JobRecord, Run, restart_share
from scheduling.model import Cluster, Instance
from scheduling.runlog import Segments
from scheduling.speed import demand_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import IO, Any, overload
else:
    Any = object  # (Row's value type, for the type checker)

    from scheduling.runtime_typing import overload


SCHEMA = "mlsched.result/1"

COMPACT_FROM = 20_000
"""Jobs from which ``simulate`` keeps its result compact until it is written (below it, plain rows
validate faster: a dict's look-up is C, a row's is a Python call)."""


def build(
    instance: Instance, run: Run, algorithm: str, params: Mapping[str, Any], seed: int, *, compact: bool = False
) -> dict[str, Any]:
    """The result document of ``run``; ``compact``: its rows as ``Rows`` (module docstring)."""
    cluster = instance.cluster
    jobs = {j.job_id: j for j in instance.jobs}
    rows: tuple[Any, Any, Any]
    if compact and not cluster.replay_status:  # (a status replay marks its job rows: plain rows)
        rows = (_job_rows(run.jobs), _placement_rows(cluster, jobs, run), _progress_rows(run))
    else:
        placements = []
        for p in run.placements:
            demand = demand_of(cluster, jobs[p.job_id], p.role, p.type) or {}
            placements.append(
                {
                    "job_id": p.job_id,
                    "server": p.server,
                    "role": p.role,
                    "type": p.type,
                    "count": p.count,
                    "start": p.start,
                    "end": p.end,
                    "demand": dict(demand),
                }
            )
        progress = [{"job_id": p.job_id, "start": p.start, "end": p.end, "rate": p.rate} for p in run.progress]
        rows = ([job_dict(r) for r in run.jobs], placements, progress)
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "algorithm": algorithm,
        "params": dict(params),
        "seed": seed,
        "horizon": run.horizon,
        "slot_seconds": cluster.slot_seconds,
        "servers": server_list(cluster),
        "metrics": {},
        "jobs": rows[0],
        "placements": rows[1],
        "progress": rows[2],
    }
    own = run.job_restart_slots  # per-job restart costs (scheduling.restart_costs), if declared
    if run.restart_slots or (own and any(own.values())):
        # optional fields (DESIGN section 9): absent when restarts cost nothing
        doc["restart_seconds"] = run.restart_seconds
        doc["restart_slots"] = run.restart_slots
        if own:
            doc["job_restart_slots"] = dict(sorted(own.items()))
        doc["restarts"] = [{"job_id": r.job_id, "start": r.start, "end": r.end} for r in run.restarts]
    if cluster.failures:  # optional fields (scheduling.failures): instances with a failure trace only
        doc["failures"] = [{"server": f.server, "start": f.start, "end": f.end} for f in cluster.failures]
        doc["failure_kills"] = [
            {"job_id": k.job_id, "server": k.server, "slot": k.slot, "lost_work": k.lost_work} for k in run.kills
        ]
    doc.update(run.extra)
    doc.update(provenance.record(instance))  # optional: code version and input digests
    replayed = cluster.replay_status  # recorded failures end as failed/killed (scheduling.status_replay)
    if replayed:
        status_replay.mark({j.job_id: j.outcome for j in instance.jobs if j.outcome is not None}, doc)
    doc["metrics"] = compute_metrics(cluster, doc, None if replayed else run.jobs)
    utilities = {j.job_id: j.utility for j in instance.jobs}
    if metrics.has_utilities(utilities):  # optional OASiS metrics (admission rate, timeliness)
        doc["metrics"].update(metrics.utility_metrics(run.jobs, utilities))
    return doc


def server_list(cluster: Cluster) -> list[dict[str, Any]]:
    return [{"id": s.id, "capacity": dict(s.capacity), "unlimited": s.unlimited} for s in cluster.servers]


def job_dict(r: JobRecord) -> dict[str, Any]:
    return {
        "job_id": r.job_id,
        "arrival": r.arrival,
        "admitted": r.admitted,
        "start": r.start,
        "completion": r.completion,
        "weight": r.weight,
        "utility": r.utility,
        "work_required": r.work_required,
        "work_done": r.work_done,
        "preemptions": r.preemptions,
    }


def job_records(doc: Mapping[str, Any]) -> list[JobRecord]:
    """The job rows as records; a job that ended with a replayed outcome (scheduling.status_replay)
    is not completed, whatever its row's completion (the validator's view sets it to the end)."""
    names = records.names(JobRecord)
    rows = doc["jobs"]
    if isinstance(rows, Rows) and "outcome" not in rows.columns:  # a compact document: by columns
        return list(map(JobRecord, *(rows.columns[k] for k in names)))
    out = []
    for j in rows:
        values = {k: j[k] for k in names}
        if j.get("outcome") is not None:
            values["completion"] = None
        out.append(JobRecord(**values))
    return out


def compute_metrics(
    cluster: Cluster, doc: Mapping[str, Any], records: Sequence[JobRecord] | None = None
) -> dict[str, Any]:
    """Metrics recomputed from a result's ``jobs`` and ``placements`` (used by build and validator).
    ``records``: the records ``doc["jobs"]`` was written from, when the caller has them (build)."""
    capacity = {r: cluster.total_capacity(r) for r in cluster.resource_names()}
    rows = doc["placements"]
    used: Iterable[metrics.Usage] | metrics.Spans
    if isinstance(rows, Rows):  # a compact document: its columns read as they are
        unlimited = {s["id"] for s in doc["servers"] if s["unlimited"]}
        cols = rows.columns
        limited = [server not in unlimited for server in cols["server"]] if unlimited else None
        used = metrics.Spans(cols["start"], cols["end"], cols["count"], cols["demand"], limited)
    else:
        used = usages(doc)
    out = metrics.compute(job_records(doc) if records is None else records, used, capacity, doc["horizon"])
    k = int(doc.get("restart_slots", 0) or 0)
    seconds = float(doc.get("restart_seconds", 0) or 0) if k else 0.0
    share = restart_share(seconds, cluster, doc.get("job_restart_slots") is not None)
    out.update(metrics.restart_metrics(restart_usages(doc), k, share))
    if "status_replay" in doc:  # a cluster replaying recorded job outcomes only
        out.update(status_replay.metrics(doc))
    if "failure_kills" in doc:  # instances with a failure trace only
        out["failure_kills"] = len(doc["failure_kills"])
        out["lost_work"] = float(sum(k["lost_work"] for k in doc["failure_kills"]))
    return out


def restart_usages(doc: Mapping[str, Any]) -> list[metrics.Usage]:
    """Each restart period as the resources its job held during it (its allocation is constant then)."""
    periods = doc.get("restarts") or []
    if not periods:
        return []
    by_job: dict[str, list[Mapping[str, Any]]] = {}
    for p in doc["placements"]:
        by_job.setdefault(p["job_id"], []).append(p)
    unlimited = {s["id"] for s in doc["servers"] if s["unlimited"]}
    out = []
    for r in periods:
        held: dict[str, float] = {}
        limited = True
        for p in by_job.get(r["job_id"], ()):
            if p["start"] <= r["start"] < p["end"]:
                limited = limited and p["server"] not in unlimited
                for resource, amount in p["demand"].items():
                    held[resource] = held.get(resource, 0.0) + amount * p["count"]
        out.append(metrics.Usage(start=r["start"], end=r["end"], demand=held, limited=limited))
    return out


def usages(doc: Mapping[str, Any]) -> Iterator[metrics.Usage]:
    """The result's placements as resource usage (count x per-instance demand), one at a time."""
    unlimited = {s["id"] for s in doc["servers"] if s["unlimited"]}
    for p in doc["placements"]:
        yield metrics.Usage(
            start=p["start"],
            end=p["end"],
            demand={r: a * p["count"] for r, a in p["demand"].items()},
            limited=p["server"] not in unlimited,
        )


def utilization_timeline(doc: Mapping[str, Any]) -> dict[str, list[tuple[int, float]]]:
    """Utilisation per resource over time, from the result document alone (for charts)."""
    capacity: dict[str, float] = {}
    for s in doc["servers"]:
        if not s["unlimited"]:
            for r, a in s["capacity"].items():
                capacity[r] = capacity.get(r, 0.0) + a
    return metrics.utilization_timeline(usages(doc), capacity)


def write(doc: Mapping[str, Any], path: Path | str) -> None:
    """Write ``doc`` as compact JSON, its rows streamed one at a time (the bytes of
    ``json.dumps(doc, separators=(",", ":"))`` plus a newline, in either form of the document),
    making its folder (os, not pathlib: start-up)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        dump(doc, out)
        out.write("\n")


def dump(doc: Mapping[str, Any], out: IO[str]) -> None:
    """``doc`` as compact JSON on ``out``; lists and ``Rows`` of it written row by row."""
    encode = cjson.compact  # json.JSONEncoder(separators=(",", ":")).encode, without importing json
    out.write("{")
    for n, (key, value) in enumerate(doc.items()):
        out.write(("," if n else "") + encode(key) + ":")
        if isinstance(value, Rows):
            out.write("[")
            for i in range(0, len(value), ROWS_AT_ONCE):  # a batch of rows at a time: few, short writes
                out.write(("," if i else "") + _encoded_rows(value.columns, i, i + ROWS_AT_ONCE, encode))
            out.write("]")
        elif isinstance(value, list) and len(value) > ROWS_AT_ONCE:
            out.write("[")
            for i in range(0, len(value), ROWS_AT_ONCE):
                part = encode([r.as_dict() if isinstance(r, Row) else r for r in value[i : i + ROWS_AT_ONCE]])
                out.write(("," if i else "") + part[1:-1])
            out.write("]")
        else:
            out.write(encode(value))
    out.write("}")


ROWS_AT_ONCE = 4096
"""Rows encoded per write by ``dump``."""


def _encoded_rows(columns: Mapping[str, Sequence[Any]], i: int, j: int, encode: Callable[[Any], str]) -> str:
    """Rows ``i:j`` of ``columns`` as ``encode`` writes the list of their dicts, without its
    brackets: each column's values encoded at once (``_encoded``), then joined row by row with
    the keys in between (a row is never built as a dict)."""
    names = list(columns)
    template = "{" + ",".join(encode(n).replace("%", "%%") + ":%s" for n in names) + "}"
    parts = [_encoded(columns[n][i:j], encode) for n in names]
    return ",".join([template % row for row in zip(*parts, strict=True)])


def _encoded(values: Sequence[Any], encode: Callable[[Any], str]) -> Sequence[str]:
    """Each of ``values`` as ``encode`` (a compact ``json.JSONEncoder``'s) writes it, per column kind:
    ints and floats by their ``repr`` (as json; non-finite floats through ``encode``), strings by
    json's own escaping, bools and None by name, and any other value through ``encode``, once
    per distinct object (a compact result's demand dicts are shared)."""
    if isinstance(values, array):
        if values.typecode == "q":
            return list(map(int.__repr__, values))
        if values.typecode == "d" and all(map(math.isfinite, values)):
            return list(map(float.__repr__, values))
        return list(map(encode, values))
    kinds = set(map(type, values))
    if kinds == {str}:
        return list(map(encode_basestring_ascii, values))
    if kinds <= {int, type(None)}:
        return ["null" if v is None else int.__repr__(v) for v in values]
    if kinds == {bool}:
        return ["true" if v else "false" for v in values]
    if kinds == {dict}:
        done: dict[int, str] = {}
        return [done.get(id(v)) or done.setdefault(id(v), encode(v)) for v in values]
    return list(map(encode, values))


def read(path: Path | str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        doc: dict[str, Any] = cjson.loads(f.read())
    return doc


class Row(Mapping[str, Any]):
    """One row of ``Rows``: a read-only mapping of the row's keys to its values."""

    __slots__ = ("_cols", "_i")

    def __init__(self, columns: dict[str, Sequence[Any]], i: int) -> None:
        self._cols = columns  # the Rows' columns (shared by every row)
        self._i = i

    def __getitem__(self, key: str) -> Any:
        return self._cols[key][self._i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._cols)

    def __len__(self) -> int:
        return len(self._cols)

    def as_dict(self) -> dict[str, Any]:
        i = self._i
        return {key: column[i] for key, column in self._cols.items()}

    def __eq__(self, other: object) -> bool:
        return self.as_dict() == (other.as_dict() if isinstance(other, Row) else other)

    __hash__ = None  # type: ignore[assignment]  # as a dict

    def __repr__(self) -> str:
        return repr(self.as_dict())


class Rows(Sequence[Row]):
    """Rows of a compact document: ``columns`` maps each key, in row order, to its values (a
    sequence per key, all of one length). Equal to a list of the equal dicts."""

    __slots__ = ("columns",)

    def __init__(self, columns: Mapping[str, Sequence[Any]]) -> None:
        self.columns = dict(columns)

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), ()))

    @overload
    def __getitem__(self, i: int) -> Row: ...

    @overload
    def __getitem__(self, i: slice) -> list[Row]: ...  # noqa: F811 (overload: not typing's at run time)

    def __getitem__(self, i: int | slice) -> Row | list[Row]:  # noqa: F811
        if isinstance(i, slice):
            return [Row(self.columns, k) for k in range(len(self))[i]]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return Row(self.columns, i % len(self))

    def __iter__(self) -> Iterator[Row]:
        columns = self.columns
        return (Row(columns, k) for k in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Rows | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def _packed(values: list[Any]) -> Sequence[Any]:
    """``values`` in an ``array`` when they are all ints (not bools) or all floats, so that they
    read back as the same JSON values (8 bytes each instead of a reference and an object), else as given."""
    kinds = set(map(type, values))
    if kinds == {int}:
        try:
            return array("q", values)
        except OverflowError:
            return values
    if kinds == {float}:
        return array("d", values)
    return values


def _job_rows(records: Sequence[JobRecord]) -> Rows:
    names = records_names()
    return Rows({n: _packed(list(map(attrgetter(n), records))) for n in names})


def records_names() -> tuple[str, ...]:
    """The keys of a ``jobs`` row, in order (as ``job_dict``)."""
    return tuple(job_dict(JobRecord("", 0, False, None, None, 0.0, 0.0, 0.0, 0.0, 0)))


def _placement_rows(cluster: Cluster, jobs: Mapping[str, Any], run: Run) -> Rows:
    """The placements' columns; each distinct per-instance demand is one shared (read-only) dict."""
    columns = {n: _column(run.placements, n) for n in ("job_id", "server", "role", "type", "count", "start", "end")}
    shared: dict[tuple[tuple[str, float], ...], dict[str, float]] = {}
    demands = []
    for job_id, role, type_id in zip(columns["job_id"], columns["role"], columns["type"], strict=True):
        demand = demand_of(cluster, jobs[job_id], role, type_id) or {}
        key = tuple(demand.items())
        demands.append(shared.get(key) or shared.setdefault(key, dict(demand)))
    return Rows({**columns, "demand": demands})


def _progress_rows(run: Run) -> Rows:
    return Rows({n: _column(run.progress, n) for n in ("job_id", "start", "end", "rate")})


def _column(items: Sequence[Any], name: str) -> Sequence[Any]:
    """Field ``name`` of every item, packed (``_packed``); read from a run's columns where it has them."""
    if isinstance(items, Segments):
        return items.column(name)
    return _packed(list(map(attrgetter(name), items)))
