"""The schedule validator (DESIGN section 5): every result is checked before it is stored or shown.

It works on the result *document* (as written to JSON), so the CLI's ``check`` can validate a file
produced by anyone, and it recomputes everything from the instance rather than trusting the result:
per-instance demands, work rates and metrics.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import chain
from operator import itemgetter

from scheduling import failures, metrics, restart_costs, slot_rules, status_replay, storage
from scheduling.engine import data_ready, restart_share
from scheduling.model import Instance, Job, Server
from scheduling.results import SCHEMA, compute_metrics, job_records, server_list
from scheduling.slot_rules import ps_reservations, worker_counts
from scheduling.speed import (
    Allocation,
    demand_of,
    is_edge_cloud,
    needs_ps,
    rate,
    typed_demand,
)
from scheduling.validator_rows import ByJob, column, records_of, row_reader
from scheduling.validator_rows import check_capacity as _check_capacity

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


__all__ = [  # worker_counts and ps_reservations (scheduling.slot_rules) are importable from here as before
    "LATER_METRICS",
    "PROBLEMS_SHOWN",
    "PS_RULES",
    "RESERVATION_RULES",
    "WORK_TOLERANCE",
    "MalformedResult",
    "check_document",
    "ps_reservations",
    "validate",
    "worker_counts",
]

WORK_TOLERANCE = 1e-6

PS_RULES = ("oasis", "dorm", "offline-opt")
"""Algorithms whose results must also meet OASiS's (6) and (7) in every slot (seeds/001)."""

LATER_METRICS = (
    "completed_weight",
    "avg_wait",
    "restarts",
    "restart_gpu_slots",
    *(f"{name}_censored" for name in metrics.CENSORED),
)
"""Metrics added to mlsched.result/1 after its first documents: checked when a result reports them."""

RESERVATION_RULES = ("zhou", "zhou-maxweight", "jain-greedy")
"""Algorithms whose PS jobs on typed PSs must meet Zhou et al.'s (2i) on any cluster (their own
(13d)); on a cluster that declares ``network.ps_bandwidth_reservation`` every algorithm must."""


PROBLEMS_SHOWN = 50


class MalformedResult(ValueError):
    """The document is not a result document: not a JSON object, or a field missing or of the wrong type."""


def validate(instance: Instance, doc: Any, limit: int = PROBLEMS_SHOWN) -> list[str]:
    """Problems found in ``doc`` (empty if the schedule is valid); at most ``limit`` of them. A
    malformed document ends the list with a "malformed result: ..." problem."""
    problems: list[str] = []
    try:
        check_document(instance, doc, problems)
    except MalformedResult as exc:
        problems.append(f"malformed result: {exc}")
    return problems[:limit]


def check_document(instance: Instance, doc: Any, problems: list[str]) -> None:
    """Append the problems of ``doc`` to ``problems``; MalformedResult if it is not a result document."""
    if not isinstance(doc, Mapping):
        raise MalformedResult(f"expected a JSON object, found {type(doc).__name__}")
    try:
        _validate(instance, doc, problems)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise MalformedResult(f"{type(exc).__name__}: {exc}") from None


def _validate(instance: Instance, doc: Mapping[str, Any], problems: list[str]) -> None:
    cluster = instance.cluster
    # A replay of recorded failures (scheduling.status_replay): its fields checked here, the
    # schedule below with each ended job seen as completing when it ended.
    outcomes = {j.job_id: j.outcome for j in instance.jobs if j.outcome is not None}
    doc = status_replay.engine_view(outcomes, cluster.replay_status, doc, problems)
    if doc.get("schema") != SCHEMA:
        problems.append(f"schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    if doc["servers"] != server_list(cluster):
        problems.append("servers differ from the cluster's expanded server list")
    # The document is read job by job without a list of rows per job: each row is found by its
    # position (scheduling.validator_rows), so that a million-job result is checked in little more memory than
    # it takes itself (bench/RESULTS.md, "A million jobs on one machine").
    trace = instance.jobs
    index = {j.job_id: i for i, j in enumerate(trace)}  # job id -> its (last) position in the trace
    rows = doc["jobs"]
    row_of = array("q", [-1]) * len(trace)  # trace position -> the job's (last) row
    order = array("q")  # trace positions in the order the rows first name them
    known = True
    for k, job_id in enumerate(column(rows, "job_id")):
        i = index.get(job_id, -1)
        if i < 0:
            known = False
            continue
        if row_of[i] < 0:
            order.append(i)
        row_of[i] = k
    if not known or len(order) != len(index):
        problems.append("jobs in the result differ from the trace's jobs")
        return
    servers = {s.id: s for s in cluster.servers}
    limited = {s.id for s in cluster.servers if not s.unlimited}
    on_server: dict[str, array[int]] = {}  # limited server -> its placements (positions), servers in order of use
    held_by = ByJob(len(trace), len(doc["placements"]))  # a job's placements, where its job and server are known
    every_server_known = True
    # The demand of a role and type for the jobs given their types' demands (most jobs; speed.typed_demand):
    # the same for every such job.
    typed: dict[tuple[str, str], dict[str, float] | None] = {}
    for x, p in enumerate(doc["placements"]):
        i = index.get(p["job_id"], -1)
        server_id = p["server"]
        if server_id in limited:
            at = on_server.get(server_id)
            if at is None:
                at = on_server[server_id] = array("q")
            at.append(x)
        server = servers.get(server_id)
        if i < 0 or server is None:
            problems.append(f"{_where(p)}: unknown job or server")
            every_server_known = every_server_known and server is not None
            continue
        job = trace[i]
        if p["start"] < job.arrival:
            problems.append(f"{_where(p)}: starts before the job arrives at {job.arrival}")
        if p["end"] <= p["start"] or p["count"] <= 0:
            problems.append(f"{_where(p)}: empty interval or non-positive count")
        role = p["role"]
        if not server.accepts(role):
            problems.append(f"{_where(p)}: a {role} on a {server.pool}-pool server")
        if typed_demand(job):
            kind = (role, p["type"])
            if kind in typed:
                demand = typed[kind]
            else:
                of_type = demand_of(cluster, job, role, p["type"])
                demand = typed[kind] = None if of_type is None else dict(of_type)
        else:
            of_job = demand_of(cluster, job, role, p["type"])
            demand = None if of_job is None else dict(of_job)
        if demand is None or (demand != p["demand"] and not metrics.close(demand, p["demand"])):
            problems.append(f"{_where(p)}: demand {p['demand']} is not the {role} type {p['type']!r} demand")
        held_by.add(i, x)
    held_by.done()
    _check_capacity(instance, doc, problems, on_server)
    del on_server
    problems.extend(storage.check(instance, doc))
    made_by = ByJob(len(trace), len(doc["progress"]))  # a job's progress segments
    for x, job_id in enumerate(column(doc["progress"], "job_id")):
        i = index.get(job_id, -1)
        if i >= 0:
            made_by.add(i, x)
    made_by.done()
    restarts: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for rp in doc.get("restarts") or []:
        if rp["job_id"] not in index:
            problems.append(f"restart period of unknown job {rp['job_id']!r}")
            continue
        restarts[rp["job_id"]].append(rp)
    k = int(doc.get("restart_slots", 0))
    own = restart_costs.job_slots(instance)  # per-job restart costs, recomputed from the instance
    if own is not None and (any(own.values()) or "job_restart_slots" in doc):
        reported = doc.get("job_restart_slots")
        if reported != dict(sorted(own.items())):
            shown = "none" if reported is None else f"{len(reported)} entries"
            problems.append(
                f"job_restart_slots: {shown} reported, the instance's per-job restart costs give {len(own)} jobs"
            )
    share = restart_share(float(doc.get("restart_seconds", 0) or 0) if k else 0.0, cluster, own is not None)
    one_ps_rule = is_edge_cloud(cluster)  # (_check_job's edge-cloud rule: never on the short path)
    delays = any(s.upload_delay for s in cluster.servers) or any(j.upload_delay for j in instance.jobs)
    lost = _check_failures(instance, doc, problems)  # job id -> work lost to server failures
    ps_rules = doc.get("algorithm") in PS_RULES
    counted: list[tuple[int, str]] | None = [] if every_server_known else None  # (first placement, problem)
    row, placement, segment = row_reader(rows), row_reader(doc["placements"]), row_reader(doc["progress"])
    for i in order:
        job = trace[i]
        job_id, r = job.job_id, row(row_of[i])
        held, made = held_by.rows(i, placement), made_by.rows(i, segment)
        if counted is not None and held:
            counted.extend((held_by.first(i), c) for c in slot_rules.job_worker_counts(job, held, ps_rules))
        if (
            len(held) == 1
            and not one_ps_rule
            and not delays
            and job_id not in restarts
            and job_id not in lost
            and _one_placement_valid(instance, job, r, held[0], made)
        ):
            continue
        timeline = _Timeline(instance, job, held)
        _check_job(instance, job, r, held, made, problems, timeline, share, *lost.get(job_id, (0.0, 0)))
        k_job = k if own is None else own.get(job_id, k)
        _check_restarts(
            instance,
            job,
            r,
            held,
            made,
            restarts.get(job_id, []),
            (k_job, share),
            problems,
            timeline,
            servers if delays else None,
        )
    del index, row_of, order, held_by, made_by
    if counted is None:  # (a placement on an unknown server: counted with the job's other placements)
        problems.extend(worker_counts(instance, doc, ps_rules=ps_rules))
    else:  # in the order of each job's first placement, as worker_counts gives them
        problems.extend(c for _, c in sorted(counted, key=itemgetter(0)))
    problems.extend(ps_reservations(instance, doc, always=doc.get("algorithm") in RESERVATION_RULES))
    _check_horizon(doc, problems)
    recomputed = compute_metrics(cluster, doc, records_of(rows))
    if "timeliness" in doc["metrics"]:  # optional OASiS metrics, recomputed from the trace's utilities
        recomputed.update(metrics.utility_metrics(job_records(doc), {j.job_id: j.utility for j in instance.jobs}))
    for key, value in recomputed.items():
        if key in LATER_METRICS and key not in doc["metrics"]:
            continue  # a result written before the metric existed
        if not metrics.close(value, doc["metrics"].get(key)):
            problems.append(f"metric {key}: reported {doc['metrics'].get(key)!r}, recomputed {value!r}")


def _check_failures(instance: Instance, doc: Mapping[str, Any], problems: list[str]) -> dict[str, tuple[float, int]]:
    """The failure trace (scheduling.failures): the result lists the cluster's failures, holds nothing
    on a server while it is down, and lists exactly the kills its placements imply, each with the
    work its checkpoints lose. Returns per killed job the work lost (what its progress made but
    lost) and its kills (suspensions that are not preemptions)."""
    cluster = instance.cluster
    if not cluster.failures:
        if doc.get("failure_kills"):
            problems.append("failure_kills reported, but the cluster has no failure trace")
        return {}
    listed = [{"server": f.server, "start": f.start, "end": f.end} for f in cluster.failures]
    if doc.get("failures") != listed:
        problems.append(f"failures {doc.get('failures')!r}, the cluster's failure trace is {listed!r}")
    down: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for f in cluster.failures:
        down[f.server].append((f.start, f.end))
    for p in doc["placements"]:
        for start, end in down.get(p["server"], ()):
            if p["start"] < end and start < p["end"]:
                problems.append(f"{_where(p)}: the server is down over [{start}, {end})")
    expected = failures.expected_kills(doc, cluster.failures, cluster.checkpoint_slots)
    reported = sorted(doc.get("failure_kills") or [], key=lambda k: (k["slot"], k["job_id"]))
    same = len(reported) == len(expected) and all(
        (r["job_id"], r["server"], r["slot"]) == (e["job_id"], e["server"], e["slot"])
        and metrics.close(r["lost_work"], e["lost_work"])
        for r, e in zip(reported, expected, strict=True)
    )
    if not same:
        shown = [(e["job_id"], e["server"], e["slot"], e["lost_work"]) for e in expected]
        problems.append(f"failure_kills: {len(reported)} reported, the placements and checkpoints give {shown}")
    lost: dict[str, tuple[float, int]] = {}
    for e in expected:
        work, kills = lost.get(e["job_id"], (0.0, 0))
        lost[e["job_id"]] = (work + e["lost_work"], kills + 1)
    return lost


def _check_horizon(doc: Mapping[str, Any], problems: list[str]) -> None:
    """The horizon is the slot the run ended at: no placement, work or completion after it (the
    censored metrics count an unfinished job as completing then)."""
    horizon = doc["horizon"]
    if isinstance(horizon, bool) or not isinstance(horizon, int):
        raise TypeError(f"horizon {horizon!r} is not a whole slot")
    completions = (c for c in column(doc["jobs"], "completion") if c is not None)
    ends = chain(column(doc["placements"], "end"), column(doc["progress"], "end"), completions)
    last = max(ends, default=horizon)
    if last > horizon:
        problems.append(f"horizon {horizon}: the run has a placement, work or completion until slot {last}")


def _where(p: Mapping[str, Any]) -> str:
    return f"placement of job {p['job_id']!r} on {p['server']!r} [{p['start']}, {p['end']})"


Held = tuple[tuple["Any", "Any", "Any", "Any"], ...]  # (server, role, type, count) of each placement held


class _Timeline:
    """One job's placements as what it holds between its change points (placement starts and
    ends), and the rate of each distinct holding, computed once for _check_job and _check_restarts
    (a job's segments and change points mostly repeat the same few holdings)."""

    def __init__(self, instance: Instance, job: Job, placements: list[Mapping[str, Any]]) -> None:
        self.instance, self.job = instance, job
        self.points = sorted({p["start"] for p in placements} | {p["end"] for p in placements})
        # What it holds from each change point to the next, in placement order: a sweep over the
        # change points, placement i held at c when its start <= c < its end.
        begins: dict[Any, list[int]] = defaultdict(list)
        ends: dict[Any, list[int]] = defaultdict(list)
        for i, p in enumerate(placements):
            if p["start"] < p["end"]:
                begins[p["start"]].append(i)
                ends[p["end"]].append(i)
        live: set[int] = set()
        self.held: list[Held] = []
        for c in self.points:
            live.difference_update(ends.get(c, ()))
            live.update(begins.get(c, ()))
            self.held.append(
                tuple(
                    [(p["server"], p["role"], p["type"], p["count"]) for p in map(placements.__getitem__, sorted(live))]
                )
            )
        self._rates: dict[tuple[tuple[Any, Any, Any, Any], ...], float] = {}

    def held_at(self, t: int) -> Held:
        i = bisect_right(self.points, t) - 1
        return self.held[i] if i >= 0 else ()

    def inside(self, start: int, end: int) -> Sequence[int]:
        """The change points strictly between ``start`` and ``end``."""
        return self.points[bisect_right(self.points, start) : bisect_left(self.points, end)]

    def rate(self, held: Sequence[tuple[Any, Any, Any, Any]]) -> float:
        """speed.rate of the job on ``held``, once per distinct holding."""
        key = tuple(held)
        value = self._rates.get(key)
        if value is None:
            allocs = [Allocation(self.job.job_id, *a) for a in held]
            value = self._rates[key] = rate(self.instance.cluster, self.job, allocs)
        return value


def _check_job(
    instance: Instance,
    job: Job,
    r: Mapping[str, Any],
    placements: list[Mapping[str, Any]],
    progress: list[Mapping[str, Any]],
    problems: list[str],
    timeline: _Timeline,
    share: float = 0.0,
    lost: float = 0.0,
    kills: int = 0,
) -> None:
    name = f"job {job.job_id!r}"
    if not r["admitted"] and (placements or progress):
        problems.append(f"{name}: not admitted but holds resources")
    # work made minus what server failures lost since the job's last checkpoints (scheduling.failures)
    done = sum([(g["end"] - g["start"]) * g["rate"] for g in progress]) - lost
    if not metrics.close(done, r["work_done"], WORK_TOLERANCE):
        problems.append(f"{name}: work_done {r['work_done']} but progress sums to {done}")
    required = job.work_required
    if not metrics.close(required, r["work_required"]):
        problems.append(f"{name}: work_required {r['work_required']}, the trace says {required}")
    first = min([p["start"] for p in placements], default=None)
    if r["start"] != first:
        problems.append(f"{name}: start {r['start']} but its first placement starts at {first}")
    completion = r["completion"]
    if completion is not None:
        if done + WORK_TOLERANCE * max(1.0, required) < required:
            problems.append(f"{name}: completed at {completion} with {done} of {required} work done")
        last = max([g["end"] for g in progress], default=None)
        if last != completion:
            problems.append(f"{name}: completion {completion} but its last progress ends at {last}")
        if any(p["end"] > completion for p in placements):
            problems.append(f"{name}: holds resources after completing at {completion}")
    for g in progress:
        if g["start"] < job.arrival or g["rate"] <= 0:
            problems.append(f"{name}: progress [{g['start']}, {g['end']}) before arrival or at rate {g['rate']}")
            continue
        # The rate must be what the job's placements allow at every change point inside the segment.
        for t in (g["start"], *timeline.inside(g["start"], g["end"])):
            expected = timeline.rate(timeline.held_at(t))
            if share and g["end"] - g["start"] == 1 and metrics.close(expected * share, g["rate"]):
                break  # the last slot of a restart period (_check_restarts checks that it is one)
            if not metrics.close(expected, g["rate"]):
                problems.append(f"{name}: rate {g['rate']} at slot {t}, its placements give {expected}")
                break
    if is_edge_cloud(instance.cluster) and needs_ps(instance.cluster, job):
        _check_one_ps(name, placements, problems)
    # each suspension is a placement starting after the ones before it ended: at most all but one
    # (a kill by a server failure is a suspension the algorithm did not choose: scheduling.failures)
    if r["preemptions"] + kills < len(placements) - 1:
        suspensions = _suspensions(placements)
        if r["preemptions"] + kills < suspensions:
            problems.append(f"{name}: {r['preemptions']} preemptions reported, {suspensions} suspensions seen")


def _one_placement_valid(
    instance: Instance, job: Job, r: Mapping[str, Any], p: Mapping[str, Any], progress: list[Mapping[str, Any]]
) -> bool:
    """Whether a job with one placement and no restart period passes every check of _check_job and
    _check_restarts, with the same sums and comparisons; False (also for anything unexpected in the
    document) sends it to those checks, which say what is wrong. Most jobs of a run hold one
    placement: they are checked here without building their _Timeline.

    With one placement [s, e) the job's change points are s and e; it holds that placement from s
    and nothing from e. A progress segment passes if it starts in [s, e), ends by e (else the
    change point e inside it holds nothing) and goes at the placement's rate. No restart is due:
    the allocation is the job's first.
    """
    try:
        s, e = p["start"], p["end"]
        if not (r["admitted"] and r["start"] == s and s < e and r["preemptions"] >= 0):
            return False
        required = job.work_required
        done = sum([(g["end"] - g["start"]) * g["rate"] for g in progress])
        if not (metrics.close(done, r["work_done"], WORK_TOLERANCE) and metrics.close(required, r["work_required"])):
            return False
        held = rate(instance.cluster, job, [Allocation(job.job_id, p["server"], p["role"], p["type"], p["count"])])
        for g in progress:
            start, end = g["start"], g["end"]
            if not (
                s <= start < end <= e and start >= job.arrival and g["rate"] > 0 and metrics.close(held, g["rate"])
            ):
                return False
        completion = r["completion"]
        if completion is not None:
            last = max([g["end"] for g in progress], default=None)
            if done + WORK_TOLERANCE * max(1.0, required) < required or last != completion or e > completion:
                return False
        stop = e if completion is None else min(e, completion)
        due = stop - s if stop > s and held > 0 else 0
        return bool(sum([g["end"] - g["start"] for g in progress]) == due)
    except (AttributeError, KeyError, TypeError, ValueError):
        return False


def _check_restarts(
    instance: Instance,
    job: Job,
    r: Mapping[str, Any],
    placements: list[Mapping[str, Any]],
    progress: list[Mapping[str, Any]],
    reported: list[Mapping[str, Any]],
    cost: tuple[int, float],
    problems: list[str],
    timeline: _Timeline,
    servers: Mapping[str, Server] | None = None,
) -> None:
    """DESIGN section 9: restart periods where the rule puts them, and progress exactly outside them.

    The job's allocation is constant between change points (placement starts and ends). Each time
    it changes to a non-empty allocation after the job has held one before (a resume, a move, a
    resize), a restart of ``k`` slots begins, cut short by the next change (``cost`` = (k, share): in
    the last slot of an uncut period the job progresses at ``share`` x its rate, engine.restart_share;
    with share 0 it makes no progress there either). With ``servers`` (a
    cluster with upload delays), an allocation whose workers use a server the job's data has not
    reached (r_j + Delta_js) makes no progress until the data is on all of them (engine.data_ready),
    also cut short by the next change: an upload wait. The job must progress (at the rate its
    placements give, checked in _check_job) whenever it holds an allocation with a positive rate
    outside restart periods and upload waits, until it completes, and never during one.
    """
    name = f"job {job.job_id!r}"
    k, share = cost
    partial: dict[int, float] = {}  # last slot of a restart period -> the job's rate in it
    held_at: list[tuple[int, frozenset[tuple[str, str, str, int]]]] = []
    for c, in_order in zip(timeline.points, timeline.held, strict=True):
        held = frozenset(in_order)
        if not held_at or held != held_at[-1][1]:
            held_at.append((c, held))
    expected: list[tuple[int, int]] = []
    waits: list[tuple[int, int]] = []  # upload waits [start, end)
    due = 0  # slots of the job holding an allocation with a positive rate, outside restart periods
    last: frozenset[tuple[str, str, str, int]] | None = None
    previous: frozenset[tuple[str, str, str, int]] = frozenset()
    end_of_work = r["completion"]
    for i, (c, held) in enumerate(held_at):
        nxt = held_at[i + 1][0] if i + 1 < len(held_at) else c
        if held:
            begin = c
            first: int | None = None  # the slot of a restart period's reduced rate
            if k and last is not None and (not previous or held != last):
                expected.append((c, min(c + k, nxt)))
                begin = c + k - 1 if share else c + k
                first = begin if share else None
            if servers is not None:
                ready = min(data_ready(servers, job, [Allocation(job.job_id, *a) for a in held]), nxt)
                if ready > begin:
                    waits.append((begin, ready))
                    begin, first = ready, None
            last = held
            stop = nxt if end_of_work is None else min(nxt, end_of_work)
            speed = timeline.rate(tuple(held))
            if stop > begin and speed > 0:
                due += stop - begin
                if first is not None:
                    partial[first] = speed * share
        previous = held
    seen = sorted([(p["start"], p["end"]) for p in reported])
    if seen != expected:
        problems.append(f"{name}: restart periods {seen}, the restart rule ({k} slots) gives {expected}")
        return
    for start, end in seen:
        for g in progress:
            if (
                g["start"] < end
                and start < g["end"]
                and not (
                    g["start"] in partial
                    and g["end"] == g["start"] + 1
                    and metrics.close(partial[g["start"]], g["rate"])
                )
            ):
                problems.append(f"{name}: progresses during its restart period [{start}, {end})")
                return
    reduced = {g["start"] for g in progress if g["end"] - g["start"] == 1 and g["start"] in partial}
    if reduced != set(partial):
        problems.append(
            f"{name}: progress at {share:g} x its rate in the last slot of each restart period expected at "
            f"{sorted(partial)}, found at {sorted(reduced)}"
        )
        return
    for g in progress:
        one = share and g["end"] - g["start"] == 1 and g["start"] not in partial
        if one and not metrics.close(timeline.rate(timeline.held_at(g["start"])), g["rate"]):
            problems.append(f"{name}: reduced rate at slot {g['start']} outside a restart period")
            return
    for start, end in waits:
        if any(g["start"] < end and start < g["end"] for g in progress):
            problems.append(
                f"{name}: progresses over [{start}, {end}) before its data reaches every server its workers use "
                "(upload delay)"
            )
            return
    worked = sum([g["end"] - g["start"] for g in progress])
    if worked != due:
        problems.append(
            f"{name}: progresses for {worked} slots, but holds a working allocation outside restarts for {due}"
        )


def _check_one_ps(name: str, placements: list[Mapping[str, Any]], problems: list[str]) -> None:
    """Edge-cloud paper (2e)/(4c): a PS job holds exactly one PS in every slot it holds a worker."""
    deltas: dict[int, list[int]] = defaultdict(lambda: [0, 0])  # slot -> [worker change, PS change]
    for p in placements:
        k = 0 if p["role"] == "worker" else 1
        deltas[p["start"]][k] += p["count"]
        deltas[p["end"]][k] -= p["count"]
    workers = ps = 0
    for t in sorted(deltas):
        workers, ps = workers + deltas[t][0], ps + deltas[t][1]
        if workers > 0 and ps != 1:
            problems.append(f"{name}: holds {ps} PSs at slot {t} while it runs workers (expected one)")
            return


def _suspensions(placements: list[Mapping[str, Any]]) -> int:
    """Times the job went from holding resources to holding none before it completed."""
    intervals = sorted([(p["start"], p["end"]) for p in placements])
    count, reach = 0, None
    for start, end in intervals:
        if reach is not None and start > reach:
            count += 1
        reach = end if reach is None else max(reach, end)
    return count
