"""Reproductions on the workers: ``scheduling.reproduce`` of one paper figure, fanned out as one
Celery group of a task per (x-axis point, seed, algorithm), each writing its row into the files of
the default storage under a folder name the web side chose (docs/architecture.md, "Reproductions").
No models: the files are the record, and every host reads them through the storage (the database
by default), so the workers need no folder shared with the web host.

The folder holds ``started.json`` (written by the web side when it sends the group: time and
seeds), then ``cases/<point>-<seed>-<algorithm>.json`` per finished task (the row:
``repeat.row_of``'s input, or the algorithm's refusal of the instance, or the failure). The task that
finds every case finished assembles them (``reproduce.assemble``, once: the first to save
``assembling.lock``, a save of a taken name getting another name) and stores the files of
``reproduce.write`` (``table.md``, ``summary.csv``, ``runs.csv``, ``figure.html`` with
``plotly.min.js``, ``provenance.json``), or ``error.txt`` naming the cases that failed. More workers
finish a figure proportionally faster.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from celery import group
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from scheduling import api, provenance, repeat, reproduce
from scheduling.errors import InputError, ScheduleError, UnsupportedInstance
from workers.celery import app

logger = logging.getLogger(__name__)


def cases_of(fig: reproduce.Figure, seeds: Sequence[int]) -> list[tuple[int, int, int]]:
    """Every (point index, seed, algorithm index) of a figure run over ``seeds``."""
    return [
        (p, s, a)
        for p, (point, _build) in enumerate(fig.points)
        for s in seeds
        for a, algorithm in enumerate(fig.algorithms)
        if algorithm in fig.algorithms_at(point)
    ]


def _case_file(out: str, point: int, seed: int, algorithm: int) -> str:
    return f"{out}/cases/{point}-{seed}-{algorithm}.json"


def listed(path: str) -> set[str]:
    """Names of the stored files directly in the storage folder ``path`` (none if it has none)."""
    try:
        return set(default_storage.listdir(path)[1])
    except FileNotFoundError:  # the file system storage: no such folder yet
        return set()


def read_json(name: str) -> Any:
    with default_storage.open(name, "rb") as f:
        return json.loads(f.read())


def _write(name: str, record: dict[str, Any]) -> None:
    """Store ``record`` as ``name`` (a redelivered case replaces its earlier file)."""
    if default_storage.exists(name):
        default_storage.delete(name)
    default_storage.save(name, ContentFile(json.dumps(record, separators=(",", ":")).encode("utf-8")))


@app.task(name="workers.reproduce_case", ignore_result=True)
def reproduce_case(name: str, seeds: list[int], point: int, seed: int, algorithm: int, out: str) -> str:
    """One algorithm on one (point, seed) of figure ``name``, stored under the storage folder
    ``out``; the last case to finish assembles."""
    folder = out
    fig = reproduce.FIGURES[name]
    label, registry_name, params = fig.algorithms[algorithm]
    point_label = fig.points[point][0]
    record: dict[str, Any] = {"point": point_label, "seed": seed, "label": label}
    try:
        case = reproduce.case(fig, point_label, seed)
        doc = api.run(case.instance, registry_name, params, case.seed, fig.horizon)
        record.update(
            algorithm=doc["algorithm"],
            params=doc["params"],
            metrics=doc["metrics"],
            jobs=[{"arrival": j["arrival"], "completion": j["completion"]} for j in doc["jobs"]],
            inputs=provenance.inputs(case.instance),
        )
    except UnsupportedInstance as exc:  # skipped on this case, as ``reproduce`` skips it
        record["skipped"] = str(exc)
    except (InputError, ScheduleError) as exc:
        record["error"] = f"{type(exc).__name__}: {exc}"
    except BaseException as exc:
        record["error"] = f"internal error: {type(exc).__name__}: {exc}"
        _write(_case_file(folder, point, seed, algorithm), record)
        _finish_if_complete(fig, seeds, folder)
        raise
    _write(_case_file(folder, point, seed, algorithm), record)
    return _finish_if_complete(fig, seeds, folder)


def _finish_if_complete(fig: reproduce.Figure, seeds: list[int], folder: str) -> str:
    """Assemble once every case has its file; "done", "failed" or "waiting"."""
    names = [_case_file(folder, *c) for c in cases_of(fig, seeds)]
    present = listed(f"{folder}/cases")
    if not all(n.rsplit("/", 1)[1] in present for n in names):
        return "waiting"
    try:
        records = [read_json(n) for n in names]
    except (FileNotFoundError, ValueError):  # a case being replaced meanwhile: its writer checks again
        return "waiting"
    lock = f"{folder}/assembling.lock"
    taken = default_storage.save(lock, ContentFile(b""))
    if taken != lock:  # the name was taken: another task assembles
        default_storage.delete(taken)
        return "waiting"
    errors = [f"{r['label']} on {r['point']}, seed {r['seed']}: {r['error']}" for r in records if "error" in r]
    if errors:
        default_storage.save(f"{folder}/error.txt", ContentFile(("; ".join(errors[:5]) + "\n").encode("utf-8")))
        return "failed"
    rows: dict[str, list[repeat.Row]] = {}
    inputs: dict[str, dict[str, dict[str, str]]] = {}
    for r in records:
        if "skipped" in r:
            logger.info("%s %s seed %s: skipped: %s", fig.name, r["label"], r["seed"], r["skipped"])
            continue
        # The row's instance is not kept: assembling and writing read only the case's key and seed.
        case = repeat.Case(f"seed={r['seed']}", r["seed"], None, None)  # type: ignore[arg-type]
        rows.setdefault(r["point"], []).append(repeat.row_of(case, r["label"], r))
        inputs.setdefault(r["point"], {})[str(r["seed"])] = r["inputs"]
    started = read_json(f"{folder}/started.json")
    run = reproduce.assemble(fig, seeds, rows, time.time() - started["at"], inputs)
    with tempfile.TemporaryDirectory(prefix="mlsched-reproduce-") as tmp:
        reproduce.write(run, Path(tmp))
        # table.md last: the page calls a reproduction done once its table is there.
        for path in sorted(Path(tmp).iterdir(), key=lambda p: p.name == "table.md"):
            default_storage.save(f"{folder}/{path.name}", ContentFile(path.read_bytes()))
    return "done"


def send(name: str, seeds: list[int], out: str) -> None:
    """Queue a figure's cases, stored under the storage folder ``out``, as one Celery group (raises
    kombu's OperationalError when the broker cannot be reached)."""
    from workers.tasks import broker_connection

    fig = reproduce.FIGURES[name]
    with broker_connection() as connection:
        group(reproduce_case.si(name, seeds, p, s, a, out) for p, s, a in cases_of(fig, seeds)).apply_async(
            producer=app.amqp.Producer(connection)
        )
