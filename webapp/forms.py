"""The new-experiment form: inputs (upload or preset), algorithms with their parameters, a seed.

Parameter fields are generated from each algorithm's registry declaration, and the registry's own
parser validates them; "Also run" lines (``algorithm key=value ...``) add runs of an algorithm with
other parameters, parsed by the same registry entry. Inputs are parsed completely by
``scheduling.loaders`` in ``clean``: an error becomes a form error naming file, line, job and
field, and nothing is stored.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping
from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile

from scheduling import bounds, loaders, plugins, presets, registry
from scheduling.errors import InputError
from scheduling.model import Cluster, Instance, Job
from webapp import adapted, inputchecks, quotas, repetitions, tracechecks
from webapp.models import Dataset, Experiment, TraceCheck
from webapp.security import parse_deadline
from webapp.inputs import Inputs, Submission
from workers.runs import load_instance, trace_format

SEP = "__"  # parameter field names are "<algorithm>__<parameter>"
MAX_PRESET_JOBS = 100_000
MAX_SWEEP_VALUES = 50
MAX_RUNS = 120  # runs one experiment may queue (algorithms x sweep values)
MAX_TRACE_ROWS = 200_000  # jobs a trace sent through the web may hold (the CLI has no such cap)
MAX_EXTRA_RUNS_CHARS = 10_000  # the "Also run" lines
NO_ALGORITHM = "Pick at least one algorithm."

Chosen = list[tuple[str, dict[str, Any]]]  # (algorithm, parsed parameters), in order
Reasons = dict[str, str | None]  # algorithm -> why it cannot run the inputs (None: it can), as a trace check stored it


def too_many_rows(text: str, name: str) -> str | None:
    """A message when a trace has more rows than the dashboard accepts (counted before parsing)."""
    rows = text.count('"job_id"') if trace_format(name) == "json" else text.count("\n") - 1
    if rows > MAX_TRACE_ROWS:
        return f"{name}: {rows:,} rows, more than the {MAX_TRACE_ROWS:,} jobs the dashboard accepts (use the CLI)"
    return None


MIB = 2**20


class FlagInput(forms.CheckboxInput):
    """A checkbox whose posted value is kept as sent; absent: ``absent`` (False, unticked, for the
    page's form; None, the parameter's default, for the JSON API)."""

    def __init__(self, absent: Any = False) -> None:
        super().__init__()
        self.absent = absent

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        return data.get(name, self.absent)


class FlagField(forms.BooleanField):
    """A boolean parameter's checkbox. The value stays as posted ("on" from a browser; "true", "no",
    ... from the API) for ``Param.parse`` to judge, which refuses what it does not recognise as an
    "Also run" line does: Django's BooleanField and CheckboxInput take any value but "false" and "0",
    "maybe" included, as true."""

    widget = FlagInput

    def to_python(self, value: Any) -> Any:
        return value


def param_field(param: registry.Param, absent_flag: Any = False) -> forms.Field:
    """A form field for one declared parameter; values are checked by ``Param.parse`` in ``clean``.
    ``absent_flag``: a boolean parameter's value when it is not posted (see FlagInput)."""
    common: dict[str, Any] = {"required": False, "label": param.name, "help_text": param.help, "initial": param.default}
    if param.type is bool:
        return FlagField(widget=FlagInput(absent_flag), **common)
    if param.choices:
        return forms.ChoiceField(choices=[(c, c) for c in param.choices], **common)
    if param.type in (int, float):
        attrs = {"step": "1" if param.type is int else "any"}
        if param.min is not None:
            attrs["min"] = f"{param.min:g}"
        if param.max is not None:
            attrs["max"] = f"{param.max:g}"
        return forms.CharField(widget=forms.NumberInput(attrs=attrs), **common)
    return forms.CharField(**common)


HISTORY_HELP = (
    "Optional: a trace of past jobs (same format) for the algorithms that learn from one (A-SRPT and "
    "its baselines, OASiS bounds=history), as simulate --history gives it; never the evaluated trace"
)


class ExperimentForm(forms.Form):
    source = forms.ChoiceField(
        choices=[
            (Experiment.Source.UPLOAD, "Upload files"),
            (Experiment.Source.LIBRARY, "From my datasets"),
            (Experiment.Source.PRESET, "Preset"),
        ],
        widget=forms.RadioSelect,
        initial=Experiment.Source.UPLOAD,
        label="Inputs",
    )
    cluster_file = forms.FileField(
        required=False,
        allow_empty_file=True,
        label="Cluster spec",
        help_text="JSON: slot_seconds, resources, servers, types",
    )
    trace_file = forms.FileField(
        required=False, allow_empty_file=True, label="Job trace", help_text="CSV, or JSON when the name ends in .json"
    )
    history_file = forms.FileField(
        required=False, allow_empty_file=True, label="History of past jobs", help_text=HISTORY_HELP
    )
    cluster_dataset = forms.ModelChoiceField(queryset=Dataset.objects.none(), required=False, label="Cluster spec")
    trace_dataset = forms.ModelChoiceField(queryset=Dataset.objects.none(), required=False, label="Trace")
    history_dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.none(), required=False, label="History of past jobs", help_text=HISTORY_HELP
    )
    preset = forms.ChoiceField(required=False, initial="demo")
    # The preset checks jobs and size itself; the web form only caps the work one request may do.
    jobs = forms.IntegerField(required=False, max_value=MAX_PRESET_JOBS, help_text="Blank: the preset's default")
    preset_seed = forms.IntegerField(required=False, min_value=0, initial=0, label="Trace seed")
    size = forms.FloatField(required=False, initial=1.0, help_text="Share of the preset's cluster, in (0, 1]")
    load = forms.FloatField(required=False, label="Offered load", help_text="Blank: the preset's default")
    # Not required by itself: lines of ``extra_runs`` may be the only runs (``clean`` checks for one).
    algorithms = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, required=False)
    extra_runs = forms.CharField(
        required=False,
        max_length=MAX_EXTRA_RUNS_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "placeholder": "drf fixed=false"}),
        label="Also run (one per line)",
        help_text="algorithm key=value key=value ... (e.g. drf fixed=false): one more run per line, the "
        "parameters not named at their defaults; the same algorithm may run several times",
    )
    mode = forms.ChoiceField(
        choices=[(Experiment.Kind.COMPARISON, "Compare the algorithms"), (Experiment.Kind.SWEEP, "Sweep a parameter")],
        widget=forms.RadioSelect,
        initial=Experiment.Kind.COMPARISON,
        required=False,  # blank: a comparison
        label="Experiment",
    )
    sweep_param = forms.ChoiceField(required=False, label="Swept parameter")
    sweep_values = forms.CharField(
        required=False,
        max_length=1000,
        label="Values",
        help_text="A list (1, 2, 4) or a range start:stop:step (stop included), at most 50 values",
    )
    repeat = forms.ChoiceField(
        choices=[
            (repetitions.NONE, "Once"),
            (repetitions.SEEDS, "Repeat over seeds"),
            (repetitions.WINDOWS, "Repeat over windows of the trace"),
        ],
        widget=forms.RadioSelect,
        initial=repetitions.NONE,
        required=False,  # blank: once
        label="Repetitions",
    )
    repeat_seeds = forms.CharField(
        required=False,
        max_length=1000,
        label="Seeds",
        help_text="A count (10: seeds 0-9), a range (0-9) or a list (1, 5, 9). A preset draws its trace "
        "with each seed and the algorithms use it too; an uploaded trace stays, only the algorithm seed changes",
    )
    repeat_windows = forms.CharField(
        required=False,
        max_length=2000,
        label="Windows",
        help_text="A count K (K windows of equal job counts, in arrival order) or arrival-slot ranges "
        "start:end (0:500, 500:1000); each window's jobs start at slot 0",
    )
    seed = forms.IntegerField(min_value=0, max_value=2**32 - 1, initial=0, help_text="Random seed of every run")
    restart_seconds = forms.FloatField(
        required=False,
        min_value=0,
        max_value=bounds.MAX_RESTART_SECONDS,
        label="Restart cost (s)",
        help_text="Time a job loses each time it restarts on another allocation (resume, move, resize); "
        "blank: the cluster spec's restart_seconds (default 0). Stored in the experiment's cluster spec.",
    )
    name = forms.CharField(max_length=200, required=False, help_text="Blank: named after the inputs")
    model = forms.ChoiceField(
        choices=adapted.CHOICES,
        required=False,
        label="Run as the model of",
        help_text="Adapt a rigid GPU cluster and trace (a node list, a Philly window) to a paper's model "
        "(python -m scheduling adapt): every algorithm, baselines included, runs the same adapted instance",
    )
    history_fraction = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="History fraction",
        help_text="With a model: the leading fraction of the trace's jobs (of each window's) is the history "
        "the predictors learn from (A-SRPT, OASiS bounds=history); the others are evaluated. Blank: none",
    )

    def __init__(self, *args: Any, user: Any = None, absent_flags_default: bool = False, **kwargs: Any) -> None:
        """``absent_flags_default``: a boolean parameter not posted takes its default (the JSON API)
        instead of false (a browser posts nothing for an unticked checkbox)."""
        super().__init__(*args, **kwargs)
        self.user = user
        mine = Dataset.objects.filter(owner=user.pk) if user is not None and user.pk else Dataset.objects.none()
        from webapp.datasets import labelled  # datasets imports this module

        labelled(self.fields["cluster_dataset"], mine.filter(kind=Dataset.Kind.CLUSTER))
        labelled(self.fields["trace_dataset"], mine.filter(kind=Dataset.Kind.TRACE))
        labelled(self.fields["history_dataset"], mine.filter(kind=Dataset.Kind.TRACE))
        self.specs = registry.all_specs()
        self.plugin_problems = plugins.problems()  # plugins not loaded, shown above the algorithms
        names = sorted({p.name for spec in self.specs.values() for p in spec.params if p.type in (int, float)})
        choices(self.fields["sweep_param"]).choices = [("", "—"), *((n, n) for n in names)]
        choices(self.fields["algorithms"]).choices = [(name, name) for name in self.specs]
        choices(self.fields["preset"]).choices = [(name, name) for name in presets.PRESETS]
        self.param_fields: dict[str, list[str]] = {}
        for name, spec in self.specs.items():
            self.param_fields[name] = []
            for param in spec.params:
                key = f"{name}{SEP}{param.name}"
                self.fields[key] = param_field(param, None if absent_flags_default else False)
                self.param_fields[name].append(key)
        self.inputs: Inputs | None = None
        self.chosen: Chosen = []
        self.sweep: dict[str, Any] = {}
        self.run_lines: dict[str, list[int]] = {}  # algorithm -> numbers of the "Also run" lines naming it
        self.repetition: dict[str, Any] = {}  # Experiment.repetition
        # A trace too large to check here: () for uploaded files, (trace, cluster) dataset ids for
        # library ones; None: checked here (webapp/inputchecks.py).
        self.check_first: tuple[int, int] | tuple[()] | None = None

    def algorithm_groups(self) -> list[dict[str, Any]]:
        """For the template: each algorithm's checkbox, registry entry and parameter fields."""
        boxes = {box.data["value"]: box for box in self["algorithms"]}
        return [
            {
                "checkbox": boxes[name],
                "spec": spec,
                "params": [self[key] for key in self.param_fields[name]],
                "plugin": registry.PLUGIN_OF.get(name),
            }
            for name, spec in self.specs.items()
        ]

    def history_learners(self) -> dict[str, Any]:
        """For the form's script, which warns before submit that an uploaded or library trace without
        a history leaves a fitted predictor nothing to learn from (the rule of
        ``services.history_notes``): ``{"fitted": predictors that learn from the history,
        "learners": {algorithm: {"field": its predictor field, "default": its default predictor}}}``."""
        from scheduling.algorithms.asrpt.predictors import FITTED

        learners = {
            name: {"field": f"{name}{SEP}{param.name}", "default": param.default}
            for name, spec in self.specs.items()
            if spec.history
            for param in spec.params
            if param.name == "predictor"
        }
        return {"fitted": list(FITTED), "learners": learners}

    def preset_summaries(self) -> list[tuple[str, str, int]]:
        return [(p.name, p.summary, p.default_jobs) for p in presets.PRESETS.values()]

    # -----------------------------------------------------------------------------------------

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        loaded: tuple[Inputs, Instance | Reasons | None] | None
        if data.get("source") == Experiment.Source.PRESET:
            loaded = self._preset_inputs(data)
        elif data.get("source") == Experiment.Source.LIBRARY:
            loaded = self._library_inputs(data)
        else:
            loaded = self._uploaded_inputs()
        self.chosen = self._runs(data)
        if loaded is not None and data.get("restart_seconds") is not None:
            loaded = _with_restart_seconds(*loaded, data["restart_seconds"])
        if loaded is not None:
            self.inputs, instance = loaded
            if data.get("model") or data.get("history_fraction") is not None:  # webapp/adapted.py
                # Adapting needs the rigid instance: check_form loads a large trace here, in the request.
                self.repetition = self._repetition(data, instance)
                adapted.check_form(self, data, instance)
                return data
            if instance is None:  # a worker checks the trace before the runs start (webapp/inputchecks.py)
                self.repetition = self._repetition_unchecked(data)
                return data
            self._check_supported(instance, set(data.get("algorithms") or ()))
            self.repetition = self._repetition(data, instance)
        return data

    def _repetition_unchecked(self, data: dict[str, Any]) -> dict[str, Any]:
        """Repetitions of inputs not loaded in the request: over seeds (windows are cut from the
        loaded trace)."""
        if (data.get("repeat") or repetitions.NONE) == repetitions.WINDOWS:
            rows = f"{inputchecks.INLINE_ROWS:,}"
            self.add_error("repeat_windows", f"a trace of more than {rows} rows is checked in the background: add it "
                           "to your datasets, and repeat over its windows once it is checked")  # fmt: skip
            return {}
        return self._repetition(data, None)

    def _repetition(self, data: dict[str, Any], instance: Instance | Reasons | None) -> dict[str, Any]:
        """The repetitions asked for (``repetitions.describe``); a form error on the field at fault.
        ``instance`` may be a stored trace check's reasons: windows then load the inputs after all;
        None: inputs not loaded, repetitions over seeds only (``_repetition_unchecked``)."""
        over = data.get("repeat") or repetitions.NONE
        seeds: list[int] = []
        cut: int | list[tuple[int, int]] | None = None
        spans: list[tuple[int, int]] = []
        try:
            if over == repetitions.SEEDS:
                seeds = repetitions.parse_seeds(data.get("repeat_seeds") or "")
            elif over == repetitions.WINDOWS and instance is not None:
                if not isinstance(instance, Instance):
                    assert self.inputs is not None
                    i = self.inputs
                    instance = load_instance(i.cluster_text, i.cluster_name, i.trace_text, i.trace_name)
                cut, spans = repetitions.parse_windows(data.get("repeat_windows") or "", instance)
        except ValueError as exc:
            self.add_error("repeat_seeds" if over == repetitions.SEEDS else "repeat_windows", str(exc))
            return {}
        preset = data.get("source") == Experiment.Source.PRESET
        described = repetitions.describe(over, seeds, cut, spans, preset)
        total = len(self.chosen) * repetitions.count(described)
        if described and total > MAX_RUNS:  # without repetitions ``_runs`` has checked the count
            self.add_error(None, f"{total} runs ({len(self.chosen)} x {repetitions.count(described)} "
                           f"repetitions): an experiment may have at most {MAX_RUNS}")  # fmt: skip
        return described

    def _runs(self, data: dict[str, Any]) -> Chosen:
        """The ticked algorithms, then the "Also run" lines; in a sweep each once per value."""
        nothing = not data.get("algorithms") and not (data.get("extra_runs") or "").strip()
        if nothing and not self.has_error("algorithms"):
            self.add_error("algorithms", NO_ALGORITHM)
        checked = self._chosen_algorithms(data)
        runs = checked + self._extra_runs(data, checked)
        if data.get("mode") == Experiment.Kind.SWEEP and runs:
            runs = self._swept(data, runs)
        if len(runs) > MAX_RUNS:
            self.add_error(None, f"{len(runs)} runs: an experiment may have at most {MAX_RUNS}")
        return runs

    def _check_supported(self, instance: Instance | Reasons, ticked: set[str]) -> None:
        """A form error per chosen algorithm that cannot run ``instance`` (on the field that chose it;
        on the lines, naming them). ``instance`` may be the reasons a stored trace check recorded."""
        loaded: Instance | None = None  # the inputs, loaded at most once if the stored check lacks a name
        for name in dict.fromkeys(name for name, _ in self.chosen):
            if isinstance(instance, Instance):
                why = self.specs[name].unsupported(instance)  # names the algorithm and what is missing
            elif name in instance:
                why = instance[name]
            else:  # registered after the check: load the inputs after all
                assert self.inputs is not None
                i = self.inputs
                loaded = loaded or load_instance(i.cluster_text, i.cluster_name, i.trace_text, i.trace_name)
                why = self.specs[name].unsupported(loaded)
            if not why:
                continue
            if name in ticked:
                self.add_error("algorithms", why)
            else:
                numbers = self.run_lines.get(name, [])
                where = f"line {numbers[0]}" if len(numbers) == 1 else f"lines {', '.join(map(str, numbers))}"
                self.add_error("extra_runs", f"{where}: {why}")

    def submission(self) -> Submission:
        assert self.inputs is not None, "call is_valid() first"
        return Submission(
            name=self.cleaned_data["name"] or default_name(self.inputs, self.repetition),
            inputs=self.inputs,
            runs=self.chosen,
            seed=self.cleaned_data["seed"],
            kind=self.cleaned_data.get("mode") or Experiment.Kind.COMPARISON,
            sweep=self.sweep,
            repetition=self.repetition,
            check_first=self.check_first is not None,
            library=self.check_first or None,
        )

    def _swept(self, data: dict[str, Any], chosen: Chosen) -> Chosen:
        """Each chosen algorithm once per value of the swept parameter (parsed by its registry entry)."""
        name = data.get("sweep_param") or ""
        if not name:
            self.add_error("sweep_param", "Choose the parameter to sweep.")
            return chosen
        try:
            raw = sweep_values(data.get("sweep_values") or "")
        except ValueError as exc:
            self.add_error("sweep_values", str(exc))
            return chosen
        runs = []
        for algorithm, params in chosen:
            param = next((p for p in self.specs[algorithm].params if p.name == name), None)
            if param is None:
                self.add_error("sweep_param", f"{algorithm} has no parameter {name}")
                continue
            for value in raw:
                try:
                    runs.append((algorithm, self.specs[algorithm].parse_params({**params, name: param.parse(value)})))
                except InputError as exc:
                    self.add_error("sweep_values", f"{algorithm}: {exc.problem}")
                    return chosen
        self.sweep = {"param": name, "values": [int(f) if (f := float(v)).is_integer() else f for v in raw]}
        return runs

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
        elif inputchecks.too_large(trace_ds.text):  # its check has not ended: the runs wait for it
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
        if inputchecks.too_large(trace[1]) and getattr(self.user, "pk", None):
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

    def _chosen_algorithms(self, data: dict[str, Any]) -> Chosen:
        chosen: Chosen = []
        for name in data.get("algorithms", []):
            raw: dict[str, Any] = {}
            for key in self.param_fields[name]:
                value = data.get(key)
                if isinstance(value, bool) or value not in (None, ""):
                    raw[key.split(SEP, 1)[1]] = value
            try:
                chosen.append((name, self.specs[name].parse_params(raw)))
            except InputError as exc:
                key = f"{name}{SEP}{param_name(exc)}"
                self.add_error(key if key in self.fields else "algorithms", f"{name}: {exc.problem}")
        return chosen

    def _extra_runs(self, data: dict[str, Any], checked: Chosen) -> Chosen:
        """One run per non-empty "Also run" line, parsed by its algorithm's registry entry. A line
        naming a run already chosen (in a sweep: the same but for the swept parameter) is an error."""
        swept = data.get("sweep_param") if data.get("mode") == Experiment.Kind.SWEEP else None
        seen = {run_identity(name, params, swept) for name, params in checked}
        lines = [(n, line) for n, line in enumerate((data.get("extra_runs") or "").splitlines(), 1) if line.strip()]
        if len(lines) > MAX_RUNS:
            self.add_error("extra_runs", f"{len(lines)} lines: an experiment may have at most {MAX_RUNS} runs")
            return []
        runs: Chosen = []
        for number, line in lines:
            try:
                name, params = parse_run_line(line, self.specs)
            except InputError as exc:
                self.add_error("extra_runs", f"line {number}: {exc.problem}")
                continue
            identity = run_identity(name, params, swept)
            if identity in seen:
                self.add_error("extra_runs", f"line {number}: {name} with these parameters is already chosen")
                continue
            seen.add(identity)
            runs.append((name, params))
            self.run_lines.setdefault(name, []).append(number)
        return runs if not self.has_error("extra_runs") else []


def parse_run_line(line: str, specs: Mapping[str, registry.AlgorithmSpec]) -> tuple[str, dict[str, Any]]:
    """ "drf fixed=true" -> ("drf", every parameter of drf parsed, defaults for those not named);
    InputError whose problem names the algorithm or key and what is wrong."""
    name, *pairs = line.split()
    spec = specs.get(name)
    if spec is None:
        raise InputError(
            f"unknown algorithm {name!r} (known: {', '.join(specs)}; {registry.PLUGIN_HINT})", field="algorithm"
        )
    raw: dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not (key and eq and value):
            raise InputError(f"{name}: {pair!r} is not KEY=VALUE", field="param")
        if key in raw:
            raise InputError(f"{name}: {key} is given twice", field=f"param {key}")
        raw[key] = value
    try:
        return name, spec.parse_params(raw)
    except InputError as exc:
        raise InputError(f"{name} {param_name(exc)}: {exc.problem}", field=exc.field) from None


def param_name(exc: InputError) -> str:
    """The parameter a registry error is about (its field is "param <name>")."""
    return (exc.field or "").removeprefix("param ")


def run_identity(name: str, params: Mapping[str, Any], swept: str | None = None) -> tuple[str, str]:
    """What makes two runs the same (the swept parameter aside): algorithm and parameter values."""
    values = {k: v for k, v in params.items() if k != swept}
    return name, json.dumps(values, sort_keys=True)


def sweep_values(text: str) -> list[str]:
    """ "1, 2, 4" or "start:stop:step" (stop included) -> the values as strings; ValueError if bad."""
    text = text.strip()
    if not text:
        raise ValueError("Give the values: a list (1, 2, 4) or a range start:stop:step.")
    if ":" in text:
        parts = [x.strip() for x in text.split(":")]
        if len(parts) != 3:
            raise ValueError(f"{text!r}: a range is start:stop:step")
        try:
            start, stop, step = (float(x) for x in parts)
        except ValueError:
            raise ValueError(f"{text!r}: start, stop and step must be numbers") from None
        if not all(math.isfinite(x) for x in (start, stop, step)):
            raise ValueError(f"{text!r}: start, stop and step must be finite numbers")
        if step <= 0 or stop < start:
            raise ValueError(f"{text!r}: the step must be positive and stop at least start")
        span = (stop - start) / step  # inf for 0:1e308:1e-10, which int() cannot convert
        if not span < MAX_SWEEP_VALUES:
            raise ValueError(f"{text!r} has more than {MAX_SWEEP_VALUES} values")
        count = int(span + 1e-9) + 1
        if count > MAX_SWEEP_VALUES:
            raise ValueError(f"{text!r} has {count} values, more than {MAX_SWEEP_VALUES}")
        integral = all(float(x).is_integer() for x in (start, step))
        return [f"{int(start + i * step)}" if integral else f"{start + i * step:.10g}" for i in range(count)]
    values = [x.strip() for x in text.replace(";", ",").split(",") if x.strip()]
    if len(values) > MAX_SWEEP_VALUES:
        raise ValueError(f"{len(values)} values, more than {MAX_SWEEP_VALUES}")
    unique: dict[float, str] = {}  # by value: "1, 1.0, 01" is one value
    for v in values:
        try:
            x = float(v)
        except ValueError:
            raise ValueError(f"{v!r} is not a number") from None
        if not math.isfinite(x):
            raise ValueError(f"{v!r} is not a finite number")
        unique.setdefault(x, v)
    return list(unique.values())


def default_name(inputs: Inputs, repetition: dict[str, Any] | None = None) -> str:
    if inputs.source == Experiment.Source.PRESET:
        o = inputs.preset_options
        seeds = (repetition or {}).get("seeds") if (repetition or {}).get("trace_seeds") else None
        drawn = f"{len(seeds)} trace seeds" if seeds else f"trace seed {o['seed']}"
        return f"{inputs.preset} preset ({o['jobs']} jobs, {drawn}, size {o['size']:g})"
    return f"{inputs.cluster_name} + {inputs.trace_name}"


def choices(field: forms.Field) -> forms.ChoiceField:
    """A choice field of the form (``Form.fields`` holds them as plain fields)."""
    assert isinstance(field, forms.ChoiceField)
    return field


def _with_restart_seconds(
    inputs: Inputs, instance: Instance | Reasons | None, seconds: float
) -> tuple[Inputs, Instance | Reasons | None]:
    """The inputs with the form's restart cost written into the frozen cluster spec (DESIGN
    section 9), so that every run of the experiment, and any rerun, charges it. ``instance`` may be
    a stored trace check's reasons (library inputs checked before), or None (inputs a worker checks
    first): they do not depend on it."""
    spec = json.loads(inputs.cluster_text)
    spec["restart_seconds"] = seconds
    text = json.dumps(spec, indent=1)
    if not isinstance(instance, Instance):
        return dataclasses.replace(inputs, cluster_text=text), instance
    cluster = dataclasses.replace(instance.cluster, restart_seconds=seconds)
    return dataclasses.replace(inputs, cluster_text=text), dataclasses.replace(instance, cluster=cluster)
