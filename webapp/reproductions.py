"""The reproductions page: one entry per paper figure ``scheduling.reproduce.FIGURES`` lists, run by
a Celery group of ``workers.reproduce_case`` tasks into a folder per figure under
``MEDIA_ROOT/reproductions/`` (docs/architecture.md, "Reproductions"). The folder is the record: its
files say whether the latest run is running, done or failed, and hold its table and figure. A new
run of a figure replaces the previous one's files.

A figure whose instances are a preset drawn per seed (``reproduce.preset_builder``) can also be
launched as a dashboard experiment: the preset repeated over the figure's default seeds with its
algorithms (``as_experiment``)."""

from __future__ import annotations

import inspect
import json
import shutil
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from kombu.exceptions import OperationalError

from scheduling import presets, registry, reproduce
from scheduling.errors import InputError
from webapp import quotas, repetitions
from webapp.forms import MAX_RUNS
from webapp.models import Experiment
from webapp.services import Inputs, Submission
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


def folder(name: str) -> Path:
    return Path(settings.MEDIA_ROOT) / "reproductions" / name


def starts_log() -> Path:
    """One JSON line per reproduction started from the page, ``{"owner", "at"}``: the hourly quota
    counts them (a figure's folder is replaced by its next run, so it cannot)."""
    return Path(settings.MEDIA_ROOT) / "reproductions" / "starts.jsonl"


def usage(owner_pk: int, since: float) -> tuple[int, int]:
    """(reproductions ``owner_pk`` started since the Unix time ``since``, cases still to run of
    their reproductions running now): what they count against the quotas (webapp/quotas.py)."""
    started = 0
    if (log := starts_log()).exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            started += entry["owner"] == owner_pk and entry["at"] >= since
    left = 0
    for name in reproduce.FIGURES:
        run = state(name)
        if run["status"] == "running" and run.get("owner") == owner_pk:
            left += run["total"] - run["finished"]
    return started, left


def state(name: str) -> dict[str, Any]:
    """The latest run of a figure: {"status": none|running|done|failed|lost, "started", "seeds", ...}."""
    f = folder(name)
    started = f / "started.json"
    if not started.exists():
        return {"status": "none"}
    info: dict[str, Any] = json.loads(started.read_text(encoding="utf-8"))
    if (f / "table.md").exists():
        return {**info, "status": "done", "table": (f / "table.md").read_text(encoding="utf-8"),
                "figure": (f / "figure.html").exists()}  # fmt: skip
    if (f / "error.txt").exists():
        return {**info, "status": "failed", "error": (f / "error.txt").read_text(encoding="utf-8").strip()}
    finished = len(list((f / "cases").glob("*.json"))) if (f / "cases").is_dir() else 0
    fig = reproduce.FIGURES.get(name)
    total = len(task.cases_of(fig, info["seeds"])) if fig is not None else 0
    progress = {"finished": finished, "total": total}
    if time.time() - info["at"] > settings.MLSCHED_RUN_TIME_LIMIT + settings.MLSCHED_STALE_GRACE:
        return {**info, **progress, "status": "lost"}  # its workers stopped: it may be started again
    return {**info, **progress, "status": "running"}


def entries() -> list[dict[str, Any]]:
    """Every reproducible figure with its latest run and whether it can be launched as an experiment."""
    return [{**item, "run": state(item["name"]), "experiment": launchable(reproduce.FIGURES[item["name"]])}
            for item in reproduce.listing()]  # fmt: skip


def launchable(fig: reproduce.Figure) -> bool:
    """Whether ``as_experiment`` can express the figure (a preset, within the run cap)."""
    return preset_of(fig) is not None and len(fig.algorithms) * fig.default_seeds <= MAX_RUNS


def preset_of(fig: reproduce.Figure) -> tuple[str, int, float] | None:
    """(preset, jobs, size) when the figure's one x-axis point draws a preset per seed (a builder made
    by ``reproduce.preset_builder``, whose arguments its closure holds); None otherwise."""
    if len(fig.points) != 1:
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
    if found is None or len(fig.algorithms) * fig.default_seeds > MAX_RUNS:
        return None
    name, jobs, size = found
    files = presets.build(name, jobs=jobs, seed=0, size=size)
    inputs = Inputs(Experiment.Source.PRESET, "cluster.json", files.cluster, files.trace_name, files.trace, name,
                    {"jobs": jobs, "seed": 0, "size": size})  # fmt: skip
    runs = [(algorithm, registry.get(algorithm).parse_params(dict(params))) for _, algorithm, params in fig.algorithms]
    seeds = list(range(fig.default_seeds))
    return Submission(
        name=f"{fig.paper} {fig.figure}: {fig.title} (reproduction, {len(seeds)} seeds)",
        inputs=inputs,
        runs=runs,
        seed=0,
        repetition=repetitions.describe(repetitions.SEEDS, seeds, None, [], preset=True),
    )


def check_launch(fig: reproduce.Figure, owner: Any) -> None:
    """QuotaExceeded when ``owner`` may not launch ``fig`` as an experiment now: checked before its
    preset is generated in the request (the form's limits: preset size, experiments per hour,
    runs queued or running)."""
    found = preset_of(fig)
    if found is not None:
        instead = f"run this figure with Run reproduction, or `python -m scheduling reproduce {fig.name}`"
        if problem := quotas.preset_too_large(found[1], instead):
            raise quotas.QuotaExceeded(f"{fig.name}'s preset has {found[1]:,} jobs, and {problem}")
    quotas.check_new_experiment(owner, len(fig.algorithms) * fig.default_seeds)


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
    if f.exists():
        shutil.rmtree(f)
    f.mkdir(parents=True)
    at = time.time()
    (f / "started.json").write_text(json.dumps({"at": at, "seeds": seeds, "owner": owner_pk}), encoding="utf-8")
    try:
        task.send(name, seeds, f)
    except OperationalError:
        shutil.rmtree(f)
        return "the task queue cannot be reached: try again later"
    if owner_pk is not None:
        with starts_log().open("a", encoding="utf-8") as log:
            log.write(json.dumps({"owner": owner_pk, "at": at}) + "\n")
    return f"{name} started over {len(seeds)} seeds (about {fig.minutes:g} min at {fig.default_seeds} seeds)"


def file_path(name: str, filename: str) -> Path | None:
    """A file of a figure's latest run the page may serve, or None."""
    if name not in reproduce.FIGURES or filename not in FILES:
        return None
    path = folder(name) / filename
    return path if path.is_file() else None
