"""Repetitions of a comparison over seeds or trace windows, and their statistics (scheduling.stats).

A **case** is one repetition: an instance and the algorithm seed to run it with. Cases come from

* ``preset_cases``: a preset generated once per seed (trace seed = algorithm seed = the seed);
* ``instance_cases``: one given instance, run with each algorithm seed (for randomised algorithms
  and predictors; a deterministic algorithm gives the same result on every seed);
* ``window_cases``: K windows of one given trace (cut evenly by job count in arrival order, or
  given as arrival-slot ranges), each window's arrivals shifted so that it starts at slot 0, times
  the algorithm seeds.

``run`` runs every algorithm on every case (each result through the validator, ``api.run``) and
returns one ``Row`` per (case, algorithm); ``row_of`` makes the row of a result computed elsewhere
(a Celery group runs the cases in parallel and hands its results here). ``reports`` turns the rows into one
``stats.MetricReport`` per metric, pairing algorithms on the case key; ``jct_cdfs`` gives each
algorithm's pooled JCT CDF with a band over cases. The ``write_*`` functions write the per-case
table (runs.csv), the summary (stats.csv) and the CDFs (jct_cdf.csv); ``format_reports`` gives a
readable table.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from scheduling import api, presets, stats
from scheduling.errors import InputError, UnsupportedInstance
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance, Job

METRICS = (
    "completed",
    "avg_jct",
    "avg_wait",
    "total_jct",
    "total_weighted_completion",
    "completed_weight",
    "total_utility",
    "makespan",
    "preemptions",
    "avg_jct_censored",  # an unfinished job counted at the end of its run (scheduling.metrics.censored)
    "total_jct_censored",
    "total_weighted_completion_censored",
)
MAX_CASES = 1000


@dataclass(frozen=True)
class Case:
    """One repetition."""

    key: str  # pairs runs across algorithms: "seed=3", "window=2", "window=2 seed=3"
    seed: int  # algorithm seed (and trace seed for presets)
    window: str | None  # "START:END" arrival slots of the original trace, for window cases
    instance: Instance


@dataclass(frozen=True)
class Row:
    """One run: a case and an algorithm."""

    case: Case
    label: str  # the algorithm as named in the comparison
    algorithm: str
    params: dict[str, Any]  # parsed parameters as the result records them
    metrics: dict[str, Any]
    jcts: list[float | None]  # per job: completion - arrival, None if not completed


def parse_seeds(text: str, field: str = "--seeds") -> list[int]:
    """ "0-9" -> [0..9]; "1,4,7" and "0-4,10" too. Seeds are whole numbers >= 0, listed once."""
    seeds: list[int] = []
    for raw in text.split(","):
        part = raw.strip()
        lo, dash, hi = part.partition("-")
        try:
            first, last = (int(lo), int(hi)) if dash else (int(part), int(part))
        except ValueError:
            raise InputError(f"{part!r} is not a seed or a range like 0-9", field=field) from None
        if first < 0 or last < first:
            raise InputError(f"{part!r}: a range goes from a seed >= 0 up to a larger one", field=field)
        if last - first + 1 + len(seeds) > MAX_CASES:
            raise InputError(f"more than {MAX_CASES} seeds", field=field)
        seeds.extend(range(first, last + 1))
    if len(set(seeds)) != len(seeds):
        raise InputError(f"{text!r} lists a seed twice", field=field)
    return seeds


def parse_windows(text: str, field: str = "--windows") -> int | list[tuple[int, int]]:
    """ "K" (K windows cut evenly) or "START:END,START:END" (arrival slots, END exclusive)."""
    text = text.strip()
    if ":" not in text:
        try:
            k = int(text)
        except ValueError:
            raise InputError(f"{text!r} is neither a number of windows nor START:END ranges", field=field) from None
        if not 1 <= k <= MAX_CASES:
            raise InputError(f"{k} windows: give 1 to {MAX_CASES}", field=field)
        return k
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition(":")
        try:
            start, end = int(lo), int(hi)
        except ValueError:
            raise InputError(f"{part!r} is not START:END (whole slots)", field=field) from None
        if start < 0 or end <= start:
            raise InputError(f"{part!r}: need 0 <= START < END", field=field)
        out.append((start, end))
    return out


def preset_instance(preset: str, jobs: int | None, seed: int, size: float = 1.0, history: bool = False) -> Instance:
    """A preset's instance in memory (the files ``generate`` would write, parsed); with ``history``
    also the preset's own history (``generate --history``: the preset from another seed)."""
    files = presets.build(preset, jobs=jobs, seed=seed, size=size)
    cluster = parse_cluster(files.cluster, "cluster.json")
    fmt = "json" if files.trace_name.endswith(".json") else "csv"
    past: tuple[Job, ...] = ()
    if history:
        own = presets.own_history(preset, jobs=jobs, seed=seed, size=size)
        past = parse_trace(own.trace, cluster, own.trace_name, fmt)
    return Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, fmt), history=past)


def preset_cases(
    preset: str, jobs: int | None, seeds: Sequence[int], size: float = 1.0, history: bool = False
) -> list[Case]:
    """One case per seed; with ``history`` each instance carries the preset's own history."""
    return [Case(f"seed={s}", s, None, preset_instance(preset, jobs, s, size, history)) for s in seeds]


def instance_cases(instance: Instance, seeds: Sequence[int]) -> list[Case]:
    return [Case(f"seed={s}", s, None, instance) for s in seeds]


def window_cases(instance: Instance, windows: int | Sequence[tuple[int, int]], seeds: Sequence[int]) -> list[Case]:
    """Windows of ``instance``'s trace (see the module docstring), each run with every seed in ``seeds``."""
    jobs = instance.jobs  # sorted by arrival
    spans: list[tuple[int, int, tuple[Any, ...]]] = []
    if isinstance(windows, int):
        if windows > len(jobs):
            raise InputError(f"{windows} windows but the trace has {len(jobs)} jobs", field="--windows")
        for part in np.array_split(np.arange(len(jobs)), windows):
            chunk = tuple(jobs[i] for i in part)
            nxt = jobs[part[-1] + 1].arrival if part[-1] + 1 < len(jobs) else chunk[-1].arrival + 1
            spans.append((chunk[0].arrival, max(nxt, chunk[-1].arrival + 1), chunk))
    else:
        for start, end in windows:
            chunk = tuple(j for j in jobs if start <= j.arrival < end)
            if not chunk:
                raise InputError(f"window {start}:{end} holds no job arrival", field="--windows")
            spans.append((start, end, chunk))
    cases = []
    for i, (start, end, chunk) in enumerate(spans):
        shifted = tuple(dataclasses.replace(j, arrival=j.arrival - start) for j in chunk)
        inst = Instance(instance.cluster, shifted, history=instance.history)  # (a separate past: kept whole)
        for s in seeds:
            key = f"window={i}" if len(seeds) == 1 else f"window={i} seed={s}"
            cases.append(Case(key, s, f"{start}:{end}", inst))
    return cases


def run(
    cases: Sequence[Case],
    algorithms: Sequence[tuple[str, str, Mapping[str, Any]]],
    horizon: int | None = None,
    progress: Callable[[Row, dict[str, Any]], None] | None = None,
    log: TextIO = sys.stderr,
    restart_seconds: float | None = None,
) -> list[Row]:
    """Every (label, algorithm, params) on every case (``restart_seconds``: as ``api.run``'s). An
    algorithm that rejects an instance as unsupported is skipped on that case, with a message on
    ``log``. ``progress`` gets each row with its result document (which the rows do not keep, to
    keep memory small)."""
    rows = []
    for case in cases:
        for label, name, params in algorithms:
            try:
                doc = api.run(case.instance, name, params, case.seed, horizon, restart_seconds=restart_seconds)
            except UnsupportedInstance as exc:
                print(f"{label} {case.key}: skipped: {exc}", file=log)
                continue
            row = row_of(case, label, doc)
            rows.append(row)
            if progress is not None:
                progress(row, doc)
    return rows


def row_of(case: Case, label: str, doc: Mapping[str, Any]) -> Row:
    """The row of a result document (e.g. one a Celery task stored) run on ``case`` as ``label``."""
    jcts: list[float | None] = [
        None if j["completion"] is None else float(j["completion"] - j["arrival"]) for j in doc["jobs"]
    ]
    return Row(case, label, str(doc["algorithm"]), dict(doc["params"]), dict(doc["metrics"]), jcts)


def _number(value: Any) -> float | None:
    """A metric value as a number (ints stay ints), or None when missing or not finite."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def table(rows: Iterable[Row], metric: str) -> dict[str, dict[str, float | None]]:
    """algorithm label -> {case key: metric value}, in first-seen order."""
    out: dict[str, dict[str, float | None]] = {}
    for r in rows:
        out.setdefault(r.label, {})[r.case.key] = _number(r.metrics.get(metric))
    return out


def completions(rows: Iterable[Row]) -> dict[str, dict[str, stats.Completion]]:
    """algorithm label -> {case key: (completed jobs, jobs)}: what ``stats.compare`` needs to
    compare metrics over completed jobs only at equal completed counts."""
    out: dict[str, dict[str, stats.Completion]] = {}
    for r in rows:
        done, jobs = r.metrics.get("completed"), r.metrics.get("jobs")
        if isinstance(done, int) and isinstance(jobs, int):
            out.setdefault(r.label, {})[r.case.key] = (done, jobs)
    return out


def reports(
    rows: Sequence[Row], reference: str, metrics: Sequence[str] = METRICS, **kw: Any
) -> list[stats.MetricReport]:
    """One report per metric, metrics over completed jobs compared only at equal completed counts."""
    counts = completions(rows)
    return [stats.compare(table(rows, m), reference=reference, metric=m, completions=counts, **kw) for m in metrics]


def jct_cdfs(rows: Sequence[Row], **kw: Any) -> dict[str, stats.CdfBand]:
    per: dict[str, list[list[float | None]]] = {}
    for r in rows:
        per.setdefault(r.label, []).append(r.jcts)
    return {label: stats.jct_cdf(jcts, **kw) for label, jcts in per.items()}


def _cell(value: Any) -> Any:
    return "" if value is None else value


def write_runs(rows: Sequence[Row], path: Path, metrics: Sequence[str] = METRICS) -> None:
    """The per-case table: case, seed, window, algorithm label, name, params (JSON), metrics."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["case", "seed", "window", "label", "algorithm", "params", *metrics])
        for r in rows:
            params = json.dumps(r.params, sort_keys=True)
            values = [_cell(_number(r.metrics.get(m))) for m in metrics]
            w.writerow([r.case.key, r.case.seed, _cell(r.case.window), r.label, r.algorithm, params, *values])


SUMMARY_COLUMNS = (
    "metric",
    "better",
    "algorithm",
    "n",
    "excluded",
    "mean",
    "mean_ci_low",
    "mean_ci_high",
    "median",
    "median_ci_low",
    "median_ci_high",
    "reference",
    "pairs",
    "median_diff",
    "median_diff_ci_low",
    "median_diff_ci_high",
    "mean_diff",
    "mean_diff_ci_low",
    "mean_diff_ci_high",
    "median_ratio",
    "median_ratio_ci_low",
    "median_ratio_ci_high",
    "wins",
    "ties",
    "losses",
    "not_comparable",
    "verdict",
    "best",
    "note",
)


def summary_rows(report: stats.MetricReport) -> list[dict[str, Any]]:
    out = []
    for alg, s in report.summaries.items():
        p = report.paired.get(alg)
        row: dict[str, Any] = {
            "metric": report.metric,
            "better": report.better,
            "algorithm": alg,
            "n": s.n,
            "excluded": s.excluded,
            "mean": s.mean,
            "mean_ci_low": s.mean_ci.low if s.mean_ci else None,
            "mean_ci_high": s.mean_ci.high if s.mean_ci else None,
            "median": s.median,
            "median_ci_low": s.median_ci.low if s.median_ci else None,
            "median_ci_high": s.median_ci.high if s.median_ci else None,
            "reference": report.reference,
            "best": "yes" if report.best == alg else "",
            "note": s.note,
        }
        if p is not None:
            row.update(
                pairs=p.n,
                median_diff=p.median_diff,
                median_diff_ci_low=p.median_ci.low if p.median_ci else None,
                median_diff_ci_high=p.median_ci.high if p.median_ci else None,
                mean_diff=p.mean_diff,
                mean_diff_ci_low=p.mean_ci.low if p.mean_ci else None,
                mean_diff_ci_high=p.mean_ci.high if p.mean_ci else None,
                median_ratio=p.median_ratio,
                median_ratio_ci_low=p.median_ratio_ci.low if p.median_ratio_ci else None,
                median_ratio_ci_high=p.median_ratio_ci.high if p.median_ratio_ci else None,
                wins=p.wins,
                ties=p.ties,
                losses=p.losses,
                not_comparable=p.not_comparable,
                verdict=p.verdict,
                note="; ".join(x for x in (s.note, p.note) if x),
            )
        out.append(row)
    return out


def write_summary(reports_: Sequence[stats.MetricReport], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=SUMMARY_COLUMNS)
        w.writeheader()
        for report in reports_:
            for row in summary_rows(report):
                w.writerow({k: _cell(row.get(k)) for k in SUMMARY_COLUMNS})


def write_cdfs(cdfs: Mapping[str, stats.CdfBand], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["algorithm", "jct", "cdf", "low", "high", "band"])
        for label, c in cdfs.items():
            for i, x in enumerate(c.x):
                low = c.low[i] if c.low is not None else None
                high = c.high[i] if c.high is not None else None
                w.writerow([label, x, c.cdf[i], _cell(low), _cell(high), c.band])


def fmt(value: float | None) -> str:
    """4 significant digits; large values as whole numbers with thousands separators (no exponent)."""
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"


def fmt_ci(ci: stats.Interval | None) -> str:
    return "no CI" if ci is None else f"[{fmt(ci.low)}, {fmt(ci.high)}]"


def format_report(report: stats.MetricReport) -> str:
    """A readable table of one metric: median [95% CI] per algorithm, paired differences, W/T/L."""
    n_cases = max((s.n + s.excluded for s in report.summaries.values()), default=0)
    lines = [
        f"{report.metric} ({report.better} is better; {n_cases} repetitions; "
        f"paired differences and ratios vs {report.reference}, 95% bootstrap CIs"
        + (
            "; over completed jobs: pairs compared at equal completed counts)"
            if stats.completed_only(report.metric)
            else ")"
        )
    ]
    head = (
        "algorithm",
        "n",
        "median [95% CI]",
        "mean [95% CI]",
        "median diff [95% CI]",
        "ratio [95% CI]",
        "W/T/L",
        "verdict",
    )
    body = []
    for alg, s in report.summaries.items():
        p = report.paired.get(alg)
        n = f"{s.n}" + (f" (+{s.excluded} missing)" if s.excluded else "")
        row = [alg, n, f"{fmt(s.median)} {fmt_ci(s.median_ci)}", f"{fmt(s.mean)} {fmt_ci(s.mean_ci)}"]
        if p is None:
            row += ["(reference)", "", "", ""]
        else:
            row += [f"{fmt(p.median_diff)} {fmt_ci(p.median_ci)}", f"{fmt(p.median_ratio)} {fmt_ci(p.median_ratio_ci)}"]
            row += [f"{p.wins}/{p.ties}/{p.losses}", p.verdict]
        body.append(row)
    widths = [max(len(str(r[i])) for r in [head, *body]) for i in range(len(head))]
    for r in [head, *body]:
        lines.append("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    for alg, p in report.paired.items():
        if p.not_comparable and p.n:  # (with no pair left the verdict says it)
            lines.append(f"  {alg}: {p.note}")
    lines.append(f"  best: {report.best or 'none'} ({report.best_note})")
    return "\n".join(lines)


def format_reports(reports_: Sequence[stats.MetricReport]) -> str:
    return "\n\n".join(format_report(r) for r in reports_)
