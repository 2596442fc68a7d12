"""The datasets library: a user's cluster specs and traces, validated on upload, with previews.

A trace is validated against a cluster spec (its worker/PS types and capacities decide whether a
job is valid), so adding a trace asks for one of the user's cluster specs. A file that does not
validate is not stored: the error is shown inline with its line and field, beside the offending
line of the file.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile

from scheduling import importers, loaders
from scheduling.errors import InputError
from scheduling.model import Cluster, Job
from webapp.forms import too_many_rows
from webapp.models import Dataset
from webapp.security import parse_deadline
from workers.runs import trace_format

MIB = 2**20
NAME_LENGTH = Dataset._meta.get_field("name").max_length or 255


IMPORTS = {
    # form choice -> (importer format, kind of the result, output file suffix)
    "import-gpu": ("generic-gpu", Dataset.Kind.TRACE, ".csv"),
    "import-nodes": ("node-list", Dataset.Kind.CLUSTER, ".json"),
}


def import_raw(choice: str, data: bytes, name: str) -> tuple[str, str, str]:
    """Convert a raw production file with ``scheduling.importers`` -> (kind, new name, text);
    InputError names the raw file's line and column."""
    fmt, kind, suffix = IMPORTS[choice]
    with tempfile.TemporaryDirectory(prefix="mlsched-import-") as tmp:
        raw = Path(tmp) / (Path(name).name or "raw.csv")
        raw.write_bytes(data)
        out = Path(tmp) / f"imported{suffix}"
        try:
            importers.run(fmt, raw, out)
        except InputError as exc:
            raise InputError(exc.problem, file=name, line=exc.line, job=exc.job, field=exc.field) from None
        tail = f"-{fmt}{suffix}"  # the new name fits the 255-character column, its tail kept
        return kind, Path(name).stem[: NAME_LENGTH - len(tail)] + tail, out.read_text(encoding="utf-8")


class DatasetForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[
            *Dataset.Kind.choices,
            ("import-gpu", "raw GPU-job trace to import (Philly-like: job_id, submit_time, num_gpus, duration)"),
            ("import-nodes", "raw node list to import (sn, cpu_milli, memory_mib, gpu, model)"),
        ],
        widget=forms.RadioSelect,
        initial=Dataset.Kind.CLUSTER,
    )
    file = forms.FileField(allow_empty_file=True, help_text="Cluster spec: JSON. Trace: CSV, or JSON (.json)")
    cluster = forms.ModelChoiceField(
        queryset=Dataset.objects.none(),
        required=False,
        label="Validate the trace against",
        help_text="One of your cluster specs (a trace's job types and sizes depend on the cluster)",
    )

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        clusters = Dataset.objects.filter(owner=user.pk, kind=Dataset.Kind.CLUSTER)
        self.fields["cluster"].queryset = clusters  # type: ignore[attr-defined]
        if len(only := list(clusters[:2])) == 1:
            self.fields["cluster"].initial = only[0].pk  # the one cluster spec there is: chosen already
        self.text = ""
        self.name = ""
        self.error_line: tuple[int, str] | None = None  # (line number, its text) of the first error

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload: UploadedFile | None = data.get("file")
        if upload is None:
            return data
        self.name = os.path.basename(upload.name or "") or "upload"
        if upload.size is not None and upload.size > loaders.MAX_INPUT_BYTES:
            limit = loaders.MAX_INPUT_BYTES // MIB
            self.add_error(
                "file", f"{self.name}: file is {upload.size / MIB:.1f} MiB, larger than the {limit} MiB limit"
            )
            return data
        try:
            raw = upload.read()
            if data.get("kind") in IMPORTS:
                kind, self.name, self.text = import_raw(data["kind"], raw, self.name)
                data["kind"] = kind
            else:
                self.text = loaders.decode(raw, self.name)
            if data.get("kind") == Dataset.Kind.CLUSTER:
                loaders.parse_cluster(self.text, self.name)
            else:
                cluster_ds: Dataset | None = data.get("cluster")
                if cluster_ds is None:
                    self.add_error("cluster", "Choose the cluster spec to validate the trace against.")
                    return data
                if message := too_many_rows(self.text, self.name):
                    self.add_error("file", message)
                    return data
                cluster = loaders.parse_cluster(cluster_ds.text, cluster_ds.name)
                fmt = trace_format(self.name)
                loaders.parse_trace(self.text, cluster, self.name, fmt, parse_deadline(self.name))
        except InputError as exc:
            self.add_error("file", str(exc))
            if exc.line is not None and self.text:
                lines = self.text.splitlines()
                if 0 < exc.line <= len(lines):
                    self.error_line = (exc.line, lines[exc.line - 1][:300])
        return data

    def save(self) -> Dataset:
        ds: Dataset = Dataset.objects.create(
            owner=self.user,
            kind=self.cleaned_data["kind"],
            name=self.name,
            text=self.text,
            size=len(self.text.encode("utf-8")),
        )
        return ds


def mine(user: Any) -> list[Dataset]:
    return list(Dataset.objects.filter(owner=user.pk).defer("text"))


def remember_uploads(user: Any, form: Any) -> None:
    """Files uploaded with a new experiment join the user's library (once per name and content)."""
    inputs = form.inputs
    if inputs is None or inputs.source != "upload" or not getattr(user, "pk", None):
        return
    for kind, name, text in (
        (Dataset.Kind.CLUSTER, inputs.cluster_name, inputs.cluster_text),
        (Dataset.Kind.TRACE, inputs.trace_name, inputs.trace_text),
    ):
        size = len(text.encode("utf-8"))
        # The size narrows the rows whose text the database compares: an edited file of the same
        # size is new content and is kept.
        if not Dataset.objects.filter(owner=user, kind=kind, name=name, size=size, text=text).exists():
            Dataset.objects.create(owner=user, kind=kind, name=name, text=text, size=size)


# ---------------------------------------------------------------------------------------------
# Previews


def cluster_summary(cluster: Cluster) -> dict[str, Any]:
    groups: Counter[tuple[Any, ...]] = Counter()
    for s in cluster.servers:
        caps = ", ".join(f"{k} {v:g}" for k, v in sorted(s.capacity.items()))
        groups[(s.id.rsplit("-", 1)[0], caps, s.pool, s.site, "unlimited" if s.unlimited else "")] += 1
    return {
        "servers": len(cluster.servers),
        "slot_seconds": cluster.slot_seconds,
        "resources": [(r.name, r.unit, cluster.total_capacity(r.name)) for r in cluster.resources],
        "groups": [(*k, n) for k, n in groups.items()],
        "worker_types": [(t.id, ", ".join(f"{k} {v:g}" for k, v in t.demand.items())) for t in cluster.worker_types],
        "ps_types": [(t.id, ", ".join(f"{k} {v:g}" for k, v in t.demand.items())) for t in cluster.ps_types],
    }


def gpu_demand(job: Job, cluster: Cluster) -> float:
    """GPUs a job asks for: its ``gpus`` column, else its maximum workers x its own worker demand
    (OASiS traces) or the smallest GPU demand of a worker type (0 when workers need no GPU)."""
    if job.gpus is not None:
        return float(job.gpus)
    if job.worker_demand is not None:
        return job.max_workers() * float(job.worker_demand.get("gpu", 0.0))
    per = min((t.demand.get("gpu", 0.0) for t in cluster.worker_types), default=0.0)
    return job.max_workers() * per


def histogram(title: str, values: list[float], xlabel: str) -> dict[str, Any]:
    return {
        "data": [{"type": "histogram", "x": values, "marker": {"color": "#4c78a8"}}],
        "layout": {
            "title": {"text": title, "font": {"size": 14}},
            "xaxis": {"title": {"text": xlabel}},
            "yaxis": {"title": {"text": "jobs"}},
            "height": 280,
            "margin": {"l": 50, "r": 20, "t": 40, "b": 40},
            "bargap": 0.05,
        },
    }


def preview_page(ds: Dataset, user: Any, against: str | None) -> dict[str, Any]:
    from webapp.services import preview

    ctx: dict[str, Any] = {"dataset": ds, "head": preview(ds.text), "figures": [], "error": None}
    try:
        if ds.kind == Dataset.Kind.CLUSTER:
            ctx["cluster"] = cluster_summary(loaders.parse_cluster(ds.text, ds.name))
            return ctx
        clusters = list(Dataset.objects.filter(owner=user.pk, kind=Dataset.Kind.CLUSTER).defer("text"))
        ctx["clusters"] = clusters
        chosen = next((c for c in clusters if str(c.pk) == against), clusters[0] if clusters else None)
        if chosen is None:
            ctx["error"] = "Add a cluster spec to preview this trace against it."
            return ctx
        ctx["against"] = chosen
        cluster = loaders.parse_cluster(Dataset.objects.get(pk=chosen.pk).text, chosen.name)
        jobs = loaders.parse_trace(ds.text, cluster, ds.name, trace_format(ds.name), parse_deadline(ds.name))
    except InputError as exc:
        ctx["error"] = str(exc)
        return ctx
    ctx["jobs"] = len(jobs)
    ctx["span"] = (min((j.arrival for j in jobs), default=0), max((j.arrival for j in jobs), default=0))
    ctx["figures"] = [
        {"dom_id": "ds-0", "script_id": "ds-figure-0",
         "figure": histogram("Arrivals", [j.arrival for j in jobs], "arrival slot")},
        {"dom_id": "ds-1", "script_id": "ds-figure-1",
         "figure": histogram("GPU demand", [gpu_demand(j, cluster) for j in jobs], "GPUs")},
    ]  # fmt: skip
    return ctx
