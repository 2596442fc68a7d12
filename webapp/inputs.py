"""The inputs of a new experiment as the form, the API, a preset or a rerun hand them over
(``Inputs``, ``Submission``), and the one preview of an input file's head that pages show."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from webapp.models import Experiment


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


# The frozen input files of an experiment: megabytes for a production trace. Listing pages (the
# experiment list, GET /api/experiments) never load them.
INPUT_TEXTS = ("cluster_text", "trace_text", "history_text")


def preview(text: str, lines: int = 25, chars: int = 5000) -> str:
    """The head of an input file for display."""
    head = "\n".join(text[:chars].splitlines()[:lines])
    return head if len(head) >= len(text.rstrip()) else head + "\n…"
