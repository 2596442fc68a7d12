"""Repetitions: an experiment's runs repeated over seeds or over windows of its trace
(docs/architecture.md, "Repetitions").

* Over seeds ``S``: for a preset, repetition i draws the preset's trace with seed ``S[i]`` and runs
  every algorithm with seed ``S[i]`` (a fresh instance and fresh algorithm randomness); for an
  uploaded or library trace, the trace stays and only the algorithm seed is ``S[i]`` (randomised
  algorithms and predictors).
* Over windows: repetition i keeps the jobs arriving in its window [start, end) of arrival slots,
  shifted to start at slot 0 (``workers.runs.cut_window``); every run uses the experiment's seed.
  "K" cuts the trace evenly by job count (``workers.runs.even_windows``); "a:b, c:d" are the
  user's windows.

Every (algorithm, parameters) variant, in a sweep every (variant, swept value), runs once per
repetition: runs of one repetition are paired, which the repetitions tab compares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduling import presets
from scheduling.errors import InputError
from webapp.models import Experiment
from workers.runs import even_windows

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
    """ "10" (seeds 0..9), "3-7" (3..7, both included) or "1, 5, 9" -> the seeds; ValueError if bad."""
    text = text.strip()
    if not text:
        raise ValueError("Give the seeds: a count (10), a range (0-9) or a list (1, 5, 9).")
    if "," not in text and "-" in text:
        first, _, last = (x.strip() for x in text.partition("-"))
        if not (first.isdigit() and last.isdigit()):
            raise ValueError(f"{text!r}: a range of seeds is first-last, two whole numbers >= 0")
        lo, hi = int(first), int(last)
        if hi < lo:
            raise ValueError(f"{text!r}: the range ends before it starts")
        if hi - lo + 1 > MAX_SEEDS:
            raise ValueError(f"{text!r}: more than {MAX_SEEDS} seeds")
        seeds = list(range(lo, hi + 1))
    elif "," not in text:
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"{text!r}: a count of seeds is a whole number >= 1")
        if int(text) > MAX_SEEDS:
            raise ValueError(f"{text!r}: more than {MAX_SEEDS} seeds")
        seeds = list(range(int(text)))
    else:
        seeds = []
        for part in (x.strip() for x in text.split(",")):
            if not part.isdigit():
                raise ValueError(f"{part!r} is not a seed (a whole number >= 0)")
            if int(part) in seeds:
                raise ValueError(f"seed {part} is given twice")
            seeds.append(int(part))
    if len(seeds) > MAX_SEEDS:
        raise ValueError(f"more than {MAX_SEEDS} seeds")
    if any(s > 2**32 - 1 for s in seeds):
        raise ValueError("a seed is at most 4294967295")
    if len(seeds) < 2:
        raise ValueError("repeat over at least 2 seeds")
    return seeds


def parse_windows(text: str, arrivals: Sequence[int], label: str) -> tuple[list[tuple[int, int]], str]:
    """ "K" (cut evenly by job count) or "0:500, 500:1000" (arrival slots [start, end)) -> the
    windows and how they were cut ("even" or "chosen"); ValueError naming the problem."""
    text = text.strip()
    if not text:
        raise ValueError("Give the windows: a count (5) or arrival-slot ranges (0:500, 500:1000).")
    if text.isdigit():
        k = int(text)
        if not 2 <= k <= MAX_SEEDS:
            raise ValueError(f"{text!r}: cut the trace into 2 to {MAX_SEEDS} windows")
        try:
            return even_windows(arrivals, k, label), "even"
        except InputError as exc:
            raise ValueError(str(exc)) from None
    windows: list[tuple[int, int]] = []
    for part in (x.strip() for x in text.split(",") if x.strip()):
        start, colon, end = (x.strip() for x in part.partition(":"))
        if not (colon and start.isdigit() and end.isdigit()):
            raise ValueError(f"{part!r} is not a window start:end (arrival slots, whole numbers)")
        a, b = int(start), int(end)
        if b <= a:
            raise ValueError(f"{part!r}: the window ends before it starts")
        if not any(a <= t < b for t in arrivals):
            raise ValueError(f"{label}: no job arrives in the window {part} (slots [{a}, {b}))")
        windows.append((a, b))
    if not 2 <= len(windows) <= MAX_SEEDS:
        raise ValueError(f"give 2 to {MAX_SEEDS} windows")
    return windows, "chosen"


def describe(
    over: str, seeds: Sequence[int], windows: Sequence[tuple[int, int]], cut: str, preset: bool
) -> dict[str, Any]:
    """The experiment's ``repetition`` field."""
    if over == SEEDS:
        return {"over": SEEDS, "seeds": list(seeds), "trace_seeds": preset}
    if over == WINDOWS:
        return {"over": WINDOWS, "windows": [list(w) for w in windows], "cut": cut}
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
        return f"window {index + 1} [{a}, {b})"
    return f"repetition {index + 1}"


def repetition_inputs(exp: Experiment, trace_seed: int) -> tuple[str, str, str]:
    """(cluster text, trace name, trace text) of a preset experiment's repetition with ``trace_seed``:
    the preset built again with the experiment's options and that seed (byte-identical each time)."""
    o = exp.preset_options
    files = presets.build(exp.preset, jobs=o.get("jobs"), seed=trace_seed, size=o.get("size", 1.0))
    return files.cluster, files.trace_name, files.trace
