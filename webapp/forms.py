"""The new-experiment form: inputs (upload or preset), algorithms with their parameters, a seed.

Parameter fields are generated from each algorithm's registry declaration, and the registry's own
parser validates them; "Also run" lines (``algorithm key=value ...``) add runs of an algorithm with
other parameters, parsed by the same registry entry. Inputs are parsed completely by
``scheduling.loaders`` in ``clean``: an error becomes a form error naming file, line, job and
field, and nothing is stored.
"""

from __future__ import annotations

from typing import Any

from django import forms

from scheduling import bounds, plugins, presets, registry
from scheduling.errors import InputError
from scheduling.model import Instance
from webapp import adapted, repetitions, submit_worker
from webapp.datasets import labelled
from webapp.form_inputs import InputReading
from webapp.inputs import Inputs, Reasons, Submission, default_name, with_restart_seconds
from webapp.models import Dataset, Experiment
from webapp.paramfields import choices, param_field
from webapp.runspecs import MAX_RUNS, Chosen, param_name, parse_run_line, run_identity, sweep_values
from workers.runs import load_instance

SEP = "__"  # parameter field names are "<algorithm>__<parameter>"
MAX_PRESET_JOBS = 100_000
MAX_EXTRA_RUNS_CHARS = 10_000  # the "Also run" lines
NO_ALGORITHM = "Pick at least one algorithm."


HISTORY_HELP = (
    "Optional: a trace of past jobs (same format) for the algorithms that learn from one (A-SRPT and "
    "its baselines, OASiS bounds=history), as simulate --history gives it; never the evaluated trace"
)


class ExperimentForm(InputReading):
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
        self.check_first = None  # (InputReading.check_first)

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
        ``pages.history_notes``): ``{"fitted": predictors that learn from the history,
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
            loaded = with_restart_seconds(*loaded, data["restart_seconds"])
        if loaded is not None:
            self.inputs, instance = loaded
            if submit_worker.defer(self, data, instance):  # a large trace: a worker cuts and adapts it
                return data
            if data.get("model") or data.get("history_fraction") is not None:  # webapp/adapted.py
                # Adapting needs the rigid instance: check_form loads a large trace here, in the request.
                self.repetition = self._repetition(data, instance)
                adapted.check_form(self, data, instance)
                return data
            if instance is None:  # a worker checks the trace before the runs start (webapp/inputchecks.py)
                self.repetition = self._repetition(data, None)  # over seeds (windows: submit_worker.defer)
                return data
            self._check_supported(instance, set(data.get("algorithms") or ()))
            self.repetition = self._repetition(data, instance)
        return data

    def _repetition(self, data: dict[str, Any], instance: Instance | Reasons | None) -> dict[str, Any]:
        """The repetitions asked for (``repetitions.describe``); a form error on the field at fault.
        ``instance`` may be a stored trace check's reasons: windows then load the inputs after all;
        None: inputs not loaded, repetitions over seeds only (windows of a large trace: ``submit_worker.defer``)."""
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
