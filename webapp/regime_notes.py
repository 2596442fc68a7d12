"""The result page's note when a preset experiment's instance is outside the regime its paper's
headline was measured in (``scheduling.regimes``): the one-click examples and the form's presets."""

from __future__ import annotations

from scheduling import regimes
from webapp.models import Experiment


def note(exp: Experiment) -> str | None:
    """The warning for ``exp``'s instance, or None (not a preset, or in the headline's regime)."""
    if exp.source != Experiment.Source.PRESET or not exp.preset:
        return None
    options = exp.preset_options or {}
    if options.get("adapt"):  # another trace adapted to a paper's model: not the preset's instance
        return None
    size = options.get("size")
    return regimes.outside(exp.preset, options.get("jobs"), 1.0 if size is None else float(size), options.get("load"))
