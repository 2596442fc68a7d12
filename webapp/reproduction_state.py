"""The state of a figure's latest reproduction, read from its storage folder (``webapp.reproductions``
starts them), and what the reproductions running now count against an account's quotas."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.files.storage import default_storage

from scheduling import reproduce
from webapp.models import ReproductionStart
from workers import reproductions as task


def folder(name: str) -> str:
    """The storage folder of figure ``name``'s latest run."""
    return f"reproductions/{name}"


def read(name: str) -> bytes:
    """The bytes of the stored file ``name``."""
    with default_storage.open(name, "rb") as f:
        return bytes(f.read())


def _text(name: str) -> str:
    return read(name).decode("utf-8")


def usage(owner_pk: int, since: float) -> tuple[int, int]:
    """(reproductions ``owner_pk`` started since the Unix time ``since``, cases still to run of
    their reproductions running now): what they count against the quotas (webapp/quotas.py)."""
    started = ReproductionStart.objects.filter(owner=owner_pk, at__gte=datetime.fromtimestamp(since, UTC)).count()
    left = 0
    for name in reproduce.FIGURES:
        run = state(name)
        if run["status"] == "running" and run.get("owner") == owner_pk:
            left += run["total"] - run["finished"]
    return started, left


def state(name: str) -> dict[str, Any]:
    """The latest run of a figure: {"status": none|running|done|failed|lost, "started", "seeds", ...}."""
    f = folder(name)
    try:
        info: dict[str, Any] = json.loads(_text(f"{f}/started.json"))
    except FileNotFoundError:
        return {"status": "none"}
    present = task.listed(f)
    if "table.md" in present:
        return {**info, "status": "done", "table": _text(f"{f}/table.md"), "figure": "figure.html" in present}
    if "error.txt" in present:
        return {**info, "status": "failed", "error": _text(f"{f}/error.txt").strip()}
    fig = reproduce.FIGURES.get(name)
    cases = task.cases_of(fig, info["seeds"]) if fig is not None else []
    stored = task.listed(f"{f}/cases")
    finished = sum(f"{p}-{s}-{a}.json" in stored for p, s, a in cases)
    progress = {"finished": finished, "total": len(cases)}
    if time.time() - info["at"] > settings.MLSCHED_RUN_TIME_LIMIT + settings.MLSCHED_STALE_GRACE:
        return {**info, **progress, "status": "lost"}  # its workers stopped: it may be started again
    return {**info, **progress, "status": "running"}
