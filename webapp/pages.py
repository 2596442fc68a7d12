"""The experiment page's context, tab by tab."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.utils import timezone

from scheduling import prices as price_schema
from scheduling import registry
from scheduling.errors import InputError
from webapp import adapted, charts, figurecache, inputchecks, repetition_stats, results_io
from webapp.charts.safe import escape_figure
from webapp.charts.sweeps import unchanged as sweep_unchanged
from webapp.inputs import preview
from webapp.labels import run_labels
from webapp.models import Experiment, Run
from webapp.rigid import all_rigid, shown_params
from webapp.runstatus import queue_positions, waiting_for_broker, waiting_long
from webapp.timeleft import left_text, seconds_left
from webapp.versions import version_note

TABS = (
    ("summary", "Summary"),
    ("jct", "JCT"),
    ("gantt", "Gantt"),
    ("time", "Utilisation"),
    ("prices", "Prices"),
    ("inputs", "Inputs"),
)


def _window(t0: str | None, t1: str | None) -> tuple[tuple[float | None, float | None], str]:
    """The Gantt tab's time window [t0, t1) from the query (blank: open), or the whole time and a
    message naming what is wrong with it (each bad bound)."""
    bounds: list[float | None] = []
    problems = []
    for name, raw in (("From slot", t0), ("to", t1)):
        value = None
        if raw:
            try:
                value = float(raw)
            except ValueError:
                problems.append(f"{name} {raw!r} is not a number")
            else:
                if not math.isfinite(value) or value < 0:
                    problems.append(f"{name} {raw} is not a slot (a number >= 0)")
                    value = None
        bounds.append(value)
    lo, hi = bounds
    if not problems and lo is not None and hi is not None and hi <= lo:
        problems.append(f"The window ends (slot {hi:g}) before it starts (slot {lo:g})")
    if problems:
        return (None, None), "; ".join(problems) + ": showing the whole time."
    return (lo, hi), ""


def _writes_prices(algorithm: str) -> bool:
    """Whether runs of ``algorithm`` carry a price log (False for a name no longer registered)."""
    try:
        return registry.get(algorithm).prices
    except InputError:
        return False


def _figures(prefix: str, figures: Sequence[dict[str, Any] | None]) -> list[dict[str, Any]]:
    return [
        {"dom_id": f"{prefix}-{i}", "script_id": f"{prefix}-figure-{i}", "figure": escape_figure(f)}
        for i, f in enumerate(x for x in figures if x is not None)
    ]


def experiment_page(exp: Experiment, query: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Context of the experiment page; ``query`` is the view state from the URL (tab, run, filters)."""
    q = dict(query or {})
    tabs = (TABS[0], ("repetitions", "Repetitions"), *TABS[1:]) if exp.repetition else TABS
    tab = q.get("tab") if q.get("tab") in dict(tabs) else ("repetitions" if exp.repetition else "summary")
    runs = list(exp.runs.all())
    done = [r for r in runs if r.status == Run.Status.DONE]
    labels = run_labels(exp, runs)
    places = queue_positions(runs)
    now = timezone.now()
    for r in runs:
        r.queue_position = places.get(r.pk)  # type: ignore[attr-defined]
        running = r.status == Run.Status.RUNNING
        r.time_left = left_text(seconds_left(r.progress, r.started, now)) if running else ""  # type: ignore[attr-defined]
    rigid = all_rigid(exp.trace_name, exp.trace_text)
    ctx: dict[str, Any] = {
        "experiment": exp,
        "runs": runs,
        "run_rows": [(r, labels[r.pk], shown_params(r.params, rigid)[0]) for r in runs],
        "hidden_params": sorted({k for r in runs for k in shown_params(r.params, rigid)[1]}),
        "labels": labels,
        "finished": all(r.is_finished for r in runs),
        "waiting_for_broker": waiting_for_broker(exp, runs),
        "input_check": inputchecks.state(exp),
        "waiting_long": waiting_long(runs),
        "redispatch_after": f"{settings.MLSCHED_REDISPATCH_AFTER:g}",
        "tab": tab,
        "tabs": tabs,
        "query": q,
        "metric_columns": charts.metric_columns([r.metrics or {} for r in done]),
        "done_runs": [(r.pk, labels[r.pk]) for r in done],
        "version_note": version_note(done),
        "history_notes": history_notes(exp, runs),
        "adaptation": adapted.page(exp),
        "figures": [],
    }
    ctx["metric_rows"] = charts.summary_table(
        [(r.pk, labels[r.pk], r.params, r.metrics or {}) for r in done], ctx["metric_columns"]
    )
    if tab == "summary":
        if exp.kind == Experiment.Kind.SWEEP and exp.sweep.get("param") and not exp.repetition:  # else: its tab
            param = exp.sweep["param"]
            series = run_labels(exp, done, series=True)
            points = [(series[r.pk], r.params.get(param), r.metrics or {}) for r in done if param in r.params]
            ctx["figures"] = _figures("sweep", charts.sweep_charts(param, points))
            ctx["sweep_notes"] = sweep_unchanged(param, points)
        else:
            ctx["sweep_notes"] = same_variants([(r.algorithm, labels[r.pk], r.metrics or {}) for r in done])
    elif tab == "repetitions":
        ctx.update(repetition_stats.page(exp, runs, q))
        ctx["figures"] = _figures("rep", ctx.pop("rep_figures", []))
    elif tab in figurecache.TABS and done:
        # Finished runs' results never change: the tab's figures are cached (webapp/figurecache.py).
        key = figurecache.key(exp.pk, tab, q, done)
        ctx.update(figurecache.cached(key, lambda: _result_tab(exp, tab, q, done, labels), exp.pk))
    elif tab == "prices":
        # The runs of algorithms that write a price log (registry `prices`); only the chosen run's
        # result is opened (a result of 1,000 OASiS jobs is 8 MB of JSON, one of Philly's 82,247
        # jobs takes 0.5 s to decompress and parse).
        priced = [r for r in done if _writes_prices(r.algorithm)]
        ctx["priced_runs"] = [(r.pk, labels[r.pk]) for r in priced]
        if priced:
            chosen = next((r for r in priced if str(r.pk) == q.get("run")), priced[0])
            ctx["run"] = chosen.pk
            p = results_io.load_result(chosen).get("prices")
            if isinstance(p, Mapping) and p.get("schema") in price_schema.SCHEMAS:
                ctx["prices"] = p
                ctx["figures"] = _figures("prices", charts.price_lines(p))
    elif tab == "inputs":
        ctx["cluster_preview"] = preview(exp.cluster_text)
        ctx["trace_preview"] = preview(exp.trace_text)
        if exp.history_text:
            ctx["history_preview"] = preview(exp.history_text)
    return ctx


def _result_tab(
    exp: Experiment, tab: str, q: Mapping[str, str], done: Sequence[Run], labels: Mapping[int, str]
) -> dict[str, Any]:
    """What the JCT, Gantt and Utilisation tabs add to the page's context: their figures, and the
    runs and window they show."""
    ctx: dict[str, Any] = {}
    if tab == "jct":
        docs = [(labels[r.pk], results_io.load_chart_doc(r)) for r in done]
        by_id = {r.pk: d for r, d in zip(done, docs, strict=True)}
        a = _pick(q.get("a"), done, 0)
        b = _pick(q.get("b"), done, 1 if len(done) > 1 else 0)
        ctx.update(a=a.pk, b=b.pk)
        ctx["figures"] = _figures(
            "jct",
            [
                *charts.metric_bars(docs),
                charts.jct_cdf(docs),
                charts.jct_box(docs),
                charts.jct_scatter(by_id[a.pk], by_id[b.pk]),
                charts.timeliness(docs),
            ],
        )
    elif tab == "gantt":
        run = _pick(q.get("run"), done, 0)
        index = results_io.load_gantt_index(run)
        (t0, t1), ctx["window_error"] = _window(q.get("t0"), q.get("t1"))
        job, server = q.get("job", ""), q.get("server", "")
        figure = charts.gantt_from_index(index, labels[run.pk], job=job, server=server, t0=t0, t1=t1)
        ctx.update(run=run.pk, servers=index["servers"])
        ctx["figures"] = _figures("gantt", [figure])
    elif tab == "time" and exp.repetition:
        ctx["figures"] = _figures("time", repetition_bands(exp, done))
    elif tab == "time":
        docs = [(labels[r.pk], results_io.load_chart_doc(r)) for r in done]
        ctx["figures"] = _figures("time", [*charts.utilization(docs), *charts.events_over_time(docs)])
    return ctx


def repetition_bands(exp: Experiment, done: Sequence[Run]) -> list[dict[str, Any]]:
    """The Utilisation tab of a repeated experiment: a colour per variant, its repetitions as a band."""
    from webapp.charts.bands import events_bands, utilization_bands

    variants = run_labels(exp, done, repetition=False)
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in done:
        groups.setdefault(variants[r.pk], []).append(results_io.load_chart_doc(r))
    pairs = list(groups.items())
    slot_seconds = next((d.get("slot_seconds") for _, docs in pairs for d in docs if d.get("slot_seconds")), None)
    return [*utilization_bands(pairs, slot_seconds), *events_bands(pairs, slot_seconds)]


def history_notes(exp: Experiment, runs: Sequence[Run]) -> list[str]:
    """Notes for runs whose fitted predictor had no history to learn from: an uploaded or library
    trace given without a history (a preset experiment gives its own; a model's history fraction
    one from the trace). asrpt refuses to run so (its run fails with the reason, unless
    no_history=zero); its baselines predict 0 iterations for every job (docs/algorithms-asrpt.md),
    which the page says rather than leave a comparison to look like a result of the algorithms."""
    has_fraction = (adapted.describe(exp)["history_fraction"] or 0) > 0
    if exp.history_text or exp.source == Experiment.Source.PRESET or has_fraction:
        return []
    from scheduling.algorithms.asrpt.predictors import FITTED

    alone = [
        name
        for name in dict.fromkeys(r.algorithm for r in runs)
        if registry.learns_from_history(name)
        and any(r.params.get("predictor") in FITTED for r in runs if r.algorithm == name)
    ]
    if not alone:
        return []
    refused = [  # asrpt's default no_history=refuse (scheduling/algorithms/asrpt/spec.py without_history)
        name
        for name in alone
        if name == "asrpt"
        and all(r.params.get("no_history", "refuse") == "refuse" for r in runs if r.algorithm == name)
    ]
    zero = [name for name in alone if name not in refused]
    remedy = (
        "Create the experiment again with a history file (past jobs of the same cluster), or run it as a "
        "model with a history fraction (the leading part of the trace), to compare them as the paper does."
    )
    notes = []
    if refused:
        notes.append(
            "asrpt: no history of past jobs was given with the trace, so asrpt refused to run (its fitted "
            f"predictor has nothing to learn from; no_history=zero predicts 0 iterations instead). {remedy}"
        )
    if zero:
        notes.append(
            f"{', '.join(zero)}: no history of past jobs was given with the trace, so the fitted predictor "
            f"predicted 0 iterations for every job and predicted work told no two jobs apart. {remedy}"
        )
    return notes


def same_variants(runs: Sequence[tuple[str, str, Mapping[str, Any]]]) -> list[str]:
    """Notes for runs of one algorithm with other parameters ("Also run" variants) that gave exactly
    the same metrics: the parameters changed no schedule there. ``runs``: (algorithm, label, metrics)."""
    notes = []
    for algorithm in dict.fromkeys(a for a, _, _ in runs):
        mine = [(label, m) for a, label, m in runs if a == algorithm]
        groups: dict[str, list[str]] = {}
        for label, m in mine:
            groups.setdefault(json.dumps(m, sort_keys=True), []).append(label)
        for same in groups.values():
            if len(same) > 1:
                notes.append(f"{', '.join(same)} gave the same metrics: their parameters changed no schedule here.")
    return notes


def _pick(value: str | None, runs: Sequence[Run], default: int) -> Run:
    return next((r for r in runs if str(r.pk) == value), runs[default])


def warm(sender: Any = None, *, experiment_id: int, **kwargs: Any) -> None:
    """Draw the default views of the experiment's JCT, Gantt and Utilisation tabs into the figure
    cache (``MLSCHED_WARM_FIGURES``): the receiver of ``signals.experiment_finished``, sent on the
    worker when the experiment's last run has finished (connected in ``WebappConfig.ready``)."""
    if not settings.MLSCHED_WARM_FIGURES:
        return
    exp = Experiment.objects.prefetch_related("runs").filter(pk=experiment_id).first()
    if exp is None or not all(r.is_finished for r in exp.runs.all()):
        return
    for tab in figurecache.TABS:
        experiment_page(exp, {"tab": tab})
