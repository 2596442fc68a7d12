"""The reproductions page: one entry per paper figure ``scheduling.reproduce.FIGURES`` lists, run by
a Celery group of ``workers.reproduce_case`` tasks into a folder per figure, ``reproductions/<name>/``
of the default storage (the database unless configured otherwise: every host reads it;
docs/architecture.md, "Reproductions"). The folder is the record: its files say whether the latest
run is running, done or failed, and hold its table and figure. A new run of a figure replaces the
previous one's files; the starts themselves are rows (``ReproductionStart``), which the hourly
quota counts.

A figure whose first x-axis point (its headline setting) is a preset drawn per seed
(``reproduce.preset_builder``) can also be launched as a dashboard experiment: that point's preset
repeated over the figure's default seeds with its algorithms (``as_experiment``; the experiment's
name says which point)."""

from __future__ import annotations

import inspect
import json
import time
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from kombu.exceptions import OperationalError

from scheduling import presets, registry, reproduce
from scheduling.errors import InputError
from webapp import quotas, repetitions
from webapp.inputs import Inputs, Submission
from webapp.models import Experiment, ReproductionStart
from webapp.reproduction_state import folder, state
from webapp.runspecs import MAX_RUNS
from workers import reproductions as task

# Files a reproduction writes that the page serves, with their content types.
FILES = {
    "table.md": "text/markdown; charset=utf-8",
    "summary.csv": "text/csv; charset=utf-8",
    "runs.csv": "text/csv; charset=utf-8",
    "provenance.json": "application/json",
    "figure.html": "text/html; charset=utf-8",
    "plotly.min.js": "text/javascript; charset=utf-8",
}


def delete_folder(path: str) -> None:
    """Delete every stored file under the storage folder ``path``."""
    try:
        dirs, files = default_storage.listdir(path)
    except FileNotFoundError:  # the file system storage: no such folder
        return
    for sub in dirs:
        delete_folder(f"{path}/{sub}")
    for file in files:
        default_storage.delete(f"{path}/{file}")


def entries() -> list[dict[str, Any]]:
    """Every reproducible figure with its latest run and whether it can be launched as an experiment."""
    return [{**item, "run": state(item["name"]), "experiment": launchable(reproduce.FIGURES[item["name"]])}
            for item in reproduce.listing()]  # fmt: skip


def launchable(fig: reproduce.Figure) -> bool:
    """Whether ``as_experiment`` can express the figure (a preset, within the run cap)."""
    return preset_of(fig) is not None and len(_headline_algorithms(fig)) * fig.default_seeds <= MAX_RUNS


def preset_of(fig: reproduce.Figure) -> tuple[str, int, float] | None:
    """(preset, jobs, size) when the figure's first x-axis point (its headline setting: the others are
    other job counts or sensitivity points) draws a preset per seed (a builder made by
    ``reproduce.preset_builder``, whose arguments its closure holds); None otherwise."""
    if not fig.points:
        return None
    build = fig.points[0][1]
    if getattr(build, "__qualname__", "") != "preset_builder.<locals>.build":
        return None
    held = inspect.getclosurevars(build).nonlocals
    if held.get("name") not in presets.PRESETS:
        return None
    return str(held["name"]), int(held["jobs"]), float(held.get("size", 1.0))


def as_experiment(fig: reproduce.Figure) -> Submission | None:
    """The figure as a repeated dashboard experiment: its preset (trace seed = algorithm seed, as
    ``reproduce`` runs it) over its default seeds, every algorithm with its parameters."""
    found = preset_of(fig)
    if found is None or len(_headline_algorithms(fig)) * fig.default_seeds > MAX_RUNS:
        return None
    name, jobs, size = found
    files = presets.build(name, jobs=jobs, seed=0, size=size)
    inputs = Inputs(Experiment.Source.PRESET, "cluster.json", files.cluster, files.trace_name, files.trace, name,
                    {"jobs": jobs, "seed": 0, "size": size})  # fmt: skip
    runs = [
        (algorithm, registry.get(algorithm).parse_params(dict(params)))
        for _, algorithm, params in _headline_algorithms(fig)
    ]
    seeds = list(range(fig.default_seeds))
    return Submission(
        name=f"{fig.paper} {fig.figure}: {fig.title} ({_point_note(fig)}reproduction, {len(seeds)} seeds)",
        inputs=inputs,
        runs=runs,
        seed=0,
        repetition=repetitions.describe(repetitions.SEEDS, seeds, None, [], preset=True),
    )


def _headline_algorithms(fig: reproduce.Figure) -> tuple[reproduce.Algorithm, ...]:
    """The algorithms the figure runs at its first point (the one an experiment launches)."""
    return fig.algorithms_at(fig.points[0][0]) if fig.points else fig.algorithms


def _point_note(fig: reproduce.Figure) -> str:
    """ "100 jobs, load 4, restart 30 s: " for a figure of several points (the experiment runs the first)."""
    return f"{fig.points[0][0]}: " if len(fig.points) > 1 else ""


def check_launch(fig: reproduce.Figure, owner: Any) -> None:
    """QuotaExceeded when ``owner`` may not launch ``fig`` as an experiment now: checked before its
    preset is generated in the request (the form's limits: preset size, experiments per hour,
    runs queued or running)."""
    found = preset_of(fig)
    if found is not None:
        instead = f"run this figure with Run reproduction, or `python -m scheduling reproduce {fig.name}`"
        if problem := quotas.preset_too_large(found[1], instead):
            raise quotas.QuotaExceeded(f"{fig.name}'s preset has {found[1]:,} jobs, and {problem}")
    quotas.check_new_experiment(owner, len(_headline_algorithms(fig)) * fig.default_seeds)


def start(name: str, seeds_text: str, owner: Any = None) -> str:
    """Queue a reproduction of figure ``name`` for ``owner`` (its cases count against their quotas);
    a message for the user (why it did not start, or what started)."""
    fig = reproduce.FIGURES.get(name)
    if fig is None:
        return f"unknown figure {name!r}"
    if state(name)["status"] == "running":
        return f"{name} is already running: wait for it to finish"
    try:
        seeds = reproduce.seeds_of(seeds_text.strip() or None, fig)
    except InputError as exc:
        return f"seeds: {exc.problem}"
    if len(seeds) > 100:
        return "seeds: at most 100"
    try:
        quotas.check_new_experiment(owner, len(task.cases_of(fig, seeds)), what="this reproduction")
    except quotas.QuotaExceeded as exc:
        return str(exc)
    owner_pk = getattr(owner, "pk", None)
    f = folder(name)
    delete_folder(f)
    at = time.time()
    started = json.dumps({"at": at, "seeds": seeds, "owner": owner_pk}).encode("utf-8")
    default_storage.save(f"{f}/started.json", ContentFile(started))
    try:
        task.send(name, seeds, f)
    except OperationalError:
        delete_folder(f)
        return "the task queue cannot be reached: try again later"
    if owner_pk is not None:
        ReproductionStart.objects.create(owner_id=owner_pk, figure=name)
    return f"{name} started over {len(seeds)} seeds (about {fig.minutes:g} min at {fig.default_seeds} seeds)"


def file_name(name: str, filename: str) -> str | None:
    """The storage name of a file of a figure's latest run the page may serve, or None."""
    if name not in reproduce.FIGURES or filename not in FILES:
        return None
    stored = f"{folder(name)}/{filename}"
    return stored if default_storage.exists(stored) else None
