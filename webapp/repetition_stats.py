"""The repetitions tab and its exports: an experiment's repeated runs as a per-repetition table and
the statistics ``scheduling.stats`` computes over it (docs/architecture.md, "Repetitions").

A *variant* is what the runs of every repetition share: algorithm and parameters, in a sweep with
the swept value (its label is ``run_labels(..., repetition=False)``). Runs of one repetition are
paired: the differences against the reference variant are taken repetition by repetition.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from django.core.cache import cache

from scheduling import stats
from webapp import repetitions, results_io
from webapp.charts import repetitions as rep_charts
from webapp.charts.tables import format_value
from webapp.labels import run_labels
from webapp.models import Experiment, Run
from webapp.security import csv_cell  # the one CSV-cell rule (spreadsheet injection)

# Metrics the tab summarises, in order: (result metric, or "utilization.<resource>"; its title).
MAX_POOLED_JOBS = 100_000  # jobs (over every done run) beyond which the tab draws no pooled CDF
METRICS: tuple[tuple[str, str], ...] = (
    ("avg_jct", "average JCT (slots)"),
    ("avg_wait", "average wait (slots)"),
    ("total_jct", "total JCT (slots)"),
    ("total_weighted_completion", "Σ w·C (slots)"),
    ("total_weighted_jct", "Σ w·JCT (slots)"),
    ("makespan", "makespan (slots)"),
    ("completed", "completed jobs"),
    ("total_utility", "total utility"),
    ("preemptions", "preemptions"),
    ("utilization.gpu", "GPU utilisation"),
    # Every job counted, an unfinished one as completing at the end of its run (docs/formats.md):
    # compared whatever the completed counts, where the metrics over completed jobs are not.
    ("avg_jct_censored", "average JCT, unfinished at run end (slots)"),
    ("total_jct_censored", "total JCT, unfinished at run end (slots)"),
    ("total_weighted_completion_censored", "Σ w·C, unfinished at run end (slots)"),
)


def metric_value(metrics: Mapping[str, Any], key: str) -> float | None:
    """A metric of a run as a number ("utilization.gpu": the GPU share); None when absent."""
    name, _, part = key.partition(".")
    value = metrics.get(name)
    if part:
        value = value.get(part) if isinstance(value, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def repeated_runs(exp: Experiment, runs: Sequence[Run]) -> list[Run]:
    return [r for r in runs if r.repetition is not None]


def variant_table(exp: Experiment, runs: Sequence[Run]) -> dict[str, dict[int, Run]]:
    """Done runs by variant label, then by repetition index (in the experiment's run order)."""
    done = [r for r in repeated_runs(exp, runs) if r.status == Run.Status.DONE]
    labels = run_labels(exp, done, repetition=False)
    table: dict[str, dict[int, Run]] = {}
    for r in done:
        assert r.repetition is not None
        table.setdefault(labels[r.pk], {})[r.repetition] = r
    return table


def metrics_of(table: Mapping[str, Mapping[int, Run]]) -> list[tuple[str, str]]:
    """The METRICS some done run has (total utility only for traces with utility columns, whose
    results carry ``timeliness``: otherwise it restates the completed jobs)."""
    every = [r.metrics or {} for runs in table.values() for r in runs.values()]
    utilities = any("timeliness" in m for m in every)
    return [
        (key, title)
        for key, title in METRICS
        if any(metric_value(m, key) is not None for m in every) and (key != "total_utility" or utilities)
    ]


def _ci(interval: stats.Interval | None) -> str:
    return f"[{format_value(interval.low)}, {format_value(interval.high)}]" if interval else "—"


def _num(value: float | None) -> str:
    return "—" if value is None else format_value(value)


def _signed(value: float | None) -> str:
    return "—" if value is None else ("+" if value > 0 else "") + format_value(value)


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _ratio_ci(interval: stats.Interval | None) -> str:
    return f"[{interval.low:.3f}, {interval.high:.3f}]" if interval else "—"


def page(exp: Experiment, runs: Sequence[Run], query: Mapping[str, str]) -> dict[str, Any]:
    """Context of the repetitions tab: the overview (median and its 95% CI per metric, the best
    marked only where ``stats.compare`` separates it), the chosen metric's detail (mean, median,
    CIs; paired differences against the reference with their CI and win/tie/loss counts), and the
    figures (paired differences, pooled JCT CDF with bands, in a sweep the metric against the swept
    value with a CI band)."""
    table = variant_table(exp, runs)
    ctx: dict[str, Any] = {"rep_variants": list(table), "rep_count": repetitions.count(exp.repetition)}
    metrics = metrics_of(table)
    if not table or not metrics:
        return ctx
    asked_reference, asked_metric = query.get("reference", ""), query.get("metric", "")
    reference = asked_reference if asked_reference in table else next(iter(table))
    metric = asked_metric if asked_metric in dict(metrics) else metrics[0][0]
    reports = metric_reports(table, metrics, reference)
    ctx.update(
        rep_metrics=metrics,
        rep_metric=metric,
        rep_metric_title=dict(metrics)[metric],
        rep_reference=reference,
        rep_overview=_overview(table, metrics, reports),
        rep_detail=_detail(table, reports[metric]),
        rep_best={key: (report.best, report.best_note) for key, report in reports.items()},
        rep_done=sum(len(reps) for reps in table.values()),
    )
    figures = [rep_charts.paired_differences(reports[metric], dict(metrics)[metric])]
    jobs = sum(int((r.metrics or {}).get("jobs") or 0) for reps in table.values() for r in reps.values())
    if jobs <= MAX_POOLED_JOBS:
        figures.append(rep_charts.cdf_bands(cdf_bands(table)))
    else:
        ctx["rep_cdf_note"] = (
            f"The pooled JCT CDF is left out: its {jobs:,} jobs are more than the {MAX_POOLED_JOBS:,} a page "
            "pools (python -m scheduling compare --seeds writes it as jct_cdf.csv)."
        )
    if exp.kind == Experiment.Kind.SWEEP and exp.sweep.get("param"):
        figures.append(_sweep_figure(exp, runs, metric, dict(metrics)[metric]))
    ctx["rep_figures"] = [f for f in figures if f is not None]
    return ctx


def metric_reports(
    table: Mapping[str, Mapping[int, Run]], metrics: Sequence[tuple[str, str]], reference: str
) -> dict[str, stats.MetricReport]:
    """``stats.compare`` of every metric against ``reference`` (metrics over completed jobs paired
    only where the completed counts are equal), kept in the cache under a digest of its inputs (the
    values, the counts and the reference): the bootstraps take a fraction of a second per metric."""
    values = {
        key: {v: {i: metric_value(r.metrics or {}, key) for i, r in reps.items()} for v, reps in table.items()}
        for key, _ in metrics
    }
    counts = completions(table)
    inputs = [reference, list(values.items()), list(counts.items())]
    digest = hashlib.sha256(json.dumps(inputs, default=str).encode()).hexdigest()
    cache_key = f"repstats:{digest}"
    cached: dict[str, stats.MetricReport] | None = cache.get(cache_key)
    if cached is not None:
        return cached
    reports = {
        key: stats.compare(by_variant, reference=reference, metric=key, completions=counts)
        for key, by_variant in values.items()
    }
    cache.set(cache_key, reports, timeout=3600)
    return reports


def completions(table: Mapping[str, Mapping[int, Run]]) -> dict[str, dict[int, stats.Completion]]:
    """variant -> {repetition: (completed jobs, jobs)} of the runs that report both."""
    out: dict[str, dict[int, stats.Completion]] = {}
    for variant, reps in table.items():
        for i, r in reps.items():
            done, jobs = (r.metrics or {}).get("completed"), (r.metrics or {}).get("jobs")
            if isinstance(done, int) and isinstance(jobs, int):
                out.setdefault(variant, {})[i] = (done, jobs)
    return out


def cdf_bands(table: Mapping[str, Mapping[int, Run]]) -> list[tuple[str, stats.CdfBand]]:
    """Each variant's pooled JCT CDF with its band over repetitions. Every run's chart index is read
    (its per-job columns, webapp/chartindex.py, not the whole result with its placements and price
    log), and the bands are kept in the cache while the done runs stay the same."""
    done = [(v, sorted((i, r.pk, str(r.finished)) for i, r in reps.items())) for v, reps in table.items()]
    cache_key = "repcdf:" + hashlib.sha256(json.dumps(done).encode()).hexdigest()
    cached: list[tuple[str, stats.CdfBand]] | None = cache.get(cache_key)
    if cached is None:
        load = results_io.load_chart_doc
        cached = [(v, stats.jct_cdf([_jcts(load(r)) for r in reps.values()])) for v, reps in table.items()]
        cache.set(cache_key, cached, timeout=3600)
    return cached


def _jcts(doc: Mapping[str, Any]) -> list[float | None]:
    """Per job: its JCT (slots), None when it did not complete (counted in the CDF's denominator)."""
    return [j["completion"] - j["arrival"] if j["completion"] is not None else None for j in doc["jobs"]]


def _overview(
    table: Mapping[str, Mapping[int, Run]],
    metrics: Sequence[tuple[str, str]],
    reports: Mapping[str, stats.MetricReport],
) -> list[dict[str, Any]]:
    rows = []
    for variant, reps in table.items():
        cells = []
        for key, _ in metrics:
            s = reports[key].summaries[variant]
            cells.append(
                {
                    "median": _num(s.median),
                    "ci": _ci(s.median_ci),
                    "n": s.n,
                    "best": reports[key].best == variant,
                    "sort": "" if s.median is None else s.median,
                }
            )
        rows.append({"variant": variant, "n": len(reps), "cells": cells})
    return rows


def _detail(table: Mapping[str, Mapping[int, Run]], report: stats.MetricReport) -> list[dict[str, Any]]:
    rows = []
    for variant in table:
        s = report.summaries[variant]
        p = report.paired.get(variant)
        rows.append(
            {
                "variant": variant,
                "reference": variant == report.reference,
                "best": report.best == variant,
                "n": s.n,
                "mean": _num(s.mean),
                "mean_ci": _ci(s.mean_ci),
                "median": _num(s.median),
                "median_ci": _ci(s.median_ci),
                "diff": _signed(p.median_diff) if p else "",
                "diff_ci": _ci(p.median_ci) if p else "",
                "ratio": _ratio(p.median_ratio) if p else "",
                "ratio_ci": _ratio_ci(p.median_ratio_ci) if p else "",
                "mean_diff": _signed(p.mean_diff) if p else "",
                "mean_diff_ci": _ci(p.mean_ci) if p else "",
                "wins": p.wins if p else "",
                "ties": p.ties if p else "",
                "losses": p.losses if p else "",
                "verdict": p.verdict if p else "reference",
                "not_comparable": p.not_comparable if p else 0,
                "note": p.note if p and p.not_comparable and p.n else "",  # some pairs left out
            }
        )
    return rows


def _sweep_figure(exp: Experiment, runs: Sequence[Run], metric: str, title: str) -> dict[str, Any] | None:
    """The metric against the swept value, a line per series: the mean over repetitions with the
    bootstrap 95% CI of the mean as a band."""
    param = exp.sweep["param"]
    done = [r for r in repeated_runs(exp, runs) if r.status == Run.Status.DONE and param in r.params]
    series = run_labels(exp, done, series=True, repetition=False)
    points: dict[str, dict[Any, list[float | None]]] = {}
    for r in done:
        points.setdefault(series[r.pk], {}).setdefault(r.params[param], []).append(
            metric_value(r.metrics or {}, metric)
        )
    lines = []
    for label, by_x in points.items():
        xs = sorted(by_x)
        summaries = [stats.summarize(by_x[x]) for x in xs]
        lines.append(
            rep_charts.SweepLine(
                label,
                xs,
                [s.mean for s in summaries],
                [s.mean_ci.low if s.mean_ci else None for s in summaries],
                [s.mean_ci.high if s.mean_ci else None for s in summaries],
            )
        )
    return rep_charts.sweep_bands(param, title, lines) if lines else None


# ---------------------------------------------------------------------------------------------
# Exports


def per_seed_csv(exp: Experiment, runs: Sequence[Run]) -> str:
    """One row per run of a repetition: variant, algorithm, parameters, repetition, seeds, window,
    status and every metric of METRICS (blank when absent or the run is not done)."""
    repeated = repeated_runs(exp, runs)
    variants = run_labels(exp, repeated, repetition=False)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(
        ["variant", "algorithm", "params", "repetition", "repetition_name", "seed", "trace_seed",
         "window_start", "window_end", "run", "status", "code_version", "code_commit", *(key for key, _ in METRICS)]
    )  # fmt: skip
    for r in repeated:
        window = r.window or [None, None]
        values = [metric_value(r.metrics or {}, key) if r.status == Run.Status.DONE else None for key, _ in METRICS]
        w.writerow(
            [csv_cell(x) for x in (variants[r.pk], r.algorithm, r.params, r.repetition,
             repetitions.repetition_name(exp.repetition, r.repetition), r.seed, r.trace_seed, window[0], window[1],
             r.pk, r.status, (r.code or {}).get("version"), (r.code or {}).get("commit"), *values)]
        )  # fmt: skip
    return out.getvalue()


def summary_json(exp: Experiment, runs: Sequence[Run], reference: str | None = None) -> dict[str, Any]:
    """The statistics of every metric as the API returns them (``scheduling.stats`` reports as
    plain data)."""
    from dataclasses import asdict

    table = variant_table(exp, runs)
    metrics = metrics_of(table)
    if not table or not metrics:
        return {"repetition": exp.repetition, "variants": list(table), "metrics": {}}
    ref = reference if reference in table else next(iter(table))
    return {
        "repetition": exp.repetition,
        "variants": list(table),
        "reference": ref,
        "metrics": {key: asdict(report) for key, report in metric_reports(table, metrics, ref).items()},
    }
