"""Table rows, no figures: the metrics table of a run and the summary table across runs (cell text,
sort key, best value per column)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduling import stats

METRIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("jobs", "jobs"),
    ("admitted", "admitted"),
    ("completed", "completed"),
    ("avg_jct", "avg JCT"),
    ("avg_wait", "avg wait"),  # first start - arrival
    ("total_jct", "total JCT"),
    ("total_weighted_completion", "Σ w·C"),
    ("total_weighted_jct", "Σ w·JCT"),
    ("completed_weight", "Σ w completed"),  # Zhou et al. Fig. 8's total scheduled weight
    ("makespan", "makespan"),
    ("total_utility", "utility"),
    ("admission_rate", "admission rate"),  # OASiS: optional, results of traces with utilities
    ("timeliness", "JCT − target (mean ± std)"),  # OASiS Fig. 4: per job class, optional
    ("preemptions", "preemptions"),
    ("utilization", "utilisation"),
)


OPTIONAL_COLUMNS: tuple[tuple[str, str, str], ...] = (
    # (key, label, after key): shown only when a run's metrics have the key
    ("failed", "failed (trace)", "completed"),  # a status replay's recorded failures (scheduling.status_replay)
    ("killed", "killed (trace)", "failed"),
)


def metric_columns(metrics: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    """``METRIC_COLUMNS`` with the ``OPTIONAL_COLUMNS`` some of ``metrics`` (one per run) have."""
    columns = list(METRIC_COLUMNS)
    for key, label, after in OPTIONAL_COLUMNS:
        if any(key in m for m in metrics):
            at = next((i + 1 for i, (k, _) in enumerate(columns) if k == after), len(columns))
            columns.insert(at, (key, label))
    return tuple(columns)


def format_value(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.2f}"
    if isinstance(value, Mapping) and all(isinstance(v, Mapping) for v in value.values()):
        # timeliness: per job class, completed jobs' JCT minus target (slots)
        return (
            ", ".join(f"{k} {v['mean']:+.1f} ± {v['std']:.1f}" for k, v in value.items() if v.get("mean") is not None)
            or "—"
        )
    if isinstance(value, Mapping):  # utilization: share per resource
        return ", ".join(f"{k} {v * 100:.0f}%" for k, v in sorted(value.items()))
    return str(value)


def format_params(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={format_value(v)}" for k, v in params.items())


def metrics_row(algorithm: str, params: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    metrics = result["metrics"]
    return {
        "algorithm": algorithm,
        "params": format_params(params),
        "cells": [format_value(metrics.get(key)) for key, _ in metric_columns([metrics])],
    }


# Summary table: best value per column (issue 7). Lower is better for times, higher for counts
# of done work, utility and utilisation; columns without a direction are not marked.

LOWER_BETTER = {
    "avg_jct",
    "avg_wait",
    "total_jct",
    "total_weighted_completion",
    "total_weighted_jct",
    "makespan",
    "preemptions",
}
HIGHER_BETTER = {"admitted", "completed", "completed_weight", "total_utility", "utilization"}


def sort_key(value: Any) -> float | str:
    """The value a table cell sorts by: utilisation by the mean share over resources, timeliness
    (per job class) by the mean over classes of their mean JCT - target; blank when nothing to
    sort by."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, Mapping):
        if all(isinstance(v, Mapping) for v in value.values()):
            means = [v["mean"] for v in value.values() if isinstance(v.get("mean"), int | float)]
        else:
            means = [v for v in value.values() if isinstance(v, int | float)]
        return float(sum(means) / len(means)) if means else ""
    return str(value)


def summary_table(
    rows: Sequence[tuple[int, str, Mapping[str, Any], Mapping[str, Any]]],
    columns: Sequence[tuple[str, str]] = METRIC_COLUMNS,
) -> list[dict[str, Any]]:
    """Rows (run id, algorithm, params, metrics) -> table rows whose cells (one per column of
    ``columns``) carry text, sort key, best flag. Metrics over completed jobs only get no best when
    the runs completed different numbers of jobs (DESIGN section 9: a dropped job would count as a
    gain)."""
    best: dict[str, float] = {}
    unequal = len({m.get("completed") for _, _, _, m in rows}) > 1
    for key, _ in columns:
        values = [v for _, _, _, m in rows if isinstance(v := sort_key(m.get(key)), float)]
        if len(set(values)) < 2:  # one run, or all equal: no value is better than another
            continue
        if unequal and stats.completed_only(key):
            continue
        if key in LOWER_BETTER:
            best[key] = min(values)
        elif key in HIGHER_BETTER:
            best[key] = max(values)
    table = []
    for run_id, algorithm, params, metrics in rows:
        cells = []
        for key, _ in columns:
            k = sort_key(metrics.get(key))
            cells.append({"text": format_value(metrics.get(key)), "sort": k, "best": key in best and k == best[key]})
        table.append({"run": run_id, "algorithm": algorithm, "params": format_params(params), "cells": cells})
    return table
