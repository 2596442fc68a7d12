"""The datasets library: a user's cluster specs and traces, validated on upload, with previews.

A trace is validated against a cluster spec (its worker/PS types and capacities decide whether a
job is valid), so adding a trace asks for one of the user's cluster specs. A small trace (up to
``INLINE_ROWS`` rows) is validated in the request: one that does not validate is not stored, and the
error is shown inline with its line and field, beside the offending line of the file. A larger one
is stored and checked by a background task (``workers.checks``), with progress on its page; its
errors are shown there. Either way the check's summary is stored (``TraceCheck``) and every later
preview or experiment reads it instead of loading the trace again.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile
from django.template.defaultfilters import filesizeformat
from django.utils import timezone

from scheduling import loaders
from scheduling.errors import InputError
from scheduling.model import Cluster
from webapp import tracechecks
from webapp.drafts import delete_draft, load_draft, save_draft
from webapp.inputs import too_many_rows
from webapp.models import Dataset, InputText, TraceCheck, text_digest
from webapp.security import parse_deadline
from workers.checks import gpu_demand, run_import, summarize
from workers.runs import trace_format

MIB = 2**20
NAME_LENGTH = Dataset._meta.get_field("name").max_length or 255

IMPORT_INLINE_BYTES = 256 * 1024
"""Raw GPU-job traces up to this size are imported in the request; larger ones (Philly: 3.4 MB) by
the background check, which imports, then validates, with progress on the dataset page."""

INLINE_ROWS = 5000
"""Traces with at most this many rows are validated in the request (well under a second); larger
ones by a background task, with progress on the dataset page."""


__all__ = ["gpu_demand"]  # moved to workers.checks; kept importable here


IMPORTS = {
    # form choice -> (importer format, kind of the result, output file suffix)
    "import-gpu": ("generic-gpu", Dataset.Kind.TRACE, ".csv"),
    "import-nodes": ("node-list", Dataset.Kind.CLUSTER, ".json"),
}


def import_raw(choice: str, data: bytes, name: str, options: Mapping[str, Any] | None = None) -> tuple[str, str, str]:
    """Convert a raw production file with ``scheduling.importers`` -> (kind, new name, text);
    ``options`` are ``importers.run``'s (mapping, slot_seconds, start, end, limit, seed: the CLI's
    flags). InputError names the raw file's line and column."""
    fmt, kind, suffix = IMPORTS[choice]
    return kind, imported_name(name, fmt, suffix), run_import(fmt, data, name, suffix, options)


def imported_name(name: str, fmt: str, suffix: str) -> str:
    """The name of a file imported from ``name``: its stem, the format and suffix, cut to fit the
    255-character column with that tail kept."""
    tail = f"-{fmt}{suffix}"
    return Path(name).stem[: NAME_LENGTH - len(tail)] + tail


def unique_name(owner: Any, name: str, exclude: int | None = None) -> str:
    """``name``, or ``stem-2.ext``, ``stem-3.ext``, ... : the first not in the owner's library (the
    extension stays last: it selects a trace's format)."""
    mine = Dataset.objects.filter(owner=owner)
    taken = set((mine if exclude is None else mine.exclude(pk=exclude)).values_list("name", flat=True))
    if name not in taken:
        return name
    stem, suffix = Path(name).stem, Path(name).suffix
    k = 2
    while f"{stem}-{k}{suffix}" in taken:
        k += 1
    return f"{stem}-{k}{suffix}"


RAW_TRACE_COLUMNS = {"submit_time", "timestamp", "creation_time", "submission_time", "num_gpus", "num_gpu"}
RAW_NODE_COLUMNS = {"sn", "cpu_milli", "memory_mib"}


def wrong_kind_hint(kind: str, text: str) -> tuple[str, str] | None:
    """When a raw production file was uploaded as a trace or cluster spec: the import that reads it."""
    header = {c.strip().strip('"').lower() for c in (text.splitlines() or [""])[0].split(",")}
    if kind in (Dataset.Kind.TRACE, Dataset.Kind.CLUSTER) and "arrival" not in header:
        if len(header & RAW_TRACE_COLUMNS) >= 2 or "deletion_time" in header:
            return "import-gpu", "This looks like a raw GPU-job trace (Philly, Alibaba pods):"
        if len(header & RAW_NODE_COLUMNS) >= 2:
            return "import-nodes", "This looks like a raw node list:"
    return None


def dataset_label(ds: Dataset) -> str:
    """A dataset as dropdowns list it: name, job count and arrival span (traces checked), size, date."""
    parts = [ds.name]
    summary = next((c.summary for c in ds.checks.all() if c.summary), None) if ds.kind == Dataset.Kind.TRACE else None
    if summary:
        lo, hi = summary["span"]
        hours = (hi - lo) * summary["slot_seconds"] / 3600
        parts.append(f"{summary['jobs']:,} jobs over {hi - lo:,} slots ({hours:,.1f} h)")
    parts += [filesizeformat(ds.size), timezone.localtime(ds.created).strftime("%Y-%m-%d %H:%M")]
    return " · ".join(str(p) for p in parts)


def usable(queryset: Any) -> Any:
    """The datasets of ``queryset`` that have content: not a trace whose background import is still
    running or failed (``upload_check``)."""
    return queryset.exclude(size=0)


def labelled(field: Any, queryset: Any) -> None:
    """Give a dataset dropdown its ``usable`` datasets (texts, InputText rows, not loaded) and
    ``dataset_label`` labels."""
    field.queryset = usable(queryset).prefetch_related("checks")
    field.label_from_instance = dataset_label


def rename(ds: Dataset, name: str) -> str:
    """Rename ``ds`` (unique in its owner's library; a trace keeps its extension) -> the new name."""
    name = os.path.basename(name.strip())
    if not name:
        raise InputError("a name cannot be blank", field="name")
    suffix = Path(ds.name).suffix
    if suffix and not name.lower().endswith(suffix.lower()):
        name += suffix  # the extension selects a trace's format
    ds.name = unique_name(ds.owner_id, name[:255], exclude=ds.pk)
    ds.save(update_fields=["name"])
    return ds.name


def parse_mapping(text: str) -> dict[str, str]:
    """``FIELD=COLUMN`` items, one per line or separated by commas (the CLI's repeated --map)."""
    out: dict[str, str] = {}
    for item in (x.strip() for line in text.splitlines() for x in line.split(",")):
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise InputError(f"{item!r} is not FIELD=COLUMN", field="mapping")
        out[key.strip()] = value.strip()
    return out


KINDS = [
    *Dataset.Kind.choices,
    ("import-gpu", "raw GPU-job trace to import (Philly, Alibaba pods: job_id, submit_time, num_gpus, duration)"),
    ("import-nodes", "raw node list to import (sn, cpu_milli, memory_mib, gpu, model)"),
]

OPTION_FIELDS = {  # an importer error on a CLI flag -> the form field that set it
    "--start": "start",
    "--end": "end",
    "--limit": "limit",
    "--slot-seconds": "slot_seconds",
    "--map": "mapping",
    "--map duration": "mapping",
    "mapping": "mapping",
}


class DatasetForm(forms.Form):
    kind = forms.ChoiceField(
        choices=KINDS,
        widget=forms.RadioSelect,
        initial=Dataset.Kind.CLUSTER,
    )
    file = forms.FileField(
        required=False, allow_empty_file=True, help_text="Cluster spec: JSON. Trace: CSV, or JSON (.json)"
    )
    draft = forms.CharField(required=False, widget=forms.HiddenInput, max_length=100)  # a previewed file
    cluster = forms.ModelChoiceField(
        queryset=Dataset.objects.none(),
        required=False,
        label="Validate the trace against",
        help_text="One of your cluster specs (a trace's job types and sizes depend on the cluster)",
    )
    name = forms.CharField(
        required=False,
        max_length=200,
        help_text="Blank: the file's name. Made unique in your library (name-2.csv, ...)",
    )
    # Options of a raw GPU-job trace import: the CLI's import flags (docs/formats.md, "Imports").
    start = forms.CharField(
        required=False,
        max_length=64,
        help_text="Keep jobs submitted at/after: seconds from the trace start, or a datetime",
    )
    end = forms.CharField(required=False, max_length=64, help_text="Keep jobs submitted before (same forms)")
    limit = forms.IntegerField(required=False, min_value=1, help_text="Keep at most this many jobs (earliest first)")
    slot_seconds = forms.FloatField(
        required=False, min_value=0.001, label="Slot length (s)", help_text="Blank: 60 s; match the cluster spec's"
    )
    mapping = forms.CharField(
        required=False,
        max_length=2000,
        label="Column mapping",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="FIELD=COLUMN, one per line or comma-separated; duration=END-START computes it from two "
        "timestamp columns (Alibaba pod list: duration=deletion_time-creation_time)",
    )
    seed = forms.IntegerField(required=False, min_value=0, initial=0, help_text="Seed of the assumed model profiles")

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        clusters = Dataset.objects.filter(owner=user.pk, kind=Dataset.Kind.CLUSTER)
        labelled(self.fields["cluster"], clusters)
        if len(only := list(clusters[:2])) == 1:
            self.fields["cluster"].initial = only[0].pk  # the one cluster spec there is: chosen already
        self.text = ""
        self.file_name = ""  # of the file read (the form's "name" field is the name to give it)
        self.summary: dict[str, Any] | None = None  # of a trace validated in the request
        self.draft_used = ""  # token of the previewed file this form adds
        self.raw_import: tuple[bytes, str, dict[str, Any]] | None = None  # (raw, file name, options): imported later
        self.hint: tuple[str, str] | None = None  # (import choice, message) when the file is of another kind
        self.error_line: tuple[int, str] | None = None  # (line number, its text) of the first error
        self.quick: tuple[int, str] | None = None  # (jobs, converted head) of a large raw trace previewed

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        upload: UploadedFile[Any] | None = data.get("file")
        draft = load_draft(self.user, data.get("draft") or "") if upload is None else None
        if upload is None and draft is None:
            if "file" not in self.errors:
                self.add_error("file", "Choose a file.")
            return data
        try:
            if upload is not None:
                self.file_name = os.path.basename(upload.name or "") or "upload"
                if upload.size is not None and upload.size > loaders.MAX_UPLOAD_BYTES:
                    limit = loaders.MAX_UPLOAD_BYTES // MIB
                    self.add_error(
                        "file",
                        f"{self.file_name}: file is {upload.size / MIB:.1f} MiB, larger than the {limit} MiB limit",
                    )
                    return data
                raw = upload.read()
                if self.import_later(data, raw) or self.preview_large(data, raw):
                    return data
                if data.get("kind") in IMPORTS:
                    kind, self.file_name, self.text = import_raw(
                        data["kind"], raw, self.file_name, self.import_options(data)
                    )
                    data["kind"] = kind
                else:
                    self.text = loaders.decode(raw, self.file_name)
            else:
                assert draft is not None
                data["kind"], self.file_name, self.text = draft  # imported when it was previewed
                self.draft_used = data.get("draft") or ""
                if data["kind"] == "import-gpu":  # a large raw trace, previewed: imported in the background
                    raw, self.text = self.text.encode("utf-8"), ""
                    if self.import_later(data, raw):
                        return data
            if data.get("kind") == Dataset.Kind.CLUSTER:
                loaders.parse_cluster(self.text, self.file_name)
            else:
                cluster_ds: Dataset | None = data.get("cluster")
                if cluster_ds is None:
                    self.add_error("cluster", "Choose the cluster spec to validate the trace against.")
                    return data
                if message := too_many_rows(self.text, self.file_name):
                    self.add_error("file", message)
                    return data
                cluster = loaders.parse_cluster(cluster_ds.text, cluster_ds.name)
                if self.text.count("\n") <= INLINE_ROWS:
                    fmt = trace_format(self.file_name)
                    jobs = loaders.parse_trace(self.text, cluster, self.file_name, fmt, parse_deadline(self.file_name))
                    self.summary = summarize(jobs, cluster)
        except InputError as exc:
            self.add_error(OPTION_FIELDS.get(exc.field or "", "file"), str(exc))
            self.hint = wrong_kind_hint(data.get("kind") or "", self.text)
            if exc.line is not None and self.text:
                lines = self.text.splitlines()
                if 0 < exc.line <= len(lines):
                    self.error_line = (exc.line, lines[exc.line - 1][:300])
        return data

    def import_later(self, data: dict[str, Any], raw: bytes) -> bool:
        """A raw GPU-job trace over ``IMPORT_INLINE_BYTES``, to be added (not previewed), is imported
        by the background check instead of this request; True when so (then nothing is checked here)."""
        if data.get("kind") != "import-gpu" or len(raw) <= IMPORT_INLINE_BYTES or self.data.get("action") == "preview":
            return False
        if data.get("cluster") is None:
            self.add_error("cluster", "Choose the cluster spec to validate the trace against.")
            return True
        options = self.import_options(data)  # a malformed mapping is refused now, with its field
        fmt, _, suffix = IMPORTS["import-gpu"]
        self.raw_import = (raw, self.file_name, options)
        self.file_name = imported_name(self.file_name, fmt, suffix)
        data["kind"] = Dataset.Kind.TRACE
        return True

    def preview_large(self, data: dict[str, Any], raw: bytes) -> bool:
        """The Preview of a raw GPU-job trace over ``IMPORT_INLINE_BYTES``: its first converted rows,
        job count, span and offered load without importing it whole (``rawpreview``); the raw file is
        kept as the draft, which "Add" imports in the background. True when so."""
        from webapp.rawpreview import quick_preview

        if data.get("kind") != "import-gpu" or len(raw) <= IMPORT_INLINE_BYTES or self.data.get("action") != "preview":
            return False
        cluster_ds: Dataset | None = data.get("cluster")
        if cluster_ds is None:
            self.add_error("cluster", "Choose the cluster spec to validate the trace against.")
            return True
        try:
            cluster = loaders.parse_cluster(cluster_ds.text, cluster_ds.name)
            jobs, head, summary = quick_preview(raw, self.file_name, self.import_options(data), cluster)
            self.text = loaders.decode(raw, self.file_name)
        except InputError as exc:
            self.add_error(OPTION_FIELDS.get(exc.field or "", "file"), str(exc))
            return True
        self.quick, self.summary = (jobs, head), {"jobs": jobs, **summary}
        return True

    def preview(self) -> dict[str, Any]:
        """What would be added (nothing is stored in the library yet): the converted file is kept as
        a draft that the form's next "Add" saves without a new upload."""
        token = save_draft(self.user, self.cleaned_data["kind"], self.chosen_name(), self.text)
        # a copy that can be changed: request.POST (a QueryDict) is read-only; the stubs type data as a Mapping
        self.data = self.data.copy()  # type: ignore[attr-defined]
        self.data["draft"] = token  # type: ignore[index]
        if self.quick is not None:  # a large raw trace: imported on Add, in the background
            fmt, kind, suffix = IMPORTS["import-gpu"]
            return {
                "name": unique_name(self.user, imported_name(self.chosen_name(), fmt, suffix)),
                "kind": kind.label,
                "size": len(self.text.encode("utf-8")),
                "rows": self.quick[0],
                "summary": self.summary,
                "head": self.quick[1],
                "later": True,
            }
        return {
            "name": unique_name(self.user, self.chosen_name()),
            "kind": Dataset.Kind(self.cleaned_data["kind"]).label,
            "size": len(self.text.encode("utf-8")),
            "rows": max(self.text.count("\n") - 1, 0),
            "summary": self.summary,
            "head": "\n".join(self.text.splitlines()[:12]),
        }

    def import_options(self, data: dict[str, Any]) -> dict[str, Any]:
        """``importers.run`` keyword arguments from the import fields (blank: the CLI's defaults)."""
        options: dict[str, Any] = {"mapping": parse_mapping(data.get("mapping") or "")}
        for key in ("start", "end"):
            if (data.get(key) or "").strip():
                options[key] = data[key].strip()
        for key in ("limit", "slot_seconds", "seed"):
            if data.get(key) is not None:
                options[key] = data[key]
        return options

    def chosen_name(self) -> str:
        """The name given (keeping the file's extension, which selects a trace's format), else the file's."""
        given = (self.cleaned_data.get("name") or "").strip()
        if not given:
            return self.file_name
        suffix = Path(self.file_name).suffix
        return given if given.lower().endswith(suffix.lower()) else given + suffix

    def save(self) -> Dataset:
        ds: Dataset = Dataset.objects.create(
            owner=self.user,
            kind=self.cleaned_data["kind"],
            name=unique_name(self.user, self.chosen_name()),
            input=InputText.intern(self.text),
            size=len(self.text.encode("utf-8")),
        )
        if self.draft_used:
            delete_draft(self.user, self.draft_used)
        against: Dataset | None = self.cleaned_data.get("cluster")
        if ds.kind == Dataset.Kind.TRACE and against is not None:
            if self.raw_import is not None:
                tracechecks.start_import(ds, against, *self.raw_import)
            elif self.summary is not None:
                tracechecks.record(ds, against, self.summary)
            else:
                tracechecks.start(ds, against)
        return ds


def upload_check(ds: Dataset) -> TraceCheck | None:
    """The check that imports trace ``ds`` from a raw file in the background (``tracechecks.start_import``:
    ``TraceCheck.import_options["file"]`` names the uploaded file), or None."""
    return next((c for c in ds.checks.all() if "file" in (c.import_options or {})), None)


def mine(user: Any) -> list[Dataset]:
    """The user's datasets; each has ``state``: "" (usable), "importing" (a background import not
    finished) or "failed" (then ``error``: the failed check's, naming file, line and field)."""
    out = list(Dataset.objects.filter(owner=user.pk))  # (their texts not loaded)
    pending = {
        trace: (status, error)
        for trace, status, error in TraceCheck.objects.filter(trace__owner=user.pk, trace__size=0)
        .exclude(import_options={})
        .values_list("trace_id", "status", "error")
    }
    for ds in out:
        status, ds.error = pending.get(ds.pk, ("", ""))
        ds.state = "failed" if status == TraceCheck.Status.FAILED else "importing" if status else ""
    return out


def remember_uploads(user: Any, form: Any) -> None:
    """Files uploaded with a new experiment join the user's library (once per name and content)."""
    inputs = form.inputs
    if inputs is None or inputs.source != "upload" or not getattr(user, "pk", None):
        return
    files = [
        (Dataset.Kind.CLUSTER, inputs.cluster_name, inputs.cluster_text),
        (Dataset.Kind.TRACE, inputs.trace_name, inputs.trace_text),
    ]
    if inputs.history_text:
        files.append((Dataset.Kind.TRACE, inputs.history_name, inputs.history_text))
    for kind, name, text in files:
        remember(user, kind, name, text)


def remember(user: Any, kind: str, name: str, text: str) -> Dataset:
    """The user's dataset of this kind, name and content: the one stored, or a new one."""
    size = len(text.encode("utf-8"))
    found = Dataset.objects.filter(owner=user, kind=kind, name=name, input=text_digest(text)).first()
    return found or Dataset.objects.create(owner=user, kind=kind, name=name, input=InputText.intern(text), size=size)


def delete(ds: Dataset) -> None:
    """Delete the dataset (its checks with it) and its file unless an experiment or another dataset
    uses it."""
    digest = ds.input_id
    ds.delete()
    InputText.delete_unused([digest])


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


def bar_chart(title: str, x: list[float], y: list[int], xlabel: str, width: float | None = None) -> dict[str, Any]:
    """A histogram drawn from counts binned when the trace was checked (a few dozen bars)."""
    trace: dict[str, Any] = {"type": "bar", "x": x, "y": y, "marker": {"color": "#4c78a8"}}
    if width is not None:
        trace["width"] = width
    return {
        "data": [trace],
        "layout": {
            "title": {"text": title, "font": {"size": 14}},
            "xaxis": {"title": {"text": xlabel}},
            "yaxis": {"title": {"text": "jobs"}},
            "height": 280,
            "margin": {"l": 50, "r": 20, "t": 40, "b": 40},
            "bargap": 0.05,
        },
    }


def summary_figures(summary: dict[str, Any]) -> list[dict[str, Any]]:
    arrivals = summary["arrivals"]
    width = arrivals["width"]
    hours = summary["slot_seconds"] / 3600
    return [
        {"dom_id": "ds-0", "script_id": "ds-figure-0",
         "figure": bar_chart("Arrivals", [s + width / 2 for s in arrivals["start"]], arrivals["count"],
                             f"arrival slot ({summary['slot_seconds']:g} s; 1,000 slots = {1000 * hours:.3g} h)",
                             width)},
        {"dom_id": "ds-1", "script_id": "ds-figure-1",
         "figure": bar_chart("GPU demand", [g for g, _ in summary["gpu_demand"]],
                             [n for _, n in summary["gpu_demand"]], "GPUs")},
    ]  # fmt: skip


def preview_page(ds: Dataset, user: Any, against: str | None) -> dict[str, Any]:
    from webapp.inputs import preview

    ctx: dict[str, Any] = {"dataset": ds, "head": preview(ds.text), "figures": [], "error": None}
    if ds.kind == Dataset.Kind.CLUSTER:
        try:
            ctx["cluster"] = cluster_summary(loaders.parse_cluster(ds.text, ds.name))
        except InputError as exc:
            ctx["error"] = str(exc)
        return ctx
    clusters = list(Dataset.objects.filter(owner=user.pk, kind=Dataset.Kind.CLUSTER))
    ctx["clusters"] = clusters
    upload = upload_check(ds) if ds.size == 0 else None
    if upload is not None:  # imported in the background: its check's progress, or why it failed
        ctx["against"], ctx["check"] = upload.cluster, upload
        if upload.status == TraceCheck.Status.FAILED:
            ctx["error"] = upload.error
            ctx["failed_upload"] = True
        elif upload.status == TraceCheck.Status.QUEUED:
            tracechecks.send(upload.pk)  # again: the broker may have been down when it was added
        return ctx
    checked = {c.cluster_id for c in ds.checks.all()}
    # The cluster asked for, else one the trace was checked against, else the newest.
    chosen = next((c for c in clusters if str(c.pk) == against), None) or next(
        (c for c in clusters if c.pk in checked), clusters[0] if clusters else None
    )
    if chosen is None:
        ctx["error"] = "Add a cluster spec to preview this trace against it."
        return ctx
    ctx["against"] = chosen
    check = tracechecks.start(ds, chosen)
    ctx["check"] = check
    if check.status == TraceCheck.Status.FAILED:
        ctx["error"] = check.error
        if check.error_line:
            lines = ds.text.splitlines()
            if 0 < check.error_line <= len(lines):
                ctx["error_line"] = (check.error_line, lines[check.error_line - 1][:300])
        return ctx
    if check.status != TraceCheck.Status.DONE or check.summary is None:
        return ctx  # the page shows the check's progress and reloads when it ends
    summary = check.summary
    ctx["jobs"] = summary["jobs"]
    ctx["span"] = tuple(summary["span"])
    ctx["summary"] = summary
    ctx["figures"] = summary_figures(summary)
    return ctx
