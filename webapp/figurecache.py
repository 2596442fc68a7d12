"""The figures of the JCT, Gantt and Utilisation tabs, cached: a done run's result never changes,
so a tab's figures are a function of the runs shown, the view's query and the code that draws them.

The key holds the code version and commit (``scheduling.provenance.code``), the experiment, the
tab, the query parameters that tab reads, and each done run's id, finish time and result file (a run that
finishes later adds to the key: the tab is drawn again with it). Entries live in Django's default
cache (per process unless ``CACHES`` names a shared one) for ``TIMEOUT`` seconds."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.core.cache import cache

from scheduling import provenance
from webapp.models import Run

TIMEOUT = 3600  # seconds
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


def cached(name: str, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The value stored under ``name``, or ``build()``'s, stored."""
    hit: dict[str, Any] | None = cache.get(name)
    if hit is not None:
        return hit
    value = build()
    cache.set(name, value, TIMEOUT)
    return value
