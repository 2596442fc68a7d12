"""Whether an experiment's results were made by the code this server runs (DESIGN section 9: a
result records its code version; ``scheduling.provenance``)."""

from __future__ import annotations

from collections.abc import Sequence

from scheduling import provenance
from webapp.models import Run


def version_note(runs: Sequence[Run]) -> str:
    """A sentence naming the versions that made done runs other than this code's; "" when none did
    (runs finished before versions were recorded have no ``code`` and are not counted)."""
    now = provenance.code()
    other: dict[tuple[str | None, str | None], int] = {}
    for r in runs:
        made = r.code if r.status == Run.Status.DONE and isinstance(r.code, dict) else None
        if made is not None and (made.get("version"), made.get("commit")) != (now["version"], now["commit"]):
            key = (made.get("version"), made.get("commit"))
            other[key] = other.get(key, 0) + 1
    if not other:
        return ""
    made_by = "; ".join(f"{n} by version {v}, commit {c or 'unknown'}" for (v, c), n in other.items())
    here = f"version {now['version']}, commit {now['commit'] or 'unknown'}"
    return f"Results made by another version of the code: {made_by}. This server runs {here}."
