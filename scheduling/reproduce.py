"""Paper figures reproduced in one command, with repetitions and confidence intervals.

``python -m scheduling reproduce <figure> [--seeds N] [--out DIR]`` and ``reproduce --list``.
``FIGURES`` maps a figure name to its ``Figure``: the paper, the setting (instances per seed and
x-axis point), the algorithms, the metric and what the paper reports; ``listing()`` describes them
as plain dicts. ``run_figure`` runs it in this process (every result through the validator,
``api.run``) and computes, per x-axis point, the statistics of ``scheduling.stats`` against the
figure's reference algorithm. To fan the runs out instead (a Celery group), run every
``(point, seed, algorithm)`` of ``case(fig, point, seed)`` and ``fig.algorithms`` anywhere, turn
each result into a row with ``repeat.row_of`` and call ``assemble``. ``write`` stores

* ``runs.csv``: one row per (point, seed, algorithm) with the metrics;
* ``summary.csv``: per point and algorithm the median and mean with 95% CIs, the paired difference
  against the reference with its CI, win/tie/loss counts, the verdict and "best";
* ``table.md``: the same as a Markdown table beside the paper's number and whether the paper's
  claim holds across the seeds (the claimed winner is "best": separated from every other
  algorithm by a CI of the paired difference that excludes 0);
* ``figure.html``: medians with 95% CI error bars (Plotly; ``plotly.min.js`` beside it, offline);
* ``provenance.json``: code version, seeds, settings, parameters and the input digests per run.

Settings are the paper's where a run takes seconds, and reduced (stated in ``Figure.setting``)
where the paper's scale would take hours; docs/statistics.md lists them.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduling import provenance, repeat, stats
from scheduling.errors import InputError
from scheduling.figures import (
    FIGURES,
    ZHOU_JOBS,
    Algorithm,
    Builder,
    Figure,
    asrpt_window,
    bandwidth_builder,
    edge_only_builder,
    listing,
    preset_builder,
)

# The figures (scheduling.figures) are re-exported: callers use reproduce.FIGURES, reproduce.Figure, ...
__all__ = [
    "FIGURES",
    "ZHOU_JOBS",
    "Algorithm",
    "Builder",
    "Figure",
    "FigureRun",
    "PointResult",
    "asrpt_window",
    "assemble",
    "bandwidth_builder",
    "case",
    "claim_holds",
    "edge_only_builder",
    "listing",
    "markdown",
    "metric_value",
    "preset_builder",
    "run_figure",
    "seed_text",
    "seeds_of",
    "write",
]


@dataclass(frozen=True)
class PointResult:
    label: str
    rows: list[repeat.Row]
    report: stats.MetricReport
    censored: stats.MetricReport | None = None  # the metric's _censored variant, for a metric over completed jobs


@dataclass(frozen=True)
class FigureRun:
    figure: Figure
    seeds: list[int]
    points: list[PointResult]
    seconds: float
    inputs: dict[str, dict[str, dict[str, str]]]  # point -> seed -> input digests


# ---- running and writing ----------------------------------------------------------------------


def case(fig: Figure, point: str, seed: int) -> repeat.Case:
    """The instance of ``point`` (an x-axis label of ``fig``) for ``seed``, as a repetition case."""
    for label, build in fig.points:
        if label == point:
            return repeat.Case(f"seed={seed}", seed, None, build(seed))
    raise ValueError(f"{fig.name} has no point {point!r} (points: {', '.join(p for p, _ in fig.points)})")


def assemble(
    fig: Figure,
    seeds: Sequence[int],
    rows: Mapping[str, Sequence[repeat.Row]],
    seconds: float = 0.0,
    inputs: Mapping[str, Mapping[str, Mapping[str, str]]] | None = None,
) -> FigureRun:
    """A FigureRun from rows per point (``repeat.row_of`` of results computed anywhere, e.g. by a
    Celery group over ``(point, seed, algorithm)``): the statistics of every point."""
    points = []
    for label, _ in fig.points:
        point_rows = list(rows.get(label, []))
        table = repeat.table(point_rows, fig.metric)
        if not table:
            continue
        counts = repeat.completions(point_rows)
        report = stats.compare(table, reference=fig.reference, metric=fig.metric, completions=counts)
        censored = None
        if stats.completed_only(fig.metric):  # compared whatever the completed counts
            name = f"{fig.metric}_censored"
            censored = stats.compare(repeat.table(point_rows, name), reference=fig.reference, metric=name)
        points.append(PointResult(label, point_rows, report, censored))
    copied = {p: {s: dict(d) for s, d in by_seed.items()} for p, by_seed in (inputs or {}).items()}
    return FigureRun(fig, list(seeds), points, seconds, copied)


def run_figure(
    fig: Figure,
    seeds: Sequence[int],
    progress: Callable[[str, repeat.Row, dict[str, Any]], None] | None = None,
) -> FigureRun:
    """Every algorithm on every (point, seed) in this process, then the statistics per point."""
    t0 = time.perf_counter()
    rows: dict[str, list[repeat.Row]] = {}
    inputs: dict[str, dict[str, dict[str, str]]] = {}
    for label, _ in fig.points:
        cases = [case(fig, label, s) for s in seeds]
        inputs[label] = {str(c.seed): provenance.inputs(c.instance) for c in cases}

        def report(row: repeat.Row, doc: dict[str, Any], point: str = label) -> None:
            if progress is not None:
                progress(point, row, doc)

        rows[label] = repeat.run(cases, fig.algorithms_at(label), fig.horizon, progress=report)
    return assemble(fig, seeds, rows, time.perf_counter() - t0, inputs)


def _shown(value: float | None, scale: float) -> str:
    return "-" if value is None else repeat.fmt(value / scale)


def _ci(ci: stats.Interval | None, scale: float) -> str:
    return "no CI" if ci is None else f"[{_shown(ci.low, scale)}, {_shown(ci.high, scale)}]"


def claim_holds(point: PointResult, fig: Figure) -> str:
    best = point.report.best
    if best == fig.claimed_at(point.label):
        return f"yes: {best} is best, separated from every other algorithm (95% CIs)"
    if best is not None:
        return f"no: {best} is best, separated from every other algorithm (95% CIs)"
    return f"no: {point.report.best_note}"


def seed_text(seeds: Sequence[int]) -> str:
    """ "0-9" for a run of consecutive seeds, else "0, 3, 5"."""
    if len(seeds) > 1 and list(seeds) == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def markdown(run: FigureRun) -> str:
    fig = run.figure
    seeds = run.seeds
    side = stats.direction(fig.metric)
    lines = [
        f"### {fig.paper} {fig.figure}: {fig.title}",
        "",
        f"Setting: {fig.setting}. Seeds {seed_text(seeds)} ({len(seeds)}; trace seed = algorithm seed). "
        f"Metric: {fig.metric} ({fig.unit}; {side} is better). Median and mean with 95% bootstrap CIs; "
        f"paired median difference (algorithm - {fig.reference}) and median ratio (algorithm / {fig.reference}) "
        f"per seed with their 95% CIs; W/T/L = the "
        f"algorithm's wins/ties/losses against {fig.reference} (tie within 0.1%); docs/statistics.md.",
        "",
        f"Paper: {fig.paper_claim}",
        "",
        *([f"Frame: {fig.frame}", ""] if fig.frame else []),
    ]
    for point in run.points:
        lines += [
            f"**{fig.x_label} = {point.label}**. Claim holds across seeds: {claim_holds(point, fig)}.",
            "",
            *_table(point.report, fig),
        ]
        apart = {alg: p for alg, p in point.report.paired.items() if p.not_comparable}
        lines += [f"- {alg}: {p.note}." for alg, p in apart.items() if p.n]  # (else the verdict says it)
        if apart and point.censored is not None:
            lines += [
                "",
                f"Completed counts differ, so {fig.metric} (over completed jobs) is compared only where they are "
                f"equal; {point.censored.metric} counts every job, an unfinished one as completing at the end of "
                "its run (a lower bound on what it would have cost):",
                "",
                *_table(point.censored, fig),
            ]
        lines.append("")
        lines += _also_table(fig, point)
    lines.append(
        f"Code {provenance.code()['version']} at commit {provenance.code()['commit']}; {run.seconds:.0f} s wall."
    )
    return "\n".join(lines) + "\n"


def _table(r: stats.MetricReport, fig: Figure) -> list[str]:
    """One point's Markdown table of ``r``: per algorithm median, mean, paired difference, ratio, W/T/L, verdict."""
    lines = [
        f"| algorithm | median [95% CI] | mean [95% CI] | diff vs {fig.reference} [95% CI] "
        f"| ratio to {fig.reference} [95% CI] | W/T/L | verdict | paper |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for alg, s in r.summaries.items():
        p = r.paired.get(alg)
        name = f"**{alg}**" if r.best == alg else alg
        cells = [name, f"{_shown(s.median, fig.scale)} {_ci(s.median_ci, fig.scale)}"]
        cells.append(f"{_shown(s.mean, fig.scale)} {_ci(s.mean_ci, fig.scale)}")
        if p is None:
            cells += ["(reference)", "", "", ""]
        else:
            cells += [f"{_shown(p.median_diff, fig.scale)} {_ci(p.median_ci, fig.scale)}"]
            cells += [f"{_shown(p.median_ratio, 1.0)} {_ci(p.median_ratio_ci, 1.0)}"]
            cells += [f"{p.wins}/{p.ties}/{p.losses}", p.verdict]
        cells.append(fig.paper_values.get(alg, "") if r.metric == fig.metric else "")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def metric_value(metrics: Mapping[str, Any], name: str) -> float | None:
    """A result metric by name; "utilization.gpu" reads one resource of the utilisation map."""
    head, _, resource = name.partition(".")
    value = metrics.get(head)
    if resource and isinstance(value, Mapping):
        value = value.get(resource)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _also_table(fig: Figure, point: PointResult) -> list[str]:
    """The figure's ``also`` metrics at one point: median [95% CI] per algorithm (no pairing)."""
    if not fig.also:
        return []
    reports = []
    for m in fig.also:
        table: dict[str, dict[str, float | None]] = {}
        for r in point.rows:
            table.setdefault(r.label, {})[r.case.key] = metric_value(r.metrics, m)
        reports.append(stats.compare(table, reference=fig.reference, metric=m.partition(".")[0]))
    lines = ["| algorithm | " + " | ".join(f"{m} median [95% CI]" for m in fig.also) + " |"]
    lines.append("|---|" + "---|" * len(fig.also))
    for alg in reports[0].summaries:
        cells = [alg]
        for rep_ in reports:
            s = rep_.summaries.get(alg)
            cells.append("-" if s is None else f"{_shown(s.median, 1.0)} {_ci(s.median_ci, 1.0)}")
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def write(run: FigureRun, out: Path) -> list[Path]:
    """runs.csv, summary.csv, table.md, figure.html (+ plotly.min.js) and provenance.json in ``out``."""
    fig = run.figure
    out.mkdir(parents=True, exist_ok=True)
    written = [out / n for n in ("runs.csv", "summary.csv", "table.md", "provenance.json")]
    with written[0].open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["point", "seed", "label", "algorithm", "params", *repeat.METRICS])
        for point in run.points:
            for row in point.rows:
                values = [row.metrics.get(m) for m in repeat.METRICS]
                params = json.dumps(row.params, sort_keys=True)
                w.writerow(
                    [
                        point.label,
                        row.case.seed,
                        row.label,
                        row.algorithm,
                        params,
                        *["" if v is None else v for v in values],
                    ]
                )
    with written[1].open("w", newline="", encoding="utf-8") as f:
        dw = csv.DictWriter(f, fieldnames=["point", *repeat.SUMMARY_COLUMNS, "claim_holds"])
        dw.writeheader()
        for point in run.points:
            holds = "yes" if point.report.best == fig.claimed_at(point.label) else "no"
            for report in (point.report, point.censored):  # the censored rows carry no claim
                for srow in repeat.summary_rows(report) if report is not None else ():
                    cells = {k: "" if srow.get(k) is None else srow.get(k) for k in repeat.SUMMARY_COLUMNS}
                    dw.writerow({"point": point.label, **cells, "claim_holds": holds if report is point.report else ""})
    written[2].write_text(markdown(run), encoding="utf-8")
    record = {
        "figure": fig.name,
        "paper": f"{fig.paper} {fig.figure}",
        "setting": fig.setting,
        "frame": fig.frame,
        "metric": fig.metric,
        "seeds": run.seeds,
        "algorithms": [{"label": lb, "algorithm": a, "params": dict(p)} for lb, a, p in fig.algorithms],
        "reference": fig.reference,
        "code": provenance.code(),
        "inputs": run.inputs,
        "seconds": round(run.seconds, 1),
    }
    written[3].write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    html = out / "figure.html"
    if _plot(run, html):
        written.append(html)
    return written


def _plot(run: FigureRun, path: Path) -> bool:
    """Medians with 95% CI error bars per algorithm and point (Plotly); False if plotly is missing."""
    try:
        import plotly.graph_objects as go
    except ImportError:  # pragma: no cover - plotly is a pinned runtime dependency
        return False
    fig = run.figure
    chart = go.Figure()
    for label, _, _ in fig.algorithms:
        xs, ys, up, down = [], [], [], []
        for point in run.points:
            s = point.report.summaries.get(label)
            if s is None or s.median is None:
                continue
            xs.append(point.label)
            ys.append(s.median / fig.scale)
            ci = s.median_ci
            up.append(0.0 if ci is None else (ci.high - s.median) / fig.scale)
            down.append(0.0 if ci is None else (s.median - ci.low) / fig.scale)
        chart.add_trace(
            go.Bar(name=label, x=xs, y=ys, error_y={"type": "data", "array": up, "arrayminus": down, "visible": True})
        )
    chart.update_layout(
        title=f"{fig.paper} {fig.figure}: {fig.title} (median, 95% CI, {len(run.seeds)} seeds)",
        xaxis_title=fig.x_label,
        yaxis_title=f"{fig.metric} ({fig.unit})",
        barmode="group",
    )
    chart.write_html(str(path), include_plotlyjs="directory")
    return True


def seeds_of(text: str | None, fig: Figure) -> list[int]:
    """``--seeds``: a count N (seeds 0..N-1), or a list/range such as 0-9 or 3,5,8."""
    if text is None:
        return list(range(fig.default_seeds))
    if text.strip().isdigit():
        n = int(text)
        if not 1 <= n <= repeat.MAX_CASES:
            raise InputError(f"{n} seeds: give 1 to {repeat.MAX_CASES}", field="--seeds")
        return list(range(n))
    return repeat.parse_seeds(text)
