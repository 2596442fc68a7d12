"""Training-iteration predictors of A-SRPT (Sec. IV-C-3) and the simpler ones of Sec. V-B-2-d.

Every predictor sees a *history*: jobs of a separate past that the user supplies (``Instance.history``,
``--history FILE`` on the CLI; a preset writes its own from another seed), with their true
iteration counts, as a cluster's log of finished jobs would hold them, and predicts n~_i for every
job of the trace from what it may know at submission (group and user id). No job of the evaluated
trace is ever fitted on (no look-ahead, DESIGN section 9): without a history the fitted predictors
have seen nothing and predict 0 iterations, the paper's rule for unseen jobs.

* ``random-forest``: scikit-learn regression forest, 100 trees, squared-error splits, on the
  (group id, user id) codes of the history; a job whose group the history never saw is predicted
  0 iterations ("We predict 0 iterations for unseen jobs"), as is a job without a group id;
* ``random-forest-mae``: the same forest with absolute-error splits, so that a leaf predicts the
  median of its jobs rather than their mean (the paper names no split criterion; its error metric,
  eq. (9), is the absolute error, which a median minimises on heavy-tailed iteration counts);
* ``mean`` / ``median``: the mean / median iteration count of the history, for every job;
* ``perfect``: the true count (A-SRPT-Perfect);
* ``trace``: the trace's own ``predicted_iterations`` (0 where missing), e.g. from a forest trained
  on an earlier, longer part of a production trace (bench/asrpt_philly.py).

Iterations are the job's work units (``Job.work_required``): iterations of a pipeline job, slots
of a rigid job.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scheduling.lazy import LazyModule
from scheduling.model import Job

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyModule("numpy")  # imported at the first prediction, not when the registry lists asrpt

PREDICTORS = ("random-forest", "random-forest-mae", "mean", "median", "perfect", "trace")
FITTED = ("random-forest", "random-forest-mae", "mean", "median")
"""The predictors that learn from the history: without one they predict 0 iterations for every job."""


def no_history_note(report: Mapping[str, Any]) -> str | None:
    """What to tell the user of a run whose prediction ``report`` (a result's ``prediction``) comes
    from a fitted predictor that had no history: every job was predicted 0 iterations, so the
    predicted work told no two jobs apart. None otherwise."""
    if report.get("predictor") not in FITTED or report.get("history_jobs") != 0:
        return None
    return (
        f"the {report['predictor']} predictor had no history to fit and predicted 0 iterations for "
        "every job, so no job's predicted work differed; give a separate trace of past jobs with "
        "--history FILE (for an imported trace: an earlier window of it, import --end ...)"
    )


@dataclass(frozen=True)
class Predictions:
    values: dict[str, float]  # job id -> n~_i
    history_jobs: int  # jobs of the separate history the predictor was fitted on

    def errors(self, jobs: Sequence[Job]) -> dict[str, float | int | None]:
        """Mean absolute error (eq. (9) divided by I) over the trace's jobs. The history is a separate
        trace, so every job is out of sample: ``mean_abs_error_after_history`` (kept for results
        read by older tools) equals ``mean_abs_error``."""
        every = [abs(j.work_required - self.values[j.job_id]) for j in jobs]
        mae = float(np.mean(every)) if every else None
        return {
            "mean_abs_error": mae,
            "mean_abs_error_after_history": mae,
            "history_jobs": self.history_jobs,
            "jobs": len(jobs),
        }


def history_of(jobs: Sequence[Job], fraction: float) -> list[Job]:
    """The latest ``fraction`` of ``jobs`` by arrival (the most recent part of a history)."""
    ordered = sorted(jobs, key=lambda j: (j.arrival, j.job_id))
    return ordered[len(ordered) - math.ceil(fraction * len(ordered)) :]


def predict(
    past: Sequence[Job], jobs: Sequence[Job], kind: str, fraction: float, rng: np.random.Generator
) -> Predictions:
    """n~_i for every job of ``jobs`` by predictor ``kind`` fitted on the latest ``fraction`` of ``past``."""
    history = history_of(past, fraction)
    seen = len(history)
    truth = np.array([j.work_required for j in history], dtype=float)
    if kind == "perfect":
        return Predictions({j.job_id: j.work_required for j in jobs}, seen)
    if kind == "trace":
        return Predictions({j.job_id: float(j.predicted_iterations or 0) for j in jobs}, seen)
    if kind in ("mean", "median"):
        value = 0.0 if not len(truth) else float(np.mean(truth) if kind == "mean" else np.median(truth))
        return Predictions({j.job_id: value for j in jobs}, seen)
    if kind in ("random-forest", "random-forest-mae"):
        criterion = "absolute_error" if kind == "random-forest-mae" else "squared_error"
        return Predictions(_forest(jobs, history, truth, rng, criterion), seen)
    raise ValueError(f"unknown predictor {kind!r}")


def _forest(
    jobs: Sequence[Job], history: Sequence[Job], truth: np.ndarray, rng: np.random.Generator, criterion: str
) -> dict[str, float]:
    from sklearn.ensemble import RandomForestRegressor  # heavy import, only when used

    groups = {g: i for i, g in enumerate(dict.fromkeys(j.group for j in history if j.group is not None))}
    users = {u: i for i, u in enumerate(dict.fromkeys(j.user for j in history))}
    out = {j.job_id: 0.0 for j in jobs}
    fit = [(groups[j.group], users[j.user], n) for j, n in zip(history, truth, strict=True) if j.group in groups]
    if not fit:
        return out
    data = np.array(fit, dtype=float)
    forest = RandomForestRegressor(n_estimators=100, criterion=criterion, random_state=int(rng.integers(2**31)))
    forest.fit(data[:, :2], data[:, 2])
    known = [j for j in jobs if j.group is not None and j.group in groups]
    if known:
        x = np.array([(groups[j.group], users.get(j.user, -1)) for j in known if j.group is not None], dtype=float)
        for j, value in zip(known, forest.predict(x), strict=True):
            out[j.job_id] = float(max(0.0, value))
    return out
