"""Pre-flight for the new-experiment form: which algorithms the chosen inputs cannot run, and why,
known before submit so that the form greys them out (docs/architecture.md, "Creating an experiment").

For a pair of library datasets the reasons come from the pair's stored trace check; for a preset,
from a small instance of it (30 jobs, seed 0: what an algorithm needs, such as pipeline stages or
utilities, does not depend on the job count), computed once per process. Uploaded files are only
known at submit, where the form refuses what cannot run as before.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from scheduling import presets, registry
from scheduling.errors import InputError
from scheduling.repeat import preset_instance
from webapp.models import Dataset, TraceCheck

PRESET_JOBS = 30


@cache
def preset_reasons(name: str) -> dict[str, str | None]:
    instance = preset_instance(name, PRESET_JOBS, 0)
    return {algorithm: spec.unsupported(instance) for algorithm, spec in registry.all_specs().items()}


def reasons(user: Any) -> dict[str, Any]:
    """``{"presets": {name: {algorithm: reason}}, "library": {"trace:cluster": {algorithm: reason}},
    "loads": {"trace:cluster": {"load", "warning"}}}`` (reason None: it can run); the form's script
    greys out the algorithms with a reason and shows the pair's offered load."""
    out: dict[str, Any] = {"presets": {}, "library": {}, "loads": {}}
    for name in presets.PRESETS:
        try:
            out["presets"][name] = preset_reasons(name)
        except InputError:
            continue  # a preset that does not build is refused at submit with its message
    if getattr(user, "pk", None):
        checks = TraceCheck.objects.filter(
            trace__owner=user, status=TraceCheck.Status.DONE, trace__kind=Dataset.Kind.TRACE
        )
        for trace_id, cluster_id, summary in checks.values_list("trace_id", "cluster_id", "summary"):
            if summary:
                pair = f"{trace_id}:{cluster_id}"
                out["library"][pair] = summary.get("unsupported", {})
                if summary.get("offered_load") is not None:
                    out["loads"][pair] = {"load": summary["offered_load"], "warning": summary.get("load_warning", "")}
    return out
