"""A task for the worker-pool tests (tests/test_workers_local.py), imported by their workers with
``celery -A workers worker -I tests.broker_probe``: two calls meet only if two processes run them at
the same time."""

import os
import time
from pathlib import Path

from workers.celery import app


@app.task(name="tests.broker_probe.meet")
def meet(me: str, other: str, folder: str, wait: float) -> None:
    """Note that ``me`` started (one line per execution, with this process id), then wait up to
    ``wait`` seconds for ``other`` to start; the outcome is ``me.met`` or ``me.alone``."""
    mark = Path(folder)
    with open(mark / me, "a") as f:
        f.write(f"{os.getpid()}\n")
    deadline = time.monotonic() + wait
    while not (mark / other).exists():
        if time.monotonic() > deadline:
            (mark / f"{me}.alone").write_text(str(os.getpid()))
            return
        time.sleep(0.05)
    (mark / f"{me}.met").write_text(str(os.getpid()))
