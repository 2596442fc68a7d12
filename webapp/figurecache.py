"""The figures of the JCT, Gantt and Utilisation tabs, cached: a done run's result never changes,
so a tab's figures are a function of the runs shown, the view's query and the code that draws them.

The key holds the code version and commit (``scheduling.provenance.code``), the experiment, the
tab, the query parameters that tab reads, and each done run's id, finish time and result file (a run that
finishes later adds to the key: the tab is drawn again with it). Entries live in Django's default
cache (per process unless ``CACHES`` names a shared one) for ``TIMEOUT`` seconds, and in the
storage every host reaches (``results/<experiment>/figures-<key>.json.gz``, DESIGN section 8), so
that another web process, another host or a restart finds them drawn: a tab of an 82,000-job
comparison is built once (seconds), then read (milliseconds). ``pages.warm`` builds the default views
of an experiment's tabs when its last run finishes, on the worker, so that even the first visit reads
them. Deleting the experiment deletes them (``forget``)."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.core.cache import cache
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from scheduling import provenance
from webapp.models import Run

TIMEOUT = 3600  # seconds
FOLDER = "results"

logger = logging.getLogger(__name__)
# tab -> the query parameters it reads (others do not change its figures)
TABS: dict[str, tuple[str, ...]] = {"jct": ("a", "b"), "gantt": ("run", "job", "server", "t0", "t1"), "time": ()}


def key(experiment: int, tab: str, query: Mapping[str, str], done: Sequence[Run]) -> str:
    code = provenance.code()
    parts = {
        "code": [code["version"], code["commit"]],
        "experiment": experiment,
        "tab": tab,
        "query": {k: query.get(k, "") for k in TABS[tab]},
        "runs": sorted([r.pk, r.finished.isoformat() if r.finished else "", r.result.name] for r in done),
    }
    return "mlsched-figures:" + hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def cached(name: str, build: Callable[[], dict[str, Any]], experiment: int | None = None) -> dict[str, Any]:
    """The value stored under ``name`` (this process's cache, then the storage when ``experiment``
    is given), or ``build()``'s, stored in both."""
    from webapp.runstore import decode_result, encode_result

    hit: dict[str, Any] | None = cache.get(name)
    if hit is not None:
        return hit
    path = _path(experiment, name) if experiment is not None else None
    if path is not None:
        try:
            with default_storage.open(path, "rb") as f:
                hit = decode_result(f.read())
        except (FileNotFoundError, OSError, ValueError):
            hit = None
        if hit is not None:
            cache.set(name, hit, TIMEOUT)
            return hit
    value = build()
    cache.set(name, value, TIMEOUT)
    if path is not None and not default_storage.exists(path):
        try:
            default_storage.save(path, ContentFile(encode_result(value)))
        except OSError as exc:  # a storage that refuses: the page is still shown, drawn again next time
            logger.warning("figures of experiment %s not stored: %s", experiment, exc)
    return value


def _path(experiment: int, name: str) -> str:
    return f"{FOLDER}/{experiment}/figures-{name.rsplit(':', 1)[-1][:32]}.json.gz"


def forget(experiment: int) -> None:
    """Delete the stored figures of ``experiment``."""
    folder = f"{FOLDER}/{experiment}"
    try:
        files = default_storage.listdir(folder)[1]
    except (FileNotFoundError, NotImplementedError, OSError):
        return
    for file in files:
        if file.startswith("figures-"):
            default_storage.delete(f"{folder}/{file}")
