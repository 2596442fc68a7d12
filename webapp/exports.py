"""Exports of an experiment: per-run CSVs (escaped against formula injection), the zip of
inputs, description and results, and the description the API shows."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Mapping
from typing import Any

from scheduling import registry
from scheduling.errors import InputError
from webapp import adapted, repetition_stats, repetitions, results_io, runstatus
from webapp.models import Experiment, Run
from webapp.security import csv_cell

JOB_COLUMNS = ("job_id", "arrival", "admitted", "start", "completion", "jct", "weight", "utility",
               "work_required", "work_done", "preemptions")  # fmt: skip


ENDED_COLUMNS = ("outcome", "ended")  # a status replay's (scheduling.status_replay): only in its runs' CSVs


PLACEMENT_COLUMNS = ("job_id", "server", "role", "type", "count", "start", "end", "demand")


def jobs_csv(doc: Mapping[str, Any]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    columns = JOB_COLUMNS + (ENDED_COLUMNS if doc.get("status_replay") else ())
    w.writerow(columns)
    for j in doc["jobs"]:
        jct = j["completion"] - j["arrival"] if j["completion"] is not None else None
        w.writerow([csv_cell(jct if c == "jct" else j.get(c)) for c in columns])
    return out.getvalue()


def placements_csv(doc: Mapping[str, Any]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(PLACEMENT_COLUMNS)
    for p in doc["placements"]:
        w.writerow([csv_cell(p.get(c)) for c in PLACEMENT_COLUMNS])
    return out.getvalue()


RAW_INPUTS_NOTE = """These are the input files exactly as they were uploaded (or generated), so that the
experiment can be run again with the command line (python -m scheduling simulate ...).

The history of past jobs given with the trace, if any, is here too; a preset experiment with
algorithms that learn from past jobs (A-SRPT and its baselines) has the preset's own history
(history.csv or .json: the same preset from another seed). Either is given to those algorithms
as simulate --history gives it.

They are NOT escaped for spreadsheets: a cell beginning with =, +, -, @ may run as a formula if
you open a CSV here in Excel or LibreOffice. Import it as text instead. The CSV files under runs/
are written by the app and are escaped (such cells start with a ').
"""


def experiment_zip(exp: Experiment) -> bytes:
    """Inputs (raw, as uploaded: kept apart in inputs/raw/ with a note), the frozen experiment
    description, and per done run its result and CSVs (escaped against formula injection)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("inputs/raw/README.txt", RAW_INPUTS_NOTE)
        z.writestr(f"inputs/raw/{_safe(exp.cluster_name)}", exp.cluster_text)
        z.writestr(f"inputs/raw/{_safe(exp.trace_name)}", exp.trace_text)
        if exp.history_text or any(registry.learns_from_history(r.algorithm) for r in exp.runs.all()):
            try:
                history = repetitions.history_of(exp)
            except InputError:  # a preset this version no longer builds with these options: no history file
                history = None
            if history is not None:
                z.writestr(f"inputs/raw/{_safe(history[0])}", history[1])
        z.writestr("experiment.json", json.dumps(describe(exp), indent=2))
        for name, record in adapted.export(exp):  # the assumptions of the adapted instances
            z.writestr(name, json.dumps(record, indent=2))
        if exp.repetition:
            z.writestr("repetitions.csv", repetition_stats.per_seed_csv(exp, list(exp.runs.all())))
        for r in exp.runs.all():
            if r.status != Run.Status.DONE:
                continue
            doc = results_io.load_result(r)
            base = f"runs/{r.pk}-{_safe(r.algorithm)}"
            z.writestr(f"{base}/result.json", json.dumps(doc, separators=(",", ":")))
            z.writestr(f"{base}/jobs.csv", jobs_csv(doc))
            z.writestr(f"{base}/placements.csv", placements_csv(doc))
    return buf.getvalue()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:100] or "file"


def describe(exp: Experiment) -> dict[str, Any]:
    """The experiment as the API and the zip export show it."""
    return {
        "id": exp.pk,
        "name": exp.name,
        "kind": exp.kind,
        "sweep": exp.sweep or None,
        "repetition": exp.repetition or None,
        "created": exp.created.isoformat(),
        "source": exp.source,
        "preset": exp.preset or None,
        "preset_options": exp.preset_options or None,
        "cluster_name": exp.cluster_name,
        "trace_name": exp.trace_name,
        "history_name": exp.history_name or None,
        **adapted.describe(exp),
        "seed": exp.seed,
        **{k: v for k, v in runstatus.status(exp).items() if k not in ("experiment", "name", "kind")},
    }
