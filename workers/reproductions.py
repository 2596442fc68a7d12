"""Reproductions on the workers: ``scheduling.reproduce`` of one paper figure, fanned out as one
Celery group of a task per (x-axis point, seed, algorithm), each writing its row into a folder the
web side chose (docs/architecture.md, "Reproductions"). No Django: the folder is the record.

The folder holds ``started.json`` (written by the web side when it sends the group: time and
seeds), then ``cases/<point>-<seed>-<algorithm>.json`` per finished task (the row:
``repeat.row_of``'s input, or the algorithm's refusal of the instance, or the failure). The task that
finds every case finished assembles them (``reproduce.assemble``, once: an ``O_EXCL`` lock file) and
writes the files of ``reproduce.write`` (``table.md``, ``summary.csv``, ``runs.csv``,
``figure.html`` with ``plotly.min.js``, ``provenance.json``), or ``error.txt`` naming the cases that
failed. More workers finish a figure proportionally faster.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from celery import group

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


def _case_file(out: Path, point: int, seed: int, algorithm: int) -> Path:
    return out / "cases" / f"{point}-{seed}-{algorithm}.json"


def _write(path: Path, record: dict[str, Any]) -> None:
    """Write ``record`` whole or not at all (the finisher counts the files)."""
    partial = path.with_name(path.name + ".part")
    partial.write_text(json.dumps(record, separators=(",", ":")), encoding="utf-8")
    partial.replace(path)


@app.task(name="workers.reproduce_case", ignore_result=True)
def reproduce_case(name: str, seeds: list[int], point: int, seed: int, algorithm: int, out: str) -> str:
    """One algorithm on one (point, seed) of figure ``name``; the last case to finish assembles."""
    folder = Path(out)
    fig = reproduce.FIGURES[name]
    label, registry_name, params = fig.algorithms[algorithm]
    point_label = fig.points[point][0]
    record: dict[str, Any] = {"point": point_label, "seed": seed, "label": label}
    try:
        case = reproduce.case(fig, point_label, seed)
        doc = api.run(case.instance, registry_name, params, case.seed)
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


def _finish_if_complete(fig: reproduce.Figure, seeds: list[int], folder: Path) -> str:
    """Assemble once every case has its file; "done", "failed" or "waiting"."""
    files = [_case_file(folder, *c) for c in cases_of(fig, seeds)]
    if not all(f.exists() for f in files):
        return "waiting"
    try:
        os.close(os.open(folder / "assembling.lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return "waiting"  # another task assembles
    records = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    errors = [f"{r['label']} on {r['point']}, seed {r['seed']}: {r['error']}" for r in records if "error" in r]
    if errors:
        (folder / "error.txt").write_text("; ".join(errors[:5]) + "\n", encoding="utf-8")
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
    started = json.loads((folder / "started.json").read_text(encoding="utf-8"))
    run = reproduce.assemble(fig, seeds, rows, time.time() - started["at"], inputs)
    reproduce.write(run, folder)
    return "done"


def send(name: str, seeds: list[int], out: Path) -> None:
    """Queue a figure's cases as one Celery group (raises kombu's OperationalError when the broker
    cannot be reached)."""
    from workers.tasks import broker_connection

    fig = reproduce.FIGURES[name]
    (out / "cases").mkdir(parents=True, exist_ok=True)
    with broker_connection() as connection:
        group(reproduce_case.si(name, seeds, p, s, a, str(out)) for p, s, a in cases_of(fig, seeds)).apply_async(
            producer=app.amqp.Producer(connection)
        )
