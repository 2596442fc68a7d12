"""Metrics: pure functions over finished-job records and placements. Missing values are None."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from scheduling.engine import JobRecord
from scheduling.model import Utility
from scheduling.records import record


@record
class Usage:
    """One placement segment reduced to what utilisation needs."""

    start: int
    end: int
    demand: Mapping[str, float]  # total demand of the segment (count x per-instance demand)
    limited: bool  # on a server with finite capacity


class Spans:
    """Placement segments as columns (a compact result's): what ``utilization`` reads of each
    ``Usage``, whose demand is ``count`` x the per-instance ``demand``; ``limited`` None: all are."""

    __slots__ = ("count", "demand", "end", "limited", "start")

    def __init__(
        self,
        start: Sequence[int],
        end: Sequence[int],
        count: Sequence[int],
        demand: Sequence[Mapping[str, float]],  # per instance
        limited: Sequence[bool] | None,
    ) -> None:
        self.start, self.end, self.count, self.demand, self.limited = start, end, count, demand, limited


def compute(
    jobs: Sequence[JobRecord],
    usages: Iterable[Usage] | Spans,
    capacity: Mapping[str, float],
    horizon: int | None = None,
) -> dict[str, object]:
    """All run metrics (DESIGN section 4, "metrics"). Times are in slots.

    * ``avg_jct``/``total_jct``: over completed jobs, JCT = completion - arrival;
    * ``total_weighted_completion``: sum w_j c_j over completed jobs (Zhou et al. eq. (2));
    * ``total_weighted_jct``: sum w_j (c_j - a_j) over completed jobs;
    * ``completed_weight``: sum w_j over completed jobs (Zhou et al.'s Fig. 8: total scheduled weight);
    * ``avg_wait``: over completed jobs, first start - arrival (queueing before a job first runs);
    * ``makespan``: last completion - first arrival (None if nothing completed);
    * ``total_utility``: sum of the sigmoid utilities earned by completed jobs (OASiS);
    * ``utilization``: per resource, the share of finite capacity in use, averaged over the slots
      from the first arrival to the last placement end.

    With ``horizon`` (the slot the run ended at) also the censored variants of the metrics over
    completed jobs (``censored``).
    """
    done = [j for j in jobs if j.completion is not None]
    jcts = [j.completion - j.arrival for j in done if j.completion is not None]
    waits = [j.start - j.arrival for j in done if j.start is not None]
    total_jct = float(sum(jcts))
    first_arrival = min((j.arrival for j in jobs), default=0)
    makespan = None
    if done:
        makespan = max(j.completion for j in done if j.completion is not None) - first_arrival
    out: dict[str, object] = {
        "jobs": len(jobs),
        "admitted": sum(1 for j in jobs if j.admitted),
        "completed": len(done),
        "avg_jct": total_jct / len(jcts) if jcts else None,
        "total_jct": total_jct,
        "total_weighted_completion": float(sum(j.weight * j.completion for j in done if j.completion is not None)),
        "total_weighted_jct": float(
            sum(j.weight * (j.completion - j.arrival) for j in done if j.completion is not None)
        ),
        "completed_weight": float(sum(j.weight for j in done)),
        "avg_wait": sum(waits) / len(waits) if waits else None,
        "makespan": makespan,
        "total_utility": float(sum(j.utility for j in done)),
        "preemptions": sum(j.preemptions for j in jobs),
        "utilization": utilization(usages, capacity, first_arrival),
    }
    if horizon is not None:
        out.update(censored(jobs, horizon))
    return out


CENSORED = ("avg_jct", "total_jct", "total_weighted_completion", "total_weighted_jct", "avg_wait", "makespan")
"""The metrics over completed jobs that a dropped job would make look better (lower is better and
the job's term is simply missing); each has a ``<name>_censored`` variant over every job."""


def censored(jobs: Sequence[JobRecord], horizon: int) -> dict[str, float | None]:
    """The CENSORED metrics over every job, an unfinished job counted as if it completed at the end
    of the run: completion c_j = max(horizon, a_j) (a job arriving after a given horizon counts 0
    slots), and a job that never started as starting then. Equal to the plain metric when every job
    completed. The value is a lower bound on the plain metric had the run gone on until every job
    was done, so a run that leaves jobs unfinished can still be compared with one that does not
    (DESIGN section 9; docs/formats.md):

    * ``avg_jct_censored``/``total_jct_censored``: over every job, c_j - a_j;
    * ``total_weighted_completion_censored``: sum w_j c_j; ``total_weighted_jct_censored``: sum w_j (c_j - a_j);
    * ``avg_wait_censored``: over every job, s_j - a_j with s_j = max(horizon, a_j) for a job never started;
    * ``makespan_censored``: max c_j - first arrival (None without jobs).
    """
    ends = [(j, j.completion if j.completion is not None else max(horizon, j.arrival)) for j in jobs]
    jcts = [c - j.arrival for j, c in ends]
    waits = [(j.start if j.start is not None else max(horizon, j.arrival)) - j.arrival for j in jobs]
    first_arrival = min((j.arrival for j in jobs), default=0)
    return {
        "avg_jct_censored": sum(jcts) / len(jcts) if jcts else None,
        "total_jct_censored": float(sum(jcts)),
        "total_weighted_completion_censored": float(sum(j.weight * c for j, c in ends)),
        "total_weighted_jct_censored": float(sum(j.weight * (c - j.arrival) for j, c in ends)),
        "avg_wait_censored": sum(waits) / len(waits) if waits else None,
        "makespan_censored": max(c for _, c in ends) - first_arrival if ends else None,
    }


def restart_metrics(periods: Sequence[Usage], k: int = 0, share: float = 0.0) -> dict[str, object]:
    """Restart cost (DESIGN section 9) from the restart periods, each with what its job held:

    * ``restarts``: how many restart periods the run charged;
    * ``restart_gpu_slots``: GPUs held x slots of progress lost during them (GPU-time lost to
      restarts, in GPU-slots): a whole period of ``k`` slots loses k - ``share`` of them (its last
      slot progresses at ``share`` x the rate, engine.restart_share), a period cut short all of them.
    """
    lost = 0.0
    for u in periods:
        length = u.end - u.start
        lost += u.demand.get("gpu", 0.0) * (length - share if share and length == k else length)
    return {"restarts": len(periods), "restart_gpu_slots": float(lost)}


def utilization(usages: Iterable[Usage] | Spans, capacity: Mapping[str, float], start: int) -> dict[str, float]:
    if isinstance(usages, Spans):
        return _utilization_of_spans(usages, capacity, start)
    used: dict[str, float] = dict.fromkeys(capacity, 0.0)
    end = start
    for u in usages:
        end = max(end, u.end)
        if not u.limited:
            continue
        for resource, amount in u.demand.items():
            if resource in used:
                used[resource] += amount * (u.end - u.start)
    span = end - start
    return {r: (used[r] / (capacity[r] * span) if capacity[r] > 0 and span > 0 else 0.0) for r in sorted(capacity)}


def _utilization_of_spans(spans: Spans, capacity: Mapping[str, float], start: int) -> dict[str, float]:
    """``utilization`` of the segments in ``spans``: the same sums in the same order (each segment's
    amount count x demand, times its length)."""
    used: dict[str, float] = dict.fromkeys(capacity, 0.0)
    end = max(start, max(spans.end, default=start))
    limited = spans.limited if spans.limited is not None else [True] * len(spans.end)
    for s, e, count, demand, counted in zip(spans.start, spans.end, spans.count, spans.demand, limited, strict=True):
        if counted:
            for resource, a in demand.items():
                if resource in used:
                    used[resource] += a * count * (e - s)
    span = end - start
    return {r: (used[r] / (capacity[r] * span) if capacity[r] > 0 and span > 0 else 0.0) for r in sorted(capacity)}


def close(a: object, b: object, rel: float = 1e-6) -> bool:
    """Whether two metric values agree (numbers within ``rel``, dicts key by key, else equality)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):  # first: the validator's many numbers
        return abs(a - b) <= rel * max(1.0, abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], rel) for k in a)
    return a == b


def utilization_timeline(usages: Iterable[Usage], capacity: Mapping[str, float]) -> dict[str, list[tuple[int, float]]]:
    """Utilisation per resource over time: a step function as (slot, share from that slot on).

    Only finite-capacity servers count; the last point of each series is the end of the last
    placement, where the share drops to 0.
    """
    deltas: dict[int, dict[str, float]] = {}
    for u in usages:
        if not u.limited:
            continue
        for resource, amount in u.demand.items():
            if capacity.get(resource, 0.0) > 0:
                for t, sign in ((u.start, 1.0), (u.end, -1.0)):
                    at = deltas.setdefault(t, {})
                    at[resource] = at.get(resource, 0.0) + sign * amount
    series: dict[str, list[tuple[int, float]]] = {r: [] for r in sorted(capacity) if capacity[r] > 0}
    level = dict.fromkeys(series, 0.0)
    for t in sorted(deltas):
        for resource, change in deltas[t].items():
            level[resource] += change
        for resource, points in series.items():
            share = max(0.0, level[resource]) / capacity[resource]
            if not points or abs(points[-1][1] - share) > 1e-12:
                points.append((t, share))
    return series


# ---- OASiS (seeds/001, Sec. V-A): admission rate and completion timeliness per job class ------

CRITICAL_DECAY = 2.0
"""Decay gamma_2 from which a job counts as time-critical. Sec. V-A draws gamma_2 = 0
(time-insensitive), in [0.01, 1] (time-sensitive) or in [4, 6] (time-critical); 2 splits the gap."""

JOB_CLASSES = ("time-insensitive", "time-sensitive", "time-critical")


def job_class(u: Utility) -> str:
    if u.decay <= 0:
        return JOB_CLASSES[0]
    return JOB_CLASSES[2] if u.decay >= CRITICAL_DECAY else JOB_CLASSES[1]


def utility_metrics(jobs: Sequence[JobRecord], utilities: Mapping[str, Utility]) -> dict[str, object]:
    """Optional metrics of results whose trace has sigmoid utilities (OASiS Figs. 3-4):

    * ``admission_rate``: admitted jobs / jobs;
    * ``timeliness``: per job class, completed jobs' JCT minus target gamma_3 (slots): ``jobs``,
      ``completed``, ``mean``, ``std`` (population), ``min``, ``max`` (None without completions).
    """
    groups: dict[str, list[float]] = {c: [] for c in JOB_CLASSES}
    totals = dict.fromkeys(JOB_CLASSES, 0)
    for j in jobs:
        u = utilities[j.job_id]
        cls = job_class(u)
        totals[cls] += 1
        if j.completion is not None:
            groups[cls].append(j.completion - j.arrival - u.target)
    timeliness: dict[str, dict[str, float | int | None]] = {}
    for cls, diffs in groups.items():
        n = len(diffs)
        mean = sum(diffs) / n if n else None
        std = (sum((x - mean) ** 2 for x in diffs) / n) ** 0.5 if n and mean is not None else None
        timeliness[cls] = {
            "jobs": totals[cls],
            "completed": n,
            "mean": mean,
            "std": std,
            "min": min(diffs) if n else None,
            "max": max(diffs) if n else None,
        }
    return {
        "admission_rate": sum(1 for j in jobs if j.admitted) / len(jobs) if jobs else None,
        "timeliness": timeliness,
    }


def has_utilities(utilities: Mapping[str, Utility]) -> bool:
    """Whether a trace sets sigmoid utilities (any job differs from the default Utility())."""
    default = Utility()
    return any(u != default for u in utilities.values())
