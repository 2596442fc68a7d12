"""Create the example experiments (once): each preset with every algorithm that supports it, plus
the baseline variants that preset's paper compares (``EXTRA_RUNS``).

Idempotent: an example that exists already is left alone. Its runs are queued, so a worker started
afterwards (bin/run-local starts one) simulates them.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from scheduling import loaders, presets, registry
from scheduling.model import Instance
from webapp.experiments import create_experiment
from webapp.inputs import Inputs, Submission
from webapp.models import Experiment
from workers.runs import trace_format

DEFAULT_PRESETS = ("demo",)

# Runs a preset's example adds to every algorithm at its defaults: the variants its paper's
# comparison needs, as (algorithm, raw parameters for the registry's parse_params). Zhou et al.
# compare DRF whose jobs keep their workers (drf's default) with DRF that re-divides workers at every
# event; Fig. 8
# compares A_maxweight with Jain et al.'s greedy on a batch due by tau = 64 (docs/results-zhou.md),
# in the default arrival order and largest weight first.
EXTRA_RUNS: dict[str, tuple[tuple[str, dict[str, Any]], ...]] = {
    "zhou-ps": (("drf", {"fixed": False}),),
    "zhou-allreduce": (("drf", {"fixed": False}),),
    "zhou-batch": (
        ("drf", {"fixed": False}),
        ("zhou-maxweight", {"tau": 64}),
        ("zhou-maxweight", {"tau": 64, "order": "weight"}),
        ("jain-greedy", {"tau": 64}),
    ),
}


def example_name(preset: str) -> str:
    return f"Example: {preset} preset"


class Command(BaseCommand):
    help = "Create example experiments from presets (default: demo) unless they exist; their runs are queued."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--preset", action="append", dest="presets", help="preset name (repeatable)")

    def handle(self, *args: Any, **options: Any) -> None:
        for name in options["presets"] or DEFAULT_PRESETS:
            if Experiment.objects.filter(name=example_name(name), source=Experiment.Source.PRESET).exists():
                self.stdout.write(f"example {name!r} exists")
                continue
            exp = create_experiment(example(name))
            self.stdout.write(f"created example {name!r} with {exp.runs.count()} queued runs")


def example(preset: str) -> Submission:
    files = presets.build(preset)
    cluster = loaders.parse_cluster(files.cluster, "cluster.json")
    jobs = loaders.parse_trace(files.trace, cluster, files.trace_name, trace_format(files.trace_name))
    instance = Instance(cluster, jobs)
    specs = registry.all_specs()
    runs = [(name, spec.parse_params({})) for name, spec in specs.items() if spec.unsupported(instance) is None]
    runs += [
        (name, specs[name].parse_params(raw))
        for name, raw in EXTRA_RUNS.get(preset, ())
        if specs[name].unsupported(instance) is None
    ]
    options = {"jobs": len(jobs), "seed": 0, "size": 1.0}
    inputs = Inputs(
        Experiment.Source.PRESET, "cluster.json", files.cluster, files.trace_name, files.trace, preset, options
    )
    return Submission(name=example_name(preset), inputs=inputs, runs=runs, seed=0)
