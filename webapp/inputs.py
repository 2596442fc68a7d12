"""The inputs of a new experiment as the form, the API, a preset or a rerun hand them over
(``Inputs``, ``Submission``), and the one preview of an input file's head that pages show."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduling.model import Instance
from webapp.models import Experiment
from workers.runs import trace_format


@dataclass(frozen=True)
class Inputs:
    """A validated cluster spec and trace, and where they came from."""

    source: str  # Experiment.Source
    cluster_name: str
    cluster_text: str
    trace_name: str
    trace_text: str
    preset: str = ""
    preset_options: Mapping[str, Any] = field(default_factory=dict)
    history_name: str = ""  # a separate trace of past jobs (Experiment.history_text); "": none
    history_text: str = ""


@dataclass(frozen=True)
class Submission:
    name: str
    inputs: Inputs
    runs: Sequence[tuple[str, Mapping[str, Any]]]  # (algorithm, parsed parameters), in order
    seed: int
    kind: str = Experiment.Kind.COMPARISON
    sweep: Mapping[str, Any] = field(default_factory=dict)  # {"param", "values"} of a sweep
    repetition: Mapping[str, Any] = field(default_factory=dict)  # Experiment.repetition (repetitions.py)
    # The trace was too large to check in the request (webapp/inputchecks.py): a worker checks it
    # before the runs are sent; ``library`` names the datasets (trace, cluster) it came from, None
    # for uploaded files (then added to the owner's datasets for the check).
    check_first: bool = False
    library: tuple[int, int] | None = None


def preview(text: str, lines: int = 25, chars: int = 5000) -> str:
    """The head of an input file for display."""
    head = "\n".join(text[:chars].splitlines()[:lines])
    return head if len(head) >= len(text.rstrip()) else head + "\n…"


MAX_TRACE_ROWS = 200_000  # jobs a trace sent through the web may hold (the CLI has no such cap)

Reasons = dict[str, str | None]  # algorithm -> why it cannot run the inputs (None: it can), as a trace check stored it


def too_many_rows(text: str, name: str) -> str | None:
    """A message when a trace has more rows than the dashboard accepts (counted before parsing)."""
    rows = text.count('"job_id"') if trace_format(name) == "json" else text.count("\n") - 1
    if rows > MAX_TRACE_ROWS:
        return f"{name}: {rows:,} rows, more than the {MAX_TRACE_ROWS:,} jobs the dashboard accepts (use the CLI)"
    return None


MIB = 2**20


def default_name(inputs: Inputs, repetition: dict[str, Any] | None = None) -> str:
    if inputs.source == Experiment.Source.PRESET:
        o = inputs.preset_options
        seeds = (repetition or {}).get("seeds") if (repetition or {}).get("trace_seeds") else None
        drawn = f"{len(seeds)} trace seeds" if seeds else f"trace seed {o['seed']}"
        return f"{inputs.preset} preset ({o['jobs']} jobs, {drawn}, size {o['size']:g})"
    return f"{inputs.cluster_name} + {inputs.trace_name}"


def with_restart_seconds(
    inputs: Inputs, instance: Instance | Reasons | None, seconds: float
) -> tuple[Inputs, Instance | Reasons | None]:
    """The inputs with the form's restart cost written into the frozen cluster spec (DESIGN
    section 9), so that every run of the experiment, and any rerun, charges it. ``instance`` may be
    a stored trace check's reasons (library inputs checked before), or None (inputs a worker checks
    first): they do not depend on it."""
    spec = json.loads(inputs.cluster_text)
    spec["restart_seconds"] = seconds
    text = json.dumps(spec, indent=1)
    if not isinstance(instance, Instance):
        return dataclasses.replace(inputs, cluster_text=text), instance
    cluster = dataclasses.replace(instance.cluster, restart_seconds=seconds)
    return dataclasses.replace(inputs, cluster_text=text), dataclasses.replace(instance, cluster=cluster)
