"""The library entry points the CLI, the Celery tasks and the tests share.

Loading an instance needs only the loaders and the model: the engine, the registry, the result
document and the validator are imported by ``run`` when it is first called, so that a command that
only reads inputs (``validate``) starts without them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from scheduling.loaders import load_cluster, load_trace
from scheduling.model import Instance

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def load_instance(
    cluster: Path | str, trace: Path | str, history: Path | str | None = None, *, convert_slots: bool = False
) -> Instance:
    """The cluster and trace, with ``history``: a separate trace of past jobs (same formats) that
    online estimators may calibrate on (oasis bounds=history, asrpt's predictors), never the
    evaluated trace (no look-ahead, DESIGN section 9). A trace stating another ``slot_seconds``
    than the cluster's is refused unless ``convert_slots`` (docs/formats.md, "Slot length")."""
    c = load_cluster(cluster)
    past = load_trace(history, c, convert_slots=convert_slots) if history is not None else ()
    return Instance(c, load_trace(trace, c, convert_slots=convert_slots), history=past)


def run(
    instance: Instance,
    algorithm: str,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    horizon: int | None = None,
    progress: Callable[[float], None] | None = None,
    restart_seconds: float | None = None,
    *,
    compact: bool = False,
) -> dict[str, Any]:
    """Simulate, build the result document and validate it; ScheduleError if it is invalid.

    ``compact``: the document's rows as ``results.Rows`` (read-only, built when read; for a large
    run that is written with ``results.write``), else plain JSON values.

    ``params`` may hold raw strings (CLI, forms); they are parsed against the registry entry.
    ``progress``, if given, is called with the fraction done before each decision (scheduling.progress).
    ``restart_seconds`` overrides the cluster's ``restart_seconds`` (DESIGN section 9).
    """
    from scheduling import registry, results
    from scheduling.engine import simulate
    from scheduling.errors import ScheduleError
    from scheduling.progress import Tracked
    from scheduling.validator import validate

    spec = registry.get(algorithm)
    parsed = spec.parse_params(params or {})
    algo = spec.build(instance, parsed, seed)
    if progress is not None:
        algo = Tracked(algo, instance, progress)
    outcome = simulate(instance, algo, horizon=horizon, restart_seconds=restart_seconds)
    del algo  # the algorithm's state is not needed past its report (in ``outcome``)
    if progress is not None:
        progress(1.0)  # the simulation is over (the last decision came before the last jobs ended)
    doc = results.build(instance, outcome, algorithm, parsed, seed, compact=compact)
    del outcome  # the document holds what the validator reads
    problems = validate(instance, doc)
    if problems:
        raise ScheduleError(f"{algorithm} produced an invalid schedule: " + "; ".join(problems[:5]))
    return doc
