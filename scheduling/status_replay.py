"""Replaying a trace's recorded job outcomes (docs/formats.md, "Status replay"; off by default).

Production traces record how each job ended: Philly's ``status`` is ``Pass``, ``Failed`` or
``Killed``, Alibaba's ``pod_phase`` ``Succeeded``, ``Running``, ``Failed`` (``Pending`` rows are
skipped by the import). Without replay every job that finishes its work completes. With the cluster
spec's ``"replay_status": true``, a job whose trace ``status`` is a failure (``FAILED``) or a kill
(``KILLED``, case-insensitive) runs as any job (the algorithm does not see its status: no
look-ahead) until it has done its work, i.e. for its recorded duration on the GPUs it asked for,
and then *ends* as failed or killed instead of completing: its result row has ``completion: null``,
``outcome`` (``"failed"`` / ``"killed"``) and ``ended`` (the slot it ended at, where it released
its resources), and ``utility`` 0. So it counts in no metric over completed jobs (``completed``,
``avg_jct``, ``makespan``, ...); ``metrics.failed`` and ``metrics.killed`` count them, and the
censored metrics count such a job at its end (it left the cluster then) instead of the run's end.
A recorded failure that has not done its work when the run stops is unfinished, as any job.

The validator checks the replay from the trace (``engine_view``): the result says
``status_replay: true`` exactly when the cluster replays statuses; the jobs with an ``outcome`` are
exactly those recorded as failed or killed that did all their work, each with the trace's outcome,
no completion and utility 0; and every other check runs on the schedule with each ended job seen as
completing at ``ended`` (all its work done by then, nothing held after it).
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduling.errors import InputError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


FAILED = frozenset({"failed", "failure", "fail", "error", "errored"})
"""Recorded statuses (case-insensitive) of a job that failed (Philly ``Failed``, Alibaba ``Failed``)."""

KILLED = frozenset({"killed", "cancelled", "canceled", "terminated", "aborted"})
"""Recorded statuses of a job stopped by its user or the operator (Philly ``Killed``)."""

OUTCOMES = ("failed", "killed")


def outcome(status: str) -> str | None:
    """``"failed"``, ``"killed"`` or None (a success, still running at the trace's end, unknown)."""
    s = status.strip().lower()
    if s in FAILED:
        return "failed"
    if s in KILLED:
        return "killed"
    return None


def flag(doc: Mapping[str, Any]) -> bool:
    """The cluster spec's ``replay_status`` (default false)."""
    value = doc.get("replay_status", False)
    if not isinstance(value, bool):
        raise InputError(f"expected true or false, found {value!r}", field="replay_status")
    return value


def mark(outcomes: Mapping[str, str], doc: dict[str, Any]) -> None:
    """Turn the completions of the jobs recorded as failed/killed (``outcomes``: job id -> outcome)
    into ends with that outcome, in place (results.build)."""
    doc["status_replay"] = True
    for j in doc["jobs"]:
        found = outcomes.get(j["job_id"])
        if found is not None and j["completion"] is not None:
            j["ended"] = j["completion"]
            j["completion"] = None
            j["outcome"] = found
            j["utility"] = 0.0


def metrics(doc: Mapping[str, Any]) -> dict[str, Any]:
    """``failed``, ``killed`` and the censored metrics with each ended job counted at its end."""
    from scheduling import metrics as run_metrics
    from scheduling import records as record_fields
    from scheduling.engine import JobRecord

    names = record_fields.names(JobRecord)
    records = []
    for j in doc["jobs"]:
        values = {k: j[k] for k in names}
        if j.get("outcome") is not None:
            values["completion"] = j["ended"]
        records.append(JobRecord(**values))
    out: dict[str, Any] = {o: sum(1 for j in doc["jobs"] if j.get("outcome") == o) for o in OUTCOMES}
    out.update(run_metrics.censored(records, doc["horizon"]))
    return out


def engine_view(outcomes: Mapping[str, str], replay: bool, doc: Mapping[str, Any], problems: list[str]) -> Any:
    """Check the replay fields of ``doc`` against the trace's ``outcomes`` and the cluster's
    ``replay`` flag (validator); return the document with each ended job completing at its end, on
    which every other check runs (``doc`` itself when nothing is replayed)."""
    rows = doc["jobs"]
    reported = doc.get("status_replay")
    if not replay:
        if reported is not None or any("outcome" in j or "ended" in j for j in rows):
            problems.append("status_replay, outcome or ended reported, but the cluster does not set replay_status")
        return doc
    if reported is not True:
        problems.append(f"status_replay is {reported!r}, but the cluster sets replay_status")
    jobs = []
    for j in rows:
        name = f"job {j['job_id']!r}"
        expected = outcomes.get(j["job_id"])
        got = j.get("outcome")
        if got is None:
            if "ended" in j:
                problems.append(f"{name}: ended without an outcome")
            if expected is not None and j["completion"] is not None:
                problems.append(f"{name}: completed at {j['completion']}, but the trace records it as {expected}")
            jobs.append(j)
            continue
        if got != expected:
            problems.append(f"{name}: outcome {got!r}, the trace's status gives {expected!r}")
        if j["completion"] is not None:
            problems.append(f"{name}: outcome {got!r} and a completion at {j['completion']}")
        if j["utility"] != 0:
            problems.append(f"{name}: outcome {got!r} but utility {j['utility']} (an ended job earns none)")
        ended = j.get("ended")
        if not isinstance(ended, int) or isinstance(ended, bool):
            problems.append(f"{name}: outcome {got!r} without the slot it ended at")
            jobs.append(j)
            continue
        jobs.append({**j, "completion": ended})
    return {**doc, "jobs": jobs}
