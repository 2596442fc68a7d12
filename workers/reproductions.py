"""The reproduction task: ``scheduling.reproduce`` of one paper figure, its files written to a folder
the web side chose (docs/architecture.md, "Reproductions"). No Django: the folder is the record.

The folder holds ``started.json`` (written by the web side when it sends the task), then either the
files of ``reproduce.write`` (``table.md``, ``summary.csv``, ``runs.csv``, ``figure.html`` with
``plotly.min.js``, ``provenance.json``) or ``error.txt`` with the reason the run failed.
"""

from __future__ import annotations

import logging
from pathlib import Path

from scheduling import reproduce
from scheduling.errors import InputError, ScheduleError, UnsupportedInstance
from workers.celery import app

logger = logging.getLogger(__name__)


@app.task(name="workers.reproduce_figure", ignore_result=True)
def reproduce_figure(name: str, seeds: list[int], out: str) -> str:
    folder = Path(out)
    try:
        run = reproduce.run_figure(reproduce.FIGURES[name], seeds)
        reproduce.write(run, folder)
    except (KeyError, InputError, UnsupportedInstance, ScheduleError) as exc:
        (folder / "error.txt").write_text(f"{type(exc).__name__}: {exc}\n", encoding="utf-8")
        return "failed"
    except BaseException as exc:
        (folder / "error.txt").write_text(f"internal error: {type(exc).__name__}: {exc}\n", encoding="utf-8")
        raise
    return "done"


def send(name: str, seeds: list[int], out: Path) -> None:
    """Queue one reproduction (raises kombu's OperationalError when the broker cannot be reached)."""
    from workers.tasks import broker_connection

    with broker_connection() as connection:
        reproduce_figure.apply_async((name, seeds, str(out)), producer=app.amqp.Producer(connection))
