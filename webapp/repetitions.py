"""Repetitions: an experiment's runs repeated over seeds or over windows of its trace
(docs/architecture.md, "Repetitions").

* Over seeds ``S``: for a preset, repetition i draws the preset's trace with seed ``S[i]`` and runs
  every algorithm with seed ``S[i]`` (a fresh instance and fresh algorithm randomness); for an
  uploaded or library trace, the trace stays and only the algorithm seed is ``S[i]`` (randomised
  algorithms and predictors).
* Over windows: repetition i keeps the jobs of window i of the trace, their arrivals shifted to
  start at slot 0; every run uses the experiment's seed. "K" cuts the trace into K windows of equal
  job counts in arrival order, "a:b, c:d" keeps the jobs arriving in those slot ranges, both as
  ``compare --windows`` does (``scheduling.repeat.window_cases``; the worker cuts the trace again).

Every (algorithm, parameters) variant, in a sweep every (variant, swept value), runs once per
repetition: runs of one repetition are paired, which the repetitions tab compares.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduling import presets, repeat
from scheduling.errors import InputError
from scheduling.model import Instance
from webapp.models import Experiment

MAX_SEEDS = 100  # repetitions one experiment may have
NONE, SEEDS, WINDOWS = "", "seeds", "windows"


@dataclass(frozen=True)
class RunSpec:
    """One run of a repeated experiment, as it is stored."""

    algorithm: str
    params: Mapping[str, Any]
    seed: int
    repetition: int | None = None
    trace_seed: int | None = None
    window: tuple[int, int] | None = None


def parse_seeds(text: str) -> list[int]:
    """ "10" (a count: seeds 0..9), or seeds as ``compare --seeds`` takes them ("0-9", "1, 5, 9",
    "0-4, 10"; ``scheduling.repeat.parse_seeds``) -> the seeds; ValueError naming the problem."""
    text = text.strip()
    if not text:
        raise ValueError("Give the seeds: a count (10), a range (0-9) or a list (1, 5, 9).")
    if text.isdigit():
        if not 2 <= int(text) <= MAX_SEEDS:
            raise ValueError(f"{text!r}: repeat over 2 to {MAX_SEEDS} seeds")
        return list(range(int(text)))
    try:
        seeds = repeat.parse_seeds(text, field="seeds")
    except InputError as exc:
        raise ValueError(exc.problem) from None
    if not 2 <= len(seeds) <= MAX_SEEDS:
        raise ValueError(f"{len(seeds)} seeds: repeat over 2 to {MAX_SEEDS} seeds")
    if max(seeds) > 2**32 - 1:
        raise ValueError("a seed is at most 4294967295")
    return seeds


def parse_windows(text: str, instance: Instance) -> tuple[int | list[tuple[int, int]], list[tuple[int, int]]]:
    """ "K" (K windows of equal job counts in arrival order) or "0:500, 500:1000" (arrival slots
    [start, end)), as ``compare --windows`` takes them -> (that cut, each window's [start, end) of
    arrival slots); ValueError naming the problem. The windows are cut by
    ``scheduling.repeat.window_cases``, as the worker cuts them again for each run."""
    text = text.strip()
    if not text:
        raise ValueError("Give the windows: a count (5) or arrival-slot ranges (0:500, 500:1000).")
    try:
        cut = repeat.parse_windows(text.replace(" ", ""), field="windows")
        cases = repeat.window_cases(instance, cut, [0])
    except InputError as exc:
        raise ValueError(exc.problem) from None
    if not 2 <= len(cases) <= MAX_SEEDS:
        raise ValueError(f"{len(cases)} windows: cut the trace into 2 to {MAX_SEEDS} windows")
    spans = []
    for case in cases:
        start, _, end = (case.window or "0:0").partition(":")
        spans.append((int(start), int(end)))
    return cut, spans


def describe(
    over: str,
    seeds: Sequence[int],
    cut: int | Sequence[tuple[int, int]] | None,
    spans: Sequence[tuple[int, int]],
    preset: bool,
) -> dict[str, Any]:
    """The experiment's ``repetition`` field: over seeds, the seeds and whether they draw the trace
    (a preset); over windows, how the trace is cut (``cut_by``: K or the ranges), whether evenly,
    and each window's [start, end) arrival slots."""
    if over == SEEDS:
        return {"over": SEEDS, "seeds": list(seeds), "trace_seeds": preset}
    if over == WINDOWS and cut is not None:
        cut_by = cut if isinstance(cut, int) else [list(w) for w in cut]
        return {"over": WINDOWS, "cut_by": cut_by, "cut": "even" if isinstance(cut, int) else "chosen",
                "windows": [list(w) for w in spans]}  # fmt: skip
    return {}


def count(repetition: Mapping[str, Any]) -> int:
    """How many repetitions (1: none)."""
    if repetition.get("over") == SEEDS:
        return len(repetition["seeds"])
    if repetition.get("over") == WINDOWS:
        return len(repetition["windows"])
    return 1


def expand(runs: Sequence[tuple[str, Mapping[str, Any]]], repetition: Mapping[str, Any], seed: int) -> list[RunSpec]:
    """The stored runs: each (algorithm, parameters) once, or once per repetition (repetition-major,
    so that a group's first results cover whole repetitions)."""
    over = repetition.get("over")
    if over == SEEDS:
        preset = bool(repetition.get("trace_seeds"))
        return [RunSpec(a, p, s, i, s if preset else None) for i, s in enumerate(repetition["seeds"]) for a, p in runs]
    if over == WINDOWS:
        return [
            RunSpec(a, p, seed, i, None, (w[0], w[1])) for i, w in enumerate(repetition["windows"]) for a, p in runs
        ]
    return [RunSpec(a, p, seed) for a, p in runs]


def repetition_name(repetition: Mapping[str, Any], index: int | None) -> str:
    """How a repetition is named in tables: "seed 3", "window 2 [500, 1000)"."""
    if index is None:
        return ""
    if repetition.get("over") == SEEDS:
        return f"seed {repetition['seeds'][index]}"
    if repetition.get("over") == WINDOWS:
        a, b = repetition["windows"][index]
        return f"window {index + 1}" if a is None else f"window {index + 1} [{a}, {b})"
    return f"repetition {index + 1}"


def preset_history(exp: Experiment, trace_seed: int | None = None) -> tuple[str, str]:
    """(name, text) of a preset experiment's own history for its trace of ``trace_seed`` (None: the
    experiment's seed): the preset with the experiment's options drawn from seed +
    ``presets.HISTORY_SEED_OFFSET``, the file ``generate --history`` writes."""
    options = dict(exp.preset_options)
    if trace_seed is not None:
        options["seed"] = trace_seed
    files = presets.own_history(exp.preset, **options)
    return files.trace_name, files.trace


def history_of(exp: Experiment, trace_seed: int | None = None) -> tuple[str, str] | None:
    """(name, text) of the history the experiment gives the algorithms that learn from one
    (``AlgorithmSpec.history``): the one given with its trace, or a preset experiment's own
    (``preset_history``, for ``trace_seed``); None if it has none. InputError if the preset no
    longer builds with the experiment's options."""
    if exp.history_text:
        return exp.history_name, exp.history_text
    if exp.source == Experiment.Source.PRESET:
        return preset_history(exp, trace_seed)
    return None


def repetition_inputs(exp: Experiment, trace_seed: int) -> tuple[str, str, str]:
    """(cluster text, trace name, trace text) of a preset experiment's repetition with ``trace_seed``:
    the preset built again with the experiment's options (jobs, size, offered load) and that seed
    (byte-identical each time), with the experiment's restart cost (``restart_seconds``, which the
    form writes into the stored cluster spec)."""
    options = {**exp.preset_options, "seed": trace_seed}
    files = presets.build(exp.preset, **options)
    restart = json.loads(exp.cluster_text).get("restart_seconds") if exp.cluster_text else None
    if restart is None:
        return files.cluster, files.trace_name, files.trace
    spec = json.loads(files.cluster)
    spec["restart_seconds"] = restart
    return json.dumps(spec, indent=1), files.trace_name, files.trace
