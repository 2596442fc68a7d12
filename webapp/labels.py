"""How runs are named in tables, charts, pickers and the experiment list: by algorithm, with the
parameters that tell an experiment's runs of one algorithm apart, written as an "Also run" line
writes them."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from scheduling import registry
from webapp.models import Experiment, Run
from webapp.repetitions import repetition_name

# The status a badge of several runs shows: the first of these that any of them has.
BADGE_STATUS = (Run.Status.FAILED, Run.Status.RUNNING, Run.Status.QUEUED, Run.Status.CANCELLED, Run.Status.DONE)


def run_badges(exp: Experiment, runs: Sequence[Run]) -> list[tuple[str, str, str, list[str]]]:
    """One badge per algorithm variant of the experiment list (its series label, "drf fixed=true";
    a sweep's runs of one variant share it, "drf ×3"), as (status, text, title, first error): the
    status that needs attention first, and each status with its count."""
    labels = run_labels(exp, runs, series=True, repetition=False)
    groups: dict[str, list[Run]] = {}
    for r in runs:
        groups.setdefault(labels[r.pk], []).append(r)
    badges = []
    for label, members in groups.items():
        counts = Counter(r.status for r in members)
        status = next(s for s in BADGE_STATUS if counts[s])
        title = ", ".join(f"{s} {n}" if len(members) > 1 else s for s, n in counts.items())
        errors = [r.error for r in members if r.error]
        badges.append((str(status), label if len(members) == 1 else f"{label} ×{len(members)}", title, errors[:1]))
    return badges


def run_label(run: Run, exp: Experiment) -> str:
    """How a run is named in charts and tables: its algorithm; when the experiment has several runs
    of that algorithm, the parameters that differ among them (a run's value only where it is not the
    default: "drf" and "drf fixed=true"); in a sweep, then the swept value ("drf workers_max=4").
    Unique within the experiment: runs the parameters do not tell apart get their id ("drf #12").
    For every run of an experiment at once, ``run_labels``."""
    runs = list(exp.runs.all())
    if run.pk not in {r.pk for r in runs}:
        runs.append(run)
    return run_labels(exp, runs)[run.pk]


def run_labels(
    exp: Experiment, runs: Sequence[Run] | None = None, *, series: bool = False, repetition: bool = True
) -> dict[int, str]:
    """``run_label`` of each of ``runs`` (default: the experiment's), by run id, in one pass: each
    algorithm's runs are compared once, so a page of 120 runs costs no query per run (with the
    runs prefetched, none) and time linear in the runs. ``series``: the label of the line a run
    belongs to in a sweep's charts instead (no swept value; runs of one line share it). A run of a
    repetition ends in its repetition ("fifo · seed 3"); ``repetition=False`` leaves that out, which
    names the variant the runs of every repetition share."""
    runs = list(exp.runs.all()) if runs is None else runs
    swept = exp.sweep.get("param") if exp.kind == Experiment.Kind.SWEEP else None
    by_algorithm: dict[str, list[Run]] = {}
    for r in runs:
        by_algorithm.setdefault(r.algorithm, []).append(r)
    labels: dict[int, str] = {}
    for algorithm, siblings in by_algorithm.items():
        varied = _varied(siblings, swept)
        defaults = _defaults(algorithm)
        base = {r.pk: _base_label(r, varied, defaults, None if series else swept) for r in siblings}
        reps = {r.pk: r.repetition for r in siblings}
        counts = Counter((label, reps[pk]) for pk, label in base.items())  # repetitions of a variant share it
        if series:
            labels.update(base)
        else:
            labels.update(
                {pk: f"{label} #{pk}" if counts[label, reps[pk]] > 1 else label for pk, label in base.items()}
            )
        if repetition:
            labels.update(
                {
                    pk: f"{labels[pk]} · {repetition_name(exp.repetition, reps[pk])}"
                    for pk in base
                    if reps[pk] is not None
                }
            )
    return labels


def _varied(runs: Sequence[Run], swept: str | None) -> list[str]:
    """The parameters (the swept one aside) that take more than one value among ``runs``, sorted."""
    keys = sorted({k for r in runs for k in r.params if k != swept})
    return [k for k in keys if len({json.dumps(r.params.get(k), default=str) for r in runs}) > 1]


def _base_label(run: Run, varied: Sequence[str], defaults: Mapping[str, Any], swept: str | None) -> str:
    """The algorithm, the varied parameters where not at their default, and the swept value."""
    missing = object()
    parts = [f"{k}={_label_value(run.params.get(k))}" for k in varied if run.params.get(k) != defaults.get(k, missing)]
    if swept is not None and swept in run.params:
        parts.append(f"{swept}={_label_value(run.params[swept])}")
    return " ".join([run.algorithm, *parts])


def _defaults(algorithm: str) -> dict[str, Any]:
    """The registry's default parameters of ``algorithm`` ({} for one no longer registered)."""
    spec = registry.all_specs().get(algorithm)
    return spec.parse_params({}) if spec is not None else {}


def _label_value(value: Any) -> str:
    """A parameter value as an "Also run" line writes it: true/false, numbers in full (0.001, 1000)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.12g}"
    return str(value)
