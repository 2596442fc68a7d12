"""The new-experiment form's inputs: uploaded files, datasets of the library or a preset, each read
completely by ``scheduling.loaders`` (or left to a worker's check when too large for a request);
an error becomes a form error on the field at fault, naming file, line, job and field."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile

from scheduling import loaders, presets
from scheduling.errors import InputError
from scheduling.model import Cluster, Instance, Job
from webapp import limits, quotas, tracechecks
from webapp.inputs import MIB, Inputs, Reasons, too_many_rows
from webapp.models import Dataset, Experiment, TraceCheck
from webapp.security import parse_deadline
from workers.runs import trace_format


class InputReading(forms.Form):
    """The input-reading half of ``webapp.forms.ExperimentForm``, which declares the fields."""

    user: Any
    # A trace too large to check here: () for uploaded files, (trace, cluster) dataset ids for
    # library ones; None: checked here (webapp/inputchecks.py).
    check_first: tuple[int, int] | tuple[()] | None

    def _library_inputs(self, data: dict[str, Any]) -> tuple[Inputs, Instance | Reasons | None] | None:
        cluster_ds: Dataset | None = data.get("cluster_dataset")
        trace_ds: Dataset | None = data.get("trace_dataset")
        if cluster_ds is None:
            self.add_error("cluster_dataset", "Choose a cluster spec from your datasets.")
        if trace_ds is None:
            self.add_error("trace_dataset", "Choose a trace from your datasets.")
        if cluster_ds is None or trace_ds is None:
            return None
        inputs = Inputs(Experiment.Source.LIBRARY, cluster_ds.name, cluster_ds.text, trace_ds.name, trace_ds.text)
        parsed: Cluster | None = None  # read once, for the history or the trace, whichever needs it first
        past: tuple[Job, ...] = ()
        history_ds: Dataset | None = data.get("history_dataset")
        if history_ds is not None:
            if history_ds.pk == trace_ds.pk:
                self.add_error("history_dataset", "The history must be another trace than the one evaluated.")
                return None
            parsed = self._library_cluster(cluster_ds)
            name, text = history_ds.name, history_ds.text
            found = None if parsed is None else self._history(parsed, name, text, "history_dataset")
            if found is None:
                return None
            inputs, past = dataclasses.replace(inputs, history_name=name, history_text=text), found
        check = tracechecks.stored(trace_ds, cluster_ds)
        if check is not None:  # checked before (on upload or on its page): not loaded again
            if check.status == TraceCheck.Status.FAILED:
                self.add_error("trace_dataset", check.error)
                return None
            if check.summary is not None:
                return inputs, dict(check.summary["unsupported"])
        elif limits.too_large(trace_ds.text):  # its check has not ended: the runs wait for it
            self.check_first = (trace_ds.pk, cluster_ds.pk)
            return inputs, None
        if parsed is None:
            parsed = self._library_cluster(cluster_ds)
            if parsed is None:
                return None
        try:
            fmt = trace_format(trace_ds.name)
            jobs = loaders.parse_trace(trace_ds.text, parsed, trace_ds.name, fmt, parse_deadline(trace_ds.name))
        except InputError as exc:
            self.add_error("trace_dataset", str(exc))
            return None
        return inputs, Instance(parsed, jobs, history=past)

    def _library_cluster(self, cluster_ds: Dataset) -> Cluster | None:
        """The library cluster spec, read; None with its error on ``cluster_dataset``."""
        try:
            return loaders.parse_cluster(cluster_ds.text, cluster_ds.name)
        except InputError as exc:
            self.add_error("cluster_dataset", str(exc))
            return None

    def _history(self, cluster: Cluster, name: str, text: str, field: str) -> tuple[Job, ...] | None:
        """The history's jobs, read against the cluster as the trace is; None with a form error on
        ``field`` (file, line, job and field at fault)."""
        if message := too_many_rows(text, name):
            self.add_error(field, message)
            return None
        try:
            return loaders.parse_trace(text, cluster, name, trace_format(name), parse_deadline(name))
        except InputError as exc:
            self.add_error(field, str(exc))
            return None

    def _uploaded_inputs(self) -> tuple[Inputs, Instance | None] | None:
        cluster = self._read_upload("cluster_file", "cluster.json")
        trace = self._read_upload("trace_file", "trace.csv")
        if cluster is None or trace is None:
            return None
        try:
            parsed = loaders.parse_cluster(cluster[1], cluster[0])
        except InputError as exc:
            self.add_error("cluster_file", str(exc))
            return None
        if message := too_many_rows(trace[1], trace[0]):
            self.add_error("trace_file", message)
            return None
        inputs = Inputs(Experiment.Source.UPLOAD, cluster[0], cluster[1], trace[0], trace[1])
        past: tuple[Job, ...] = ()
        if self.cleaned_data.get("history_file") is not None:
            history = self._read_upload("history_file", "history.csv")
            found = None if history is None else self._history(parsed, history[0], history[1], "history_file")
            if history is None or found is None:
                return None
            inputs, past = dataclasses.replace(inputs, history_name=history[0], history_text=history[1]), found
        if limits.too_large(trace[1]) and getattr(self.user, "pk", None):
            self.check_first = ()  # checked by a worker before the runs start
            return inputs, None
        try:
            jobs = loaders.parse_trace(trace[1], parsed, trace[0], trace_format(trace[0]), parse_deadline(trace[0]))
        except InputError as exc:
            self.add_error("trace_file", str(exc))
            return None
        return inputs, Instance(parsed, jobs, history=past)

    def _read_upload(self, field: str, default_name: str) -> tuple[str, str] | None:
        """(file name, text) of an uploaded file, or None with a form error on ``field``."""
        upload: UploadedFile[Any] | None = self.cleaned_data.get(field)
        if upload is None:
            if field not in self.errors:
                self.add_error(field, "Choose a file.")
            return None
        name = os.path.basename(upload.name or "") or default_name
        if upload.size is not None and upload.size > loaders.MAX_UPLOAD_BYTES:
            limit = loaders.MAX_UPLOAD_BYTES // MIB
            self.add_error(field, f"{name}: file is {upload.size / MIB:.1f} MiB, larger than the {limit} MiB limit")
            return None
        try:
            return name, loaders.decode(upload.read(), name)
        except InputError as exc:
            self.add_error(field, str(exc))
            return None

    def _preset_inputs(self, data: dict[str, Any]) -> tuple[Inputs, Instance] | None:
        name = data.get("preset")
        if not name:
            self.add_error("preset", "Choose a preset.")
            return None
        if any(f in self.errors for f in ("jobs", "preset_seed", "size", "load")):
            return None
        instead = "for more, run `python -m scheduling generate` and upload its files, or use the CLI"
        if problem := quotas.preset_too_large(data.get("jobs") or 0, instead):
            self.add_error("jobs", problem)
            return None
        options = {
            "jobs": data.get("jobs"),
            "seed": data.get("preset_seed") or 0,
            "size": data.get("size") if data.get("size") is not None else 1.0,
            **({"load": data["load"]} if data.get("load") is not None else {}),
        }
        try:
            files = presets.build(name, **options)
            cluster = loaders.parse_cluster(files.cluster, "cluster.json")
            fmt = trace_format(files.trace_name)
            jobs = loaders.parse_trace(files.trace, cluster, files.trace_name, fmt, parse_deadline(files.trace_name))
        except InputError as exc:
            if exc.field in ("jobs", "size", "load"):
                self.add_error(exc.field, exc.problem)
            else:
                self.add_error("preset", f"preset {name}: {exc}")
            return None
        if len(files.trace.encode("utf-8")) > loaders.MAX_UPLOAD_BYTES:
            self.add_error("jobs", "the generated trace is larger than the upload limit: ask for fewer jobs")
            return None
        options["jobs"] = options["jobs"] or len(jobs)
        inputs = Inputs(
            Experiment.Source.PRESET, "cluster.json", files.cluster, files.trace_name, files.trace, name, options
        )
        return inputs, Instance(cluster, jobs)
