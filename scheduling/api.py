"""The library entry points the CLI, the Celery tasks and the tests share."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scheduling import registry, results
from scheduling.engine import simulate
from scheduling.errors import ScheduleError
from scheduling.loaders import load_cluster, load_trace
from scheduling.model import Instance
from scheduling.validator import validate


def load_instance(cluster: Path | str, trace: Path | str) -> Instance:
    c = load_cluster(cluster)
    return Instance(c, load_trace(trace, c))


def run(
    instance: Instance,
    algorithm: str,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    horizon: int | None = None,
    restart_seconds: float | None = None,
) -> dict[str, Any]:
    """Simulate, build the result document and validate it; ScheduleError if it is invalid.

    ``params`` may hold raw strings (CLI, forms); they are parsed against the registry entry.
    ``restart_seconds`` overrides the cluster's ``restart_seconds`` (DESIGN section 9).
    """
    spec = registry.get(algorithm)
    parsed = spec.parse_params(params or {})
    algo = spec.build(instance, parsed, seed)
    outcome = simulate(instance, algo, horizon=horizon, restart_seconds=restart_seconds)
    doc = results.build(instance, outcome, algorithm, parsed, seed)
    problems = validate(instance, doc)
    if problems:
        raise ScheduleError(f"{algorithm} produced an invalid schedule: " + "; ".join(problems[:5]))
    return doc
