"""Server failures replayed from a failure trace (docs/formats.md, "Failures"; off by default).

The cluster spec lists failures ``{server, start, end}``: the server is down over the slots
[start, end) (``end`` - ``start`` is its repair time). At ``start``, before the algorithm decides,
the engine stops every job holding resources on the server (a *kill*, not a preemption the
algorithm chose) and books the server's whole capacity until ``end``, so no one can place there.

A killed job loses the work it made since its last checkpoint. A job saves its state whenever its
allocation changes (the state a restart restores: the restart model of docs/formats.md assumes a
planned suspension or move loses no work) and, with ``checkpoint_seconds`` c > 0 in the cluster
spec, every ceil(c / slot_seconds) = C slots of progress after that. A job killed e slots after its
current allocation started progressing at rate r therefore loses r (e - C floor(e / C)) work units
(all r e of them without periodic checkpoints), and nothing if it was still in a restart period.
When it runs again it pays the restart cost as any resumed job (the engine's restart rule).

Instead of (or besides) a trace, ``failure_model`` draws failures per server type (``gpu_model``):
exponential up-times of mean ``mtbf_hours`` (a constant failure rate, the usual reliability model)
and a fixed ``repair_hours``, seeded, one random stream per server.

The validator recomputes every kill and its loss from the placements and progress segments.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

from scheduling.bounds import MAX_RESTART_SECONDS, MAX_SLOTS
from scheduling.errors import InputError
from scheduling.model import Failure, Server

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


def lost_work(rate: float, progress_start: int | None, t: int, checkpoint: int) -> float:
    """Work a job progressing at ``rate`` since ``progress_start`` loses when killed at ``t``."""
    if progress_start is None or t <= progress_start or rate <= 0:
        return 0.0
    elapsed = t - progress_start
    kept = (elapsed // checkpoint) * checkpoint if checkpoint > 0 else 0
    return rate * (elapsed - kept)


def parse_table(value: Any, server_ids: Iterable[str]) -> list[Failure]:
    """The cluster spec's ``failures``: a list of ``{server, start, end}``, slots, start < end."""
    from scheduling.values import integer, text

    if not isinstance(value, list):
        raise InputError("expected a list of {server, start, end}", field="failures")
    known = set(server_ids)
    out: list[Failure] = []
    for i, row in enumerate(value):
        f = f"failures[{i}]"
        if not isinstance(row, Mapping):
            raise InputError("expected an object {server, start, end}", field=f)
        _known_keys(row, ("end", "server", "start"), f)
        for key in ("server", "start", "end"):
            if key not in row:
                raise InputError("missing", field=f"{f}.{key}")
        server = text(row["server"], f"{f}.server")
        if server not in known:
            raise InputError(f"unknown server {server!r}", field=f"{f}.server")
        start = integer(row["start"], f"{f}.start", maximum=MAX_SLOTS)
        end = integer(row["end"], f"{f}.end", maximum=MAX_SLOTS)
        if end <= start:
            raise InputError(f"end {end} must be after start {start}", field=f"{f}.end")
        out.append(Failure(server, start, end))
    return out


def _known_keys(row: Mapping[str, Any], known: tuple[str, ...], field: str) -> None:
    unknown = set(row) - set(known)
    if unknown:
        raise InputError(f"unknown key {sorted(unknown)[0]!r} (known: {', '.join(known)})", field=field)


MAX_GENERATED = 1_000_000
"""Most failures a failure model may generate (a bound on the cluster's size in memory)."""


def generate(value: Any, servers: Sequence[Server], slot_seconds: float) -> list[Failure]:
    """The cluster spec's ``failure_model``: seeded failures per server type (module docstring).

    ``{"seed": int, "until": slot, "servers": [{"gpu_model"?, "mtbf_hours", "repair_hours"}]}``: each
    server of a row's ``gpu_model`` (a row without it: every server no other row names) fails after
    exponentially distributed up-times of mean ``mtbf_hours`` and is down ``repair_hours`` (rounded
    up to whole slots, at least 1) each time, from slot 0 until ``until``."""
    import random  # (only here: a simulate start-up without a failure model does not import it)

    from scheduling.values import integer, no_nul, number

    if not isinstance(value, Mapping):
        raise InputError("expected an object {seed, until, servers}", field="failure_model")
    _known_keys(value, ("seed", "servers", "until"), "failure_model")
    seed = integer(value.get("seed", 0), "failure_model.seed", maximum=2**63)
    if "until" not in value:
        raise InputError("missing (the slot up to which failures are drawn)", field="failure_model.until")
    until = integer(value["until"], "failure_model.until", minimum=1, maximum=MAX_SLOTS)
    rows = value.get("servers")
    if not isinstance(rows, list) or not rows:
        raise InputError(
            "expected a non-empty list of {gpu_model, mtbf_hours, repair_hours}", field="failure_model.servers"
        )
    by_type: dict[str | None, tuple[float, int]] = {}
    for i, row in enumerate(rows):
        f = f"failure_model.servers[{i}]"
        if not isinstance(row, Mapping):
            raise InputError("expected an object {gpu_model, mtbf_hours, repair_hours}", field=f)
        _known_keys(row, ("gpu_model", "mtbf_hours", "repair_hours"), f)
        for key in ("mtbf_hours", "repair_hours"):
            if key not in row:
                raise InputError("missing", field=f"{f}.{key}")
        kind = None if row.get("gpu_model") is None else no_nul(str(row["gpu_model"]), f"{f}.gpu_model")
        if kind in by_type:
            raise InputError(f"a second row for gpu_model {kind!r}", field=f)
        mtbf = number(row["mtbf_hours"], f"{f}.mtbf_hours", strict=True, maximum=1e9) * 3600 / slot_seconds
        repair = number(row["repair_hours"], f"{f}.repair_hours", strict=True, maximum=1e6) * 3600 / slot_seconds
        by_type[kind] = (mtbf, max(1, math.ceil(repair - 1e-9)))
    out: list[Failure] = []
    for k, server in enumerate(servers):
        params = by_type.get(server.gpu_model, by_type.get(None))
        if params is None:
            continue
        mtbf, repair = params
        rng = random.Random(f"{seed}:{k}:{server.id}")  # one stream per server: adding one changes no other
        t = 0.0
        while True:
            t += rng.expovariate(1.0 / mtbf)
            start = math.ceil(t)
            if start >= until:
                break
            out.append(Failure(server.id, start, start + repair))
            if len(out) > MAX_GENERATED:
                raise InputError(f"more than {MAX_GENERATED:,} failures before slot {until}", field="failure_model")
            t = start + repair
    return out


def checked(failures: list[Failure]) -> tuple[Failure, ...]:
    """The failures sorted by (start, server), refusing two of one server that overlap."""
    failures = sorted(failures, key=lambda x: (x.server, x.start))
    for a, b in pairwise(failures):
        if a.server == b.server and b.start < a.end:
            problem = f"server {a.server!r} fails at {b.start} while down over [{a.start}, {a.end})"
            raise InputError(problem, field="failures")
    return tuple(sorted(failures, key=lambda x: (x.start, x.server)))


def checkpoint_slots(value: Any, slot_seconds: float) -> int:
    """``checkpoint_seconds`` -> whole slots, rounded up (0: no periodic checkpoint)."""
    from scheduling.values import number

    seconds = number(value, "checkpoint_seconds", minimum=0, maximum=MAX_RESTART_SECONDS)
    return math.ceil(seconds / slot_seconds - 1e-9) if seconds > 0 else 0


class Timeline:
    """The engine's view of a failure trace: the slots at which servers go down or come back."""

    def __init__(self, failures: tuple[Failure, ...]) -> None:
        self.down_at: dict[int, list[Failure]] = {}
        self.up_at: dict[int, list[Failure]] = {}
        for f in failures:
            self.down_at.setdefault(f.start, []).append(f)
            self.up_at.setdefault(f.end, []).append(f)
        for fs in self.down_at.values():
            fs.sort(key=lambda f: f.server)
        self.slots = sorted(set(self.down_at) | set(self.up_at))
        self.down: dict[str, Failure] = {}  # servers down now

    def next_after(self, t: int) -> int | None:
        i = bisect_right(self.slots, t)
        return self.slots[i] if i < len(self.slots) else None


def expected_kills(doc: Mapping[str, Any], failures: tuple[Failure, ...], checkpoint: int) -> list[dict[str, Any]]:
    """The kills a result's placements and progress imply (validator): every job holding a
    placement on a server up to the slot it fails, with the work lost by ``lost_work``."""
    by_slot: dict[tuple[str, int], Failure] = {(f.server, f.start): f for f in failures}
    # A job completing at that slot completed first; the run processes no failure at its end.
    done = {(j["job_id"], j["completion"]) for j in doc["jobs"] if j["completion"] is not None}
    killed: dict[tuple[str, int], str] = {}
    for p in doc["placements"]:
        f = by_slot.get((p["server"], p["end"]))
        key = (p["job_id"], p["end"])
        if f is None or p["start"] >= p["end"] or key in done or p["end"] >= doc["horizon"]:
            continue
        killed[key] = min(killed.get(key, f.server), f.server)  # the engine goes by server id
    ending: dict[tuple[str, int], Mapping[str, Any]] = {(g["job_id"], g["end"]): g for g in doc["progress"]}
    out = []
    for (job_id, t), server in killed.items():
        g = ending.get((job_id, t))
        lost = 0.0 if g is None else lost_work(g["rate"], g["start"], t, checkpoint)
        out.append({"job_id": job_id, "server": server, "slot": t, "lost_work": lost})
    return sorted(out, key=lambda k: (k["slot"], k["job_id"]))
