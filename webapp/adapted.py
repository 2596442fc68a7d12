"""Experiments run as the model of a paper: the experiment form's "Run as the model of" choice (API
field ``model``, with ``history_fraction``), docs/api.md.

A rigid GPU cluster and trace (a node-list import, a Philly window) are adapted by
``scheduling.adapt`` (``compare --adapt M``) into one paper's model, and every run of the experiment,
baselines included, runs that one adapted instance. The choice is stored in the experiment's
``preset_options`` under ``"adapt"`` (an uploaded or library experiment has no preset options):
``{"model", "seed", "history_fraction", "records"}``, ``records`` being the adapt.json record of
each adapted instance (one, or one per window of a window repetition), which the experiment page
and the export list. The workers adapt again from the stored inputs (``workers.runs.adapted``:
deterministic in the inputs, the model, the seed, the fraction and the window, so any worker host
gets the same instance); nothing adapted is stored as a file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from scheduling import registry, repeat
from scheduling.adapt import MODELS
from scheduling.errors import InputError
from scheduling.model import Cluster, Instance, Job
from webapp.models import Experiment
from workers.runs import adapted

KEY = "adapt"
CHOICES = [("", "the inputs as given"), *((m, f"{m}: {paper}") for m, paper in MODELS.items())]


def adaptation(exp: Experiment) -> dict[str, Any] | None:
    """What a worker needs to adapt the experiment's inputs (``workers.runs.RunInput.adapt``)."""
    a = (exp.preset_options or {}).get(KEY)
    if not a:
        return None
    return {"model": a["model"], "seed": a["seed"], "history_fraction": a.get("history_fraction")}


def adapt_inputs(
    rigid: Instance,
    model: str,
    seed: int,
    history_fraction: float | None,
    cut: int | Sequence[Sequence[int]] | None,
    inputs: Mapping[str, str],
) -> tuple[dict[str, Any], list[Instance]]:
    """The stored choice (``preset_options["adapt"]``) and the adapted instances: the whole trace's,
    or each window's of the cut (re-seeded per window, as the workers adapt them). InputError
    (naming the window) if one does not adapt."""
    choice = {"model": model, "seed": seed, "history_fraction": history_fraction}
    if cut is None:
        parts: list[tuple[Instance, int | None]] = [(rigid, None)]
    else:
        spec = cut if isinstance(cut, int) else [(int(a), int(b)) for a, b in cut]
        parts = [(case.instance, i) for i, case in enumerate(repeat.window_cases(rigid, spec, [0]))]
    records, instances = [], []
    for part, window in parts:
        try:
            files = adapted(part, choice, inputs, window)
        except InputError as exc:
            where = "" if window is None else f"window {window + 1}: "
            raise InputError(f"{where}{exc.problem}", file=exc.file, field=exc.field) from None
        records.append(files.record)
        instances.append(files.instance())
    return {**choice, "records": records}, instances


def refusal(name: str, params: Mapping[str, Any], instance: Instance) -> str | None:
    """Why algorithm ``name`` with ``params`` cannot run the adapted ``instance``: the registry's
    reason, or asrpt's refusal of a fitted predictor with no history (``history_fraction`` blank)."""
    why = registry.get(name).unsupported(instance)
    if why or name != "asrpt":
        return why
    from scheduling.algorithms.asrpt.spec import without_history

    spec = registry.get(name)
    return without_history(instance, spec.parse_params(dict(params)))


def check_form(form: Any, data: Mapping[str, Any], instance: Any) -> None:
    """``ExperimentForm.clean`` with a model chosen (or a history fraction given): adapt the inputs
    (each window of a window repetition, ``form.repetition``), store the choice in the inputs'
    ``preset_options``, and refuse, on the field that chose them, the algorithms the adapted
    instances cannot run (asrpt with no history included). ``instance``: the rigid inputs, or a stored
    trace check's reasons (the inputs are loaded then)."""
    import dataclasses

    from workers.runs import load_instance

    model, fraction = data.get("model") or "", data.get("history_fraction")
    if not model:
        form.add_error("history_fraction", "A history fraction needs a model to run as (Run as the model of).")
        return
    if fraction is not None and not 0 < fraction < 1:
        form.add_error("history_fraction", "A fraction between 0 and 1 (exclusive), e.g. 0.3; blank: no history.")
        return
    inputs = form.inputs
    if inputs.source == Experiment.Source.PRESET:
        form.add_error("model", "A preset is already in its paper's model: choose uploaded or library inputs.")
        return
    if inputs.history_text:
        form.add_error("model", "Not with a separate history: the history comes from the trace (history fraction).")
        return
    if not isinstance(instance, Instance):
        instance = load_instance(inputs.cluster_text, inputs.cluster_name, inputs.trace_text, inputs.trace_name)
    cut = form.repetition.get("cut_by") if form.repetition.get("over") == "windows" else None
    names = {"cluster": inputs.cluster_name, "trace": inputs.trace_name}
    try:
        choice, instances = adapt_inputs(instance, model, form.cleaned_data.get("seed") or 0, fraction, cut, names)
    except InputError as exc:
        form.add_error("model", f"{model}: {exc}")
        return
    form.inputs = dataclasses.replace(inputs, preset_options={**inputs.preset_options, KEY: choice})
    ticked = set(data.get("algorithms") or ())
    told: set[tuple[str, str]] = set()
    for name, params in form.chosen:  # each variant: asrpt predictor=perfect needs no history
        why = next((w for i in instances if (w := refusal(name, params, i))), None)
        if why is None or (name, why) in told:
            continue
        told.add((name, why))
        why = f"as the model of {model}: {why}"
        if name in ticked:
            form.add_error("algorithms", why)
        else:
            form.add_error("extra_runs", f"{', '.join(f'line {n}' for n in form.run_lines.get(name, []))}: {why}")


def page(exp: Experiment) -> dict[str, Any] | None:
    """For the experiment page: the model, its paper, the history fraction and each adapted
    instance's assumptions, job counts, refused and changed jobs."""
    a = (exp.preset_options or {}).get(KEY)
    if not a:
        return None
    return {
        "model": a["model"],
        "paper": MODELS.get(a["model"], ""),
        "seed": a["seed"],
        "history_fraction": a.get("history_fraction"),
        "records": [
            {**r, "assumptions": [{**x, "value": _shown(x.get("value"))} for x in r.get("assumptions", [])]}
            for r in a.get("records", [])
        ],
    }


def _shown(value: Any) -> str:
    """An assumption's value as the page shows it: text as it is, anything else as JSON."""
    import json

    return value if isinstance(value, str) else json.dumps(value, separators=(", ", ": "))


def describe(exp: Experiment) -> dict[str, Any]:
    """The API's and the export's fields: ``model`` and ``history_fraction`` (None: as given)."""
    a = (exp.preset_options or {}).get(KEY) or {}
    return {"model": a.get("model"), "history_fraction": a.get("history_fraction")}


# ---------------------------------------------------------------------------------------------
# Pre-flight: which algorithm cards a model enables


def _sample() -> Instance:
    """A small rigid GPU instance (24 jobs of 1-8 GPUs in four groups on six 8-GPU servers, slots of
    a minute), standing in for the user's inputs: what an algorithm needs of the adapted model
    (typed workers, pools, stage graphs) does not depend on the jobs' sizes."""
    from scheduling.loaders import cluster_from_dict

    cluster: Cluster = cluster_from_dict(
        {
            "slot_seconds": 60,
            "resources": [{"name": "gpu", "unit": "GPU"}],
            "servers": [{"id": "node", "count": 6, "capacity": {"gpu": 8}}],
        }
    )
    jobs = tuple(
        Job(job_id=f"j{i:02d}", arrival=7 * i, gpus=(1, 2, 4, 8)[i % 4], duration=30 + 11 * i, group=f"g{i % 4}")
        for i in range(24)
    )
    return Instance(cluster, jobs)


@cache
def model_reasons(model: str, history: bool) -> dict[str, str | None]:
    """{algorithm: why it cannot run an instance adapted to ``model``} (None: it can), with a history
    fraction (0.3) or without; computed once per process."""
    sample = _sample()
    _, (instance,) = adapt_inputs(sample, model, 0, 0.3 if history else None, None, {"trace": "sample"})
    out: dict[str, str | None] = {}
    for name in registry.all_specs():
        why = refusal(name, {}, instance)
        if why and name == "asrpt" and not history and "history" in why:
            why = (
                "asrpt needs a history of past jobs to fit its predictor: give a history fraction (the leading "
                "part of the trace), or run it with predictor=perfect or no_history=zero under Also run"
            )
        out[name] = why.split(": job '")[0] if why else None  # the sample's job ids mean nothing to the user
    return out


def reasons() -> dict[str, dict[str, dict[str, str | None]]]:
    """``{model: {"history": reasons, "none": reasons}}`` for the form's script."""
    return {m: {"history": model_reasons(m, True), "none": model_reasons(m, False)} for m in MODELS}


def export(exp: Experiment) -> list[tuple[str, dict[str, Any]]]:
    """The export's files: ``adapt.json`` (the adapted instance's record, as ``adapt`` writes it), or
    ``adapted/window-I/adapt.json`` per window (as ``compare --adapt M --windows`` writes them)."""
    records = ((exp.preset_options or {}).get(KEY) or {}).get("records", [])
    if len(records) == 1 and exp.repetition.get("over") != "windows":
        return [("adapt.json", records[0])]
    return [(f"adapted/window-{i}/adapt.json", r) for i, r in enumerate(records)]
