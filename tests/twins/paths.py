"""Twins of the list schedulers (and drf) on rigid jobs whose rate is not one work unit per slot or
whose restarts cost their own time: the change-based path against the full walk under mixed GPU
types with speed factors (scheduling/gpu_types.py) and under a spread slowdown
(``network.spread_slowdown``), with and without a restart cost, and with restart costs by model,
GPU count and job (scheduling/restart_costs.py). Each fast run's result also passes the validator.

The named cases are those these comparisons were first written with (tests/test_gpu_types.py,
tests/test_spread.py and tests/test_restart_costs.py keep the semantics)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from scheduling import api
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance
from scheduling.validator import validate
from tests.twins.core import Twin
from tests.twins.sims import RUN_FIELDS, Outcome, Sim, incremental_run, run_features, same_run, sims

SAME = same_run(*RUN_FIELDS)


@dataclass(frozen=True)
class GpuTyped:
    """40 rigid jobs (1-16 GPUs, two models) on 4 x 8 GPUs of types V100, T4, P100, V100, with
    speed factors per type and per model (T4 at 0.5, P100 at 0.6, the lm model at 0.3 on T4)."""

    seed: int

    def build(self) -> Instance:
        rng = random.Random(self.seed)
        rows, t = ["job_id,arrival,gpus,duration,model"], 0
        for i in range(40):
            t += rng.randrange(0, 4)
            rows.append(f"j{i},{t},{rng.randint(1, 16)},{60 * rng.randint(1, 30)},{rng.choice(['cnn', 'lm'])}")
        spec = {
            "slot_seconds": 60,
            "resources": ["gpu"],
            "servers": [{"id": f"s{i}", "capacity": {"gpu": 8}, "gpu_model": m} for i, m in enumerate(TYPES)],
            "gpu_speeds": {"*": {"T4": 0.5, "P100": 0.6}, "lm": {"T4": 0.3}},
        }
        cluster = cluster_from_dict(spec)
        return Instance(cluster, parse_trace("\n".join(rows) + "\n", cluster, "trace.csv"))


TYPES = ("V100", "T4", "P100", "V100")


@dataclass(frozen=True)
class Spread:
    """40 rigid jobs (1-16 GPUs) on 4 x 8 GPUs with ``network.spread_slowdown`` 0.5."""

    seed: int

    def build(self) -> Instance:
        rng = random.Random(self.seed)
        rows, t = ["job_id,arrival,gpus,duration"], 0
        for i in range(40):
            t += rng.randrange(0, 4)
            rows.append(f"j{i},{t},{rng.randint(1, 16)},{60 * rng.randint(1, 30)}")
        spec = {
            "slot_seconds": 60,
            "resources": ["gpu"],
            "servers": [{"id": f"s{i}", "capacity": {"gpu": 8}} for i in range(4)],
            "network": {"spread_slowdown": 0.5},
        }
        cluster = cluster_from_dict(spec)
        return Instance(cluster, parse_trace("\n".join(rows) + "\n", cluster, "trace.csv", "csv"))


@dataclass(frozen=True)
class RestartCosted:
    """40 rigid jobs (1-16 GPUs, models big and small) on 4 x 8 GPUs with restart costs by model
    (big: 300 s) and GPUs (1 GPU: 0 s), and a job's own cost on about 30% of the jobs."""

    seed: int

    def build(self) -> Instance:
        rng = random.Random(self.seed)
        spec = {
            "slot_seconds": 60,
            "resources": ["gpu"],
            "servers": [{"id": f"s{i}", "capacity": {"gpu": 8}} for i in range(4)],
            "restart_costs": [{"model": "big", "seconds": 300}, {"gpus": 1, "seconds": 0}],
        }
        rows, t = ["job_id,arrival,gpus,duration,model,restart_seconds"], 0
        for i in range(40):
            t += rng.randrange(0, 4)
            own = str(rng.choice([60, 120, 600])) if rng.random() < 0.3 else ""
            gpus, slots, model = rng.randint(1, 16), rng.randint(1, 30), rng.choice(["big", "small"])
            rows.append(f"j{i},{t},{gpus},{60 * slots},{model},{own}")
        cluster = cluster_from_dict(spec)
        return Instance(cluster, parse_trace("\n".join(rows) + "\n", cluster))


PREEMPTING = [
    ("srtf", {}),
    ("tiresias", {"queue_thresholds": "600,3000"}),
    ("tiresias", {"order": "start", "queue_thresholds": "600,3000"}),
]


def costed(seed: int, algorithm: tuple[str, dict[str, str]]) -> Sim:
    """The cluster's restart time of 120 s beside the per-job costs."""
    return Sim(RestartCosted(seed), algorithm[0], tuple(sorted(algorithm[1].items())), 120.0)


def own_cost_features(outcome: Outcome) -> set[str]:
    # a restart charged a cost other than the cluster's 120 s (2 slots): a model's, a GPU count's or the job's own
    lengths = {r.end - r.start for r in outcome.run.restarts}
    return run_features(outcome) | ({"own cost"} if lengths - {2} else set())


def algorithms(other_placement: str) -> list[tuple[str, dict[str, str]]]:
    return [
        ("fifo", {}),
        ("fifo", {"backfill": "true"}),
        ("srtf", {}),
        ("srtf", {"placement": other_placement}),
        ("tiresias", {"order": "start", "queue_thresholds": "600,3000"}),
        ("tiresias", {"queue_thresholds": "600,3000"}),
        ("drf", {}),
    ]


GPU_TYPE_ALGORITHMS = algorithms("consolidated")
SPREAD_ALGORITHMS = algorithms("packed")


def validated(case: Sim) -> Outcome:
    """The change-based run; the same run through api.run passes the validator."""
    out = incremental_run(True)(case)
    doc = api.run(case.instance, case.algorithm, dict(case.params), restart_seconds=case.restart_seconds)
    assert validate(case.instance, doc) == []
    return out


def slower_features(outcome: Outcome) -> set[str]:
    # some job ran below one work unit per slot (on slower GPUs, or spread)
    return run_features(outcome) | ({"slower"} if any(p.rate < 1 for p in outcome.run.progress) else set())


def named(source: Any, cases: list[tuple[str, dict[str, str]]]) -> dict[str, Sim]:
    return {
        f"seed {seed}, {algorithm} {params or ''}, restart {restart:g} s": Sim(
            source(seed), algorithm, tuple(sorted(params.items())), restart
        )
        for seed in (1, 2)
        for algorithm, params in cases
        for restart in (0.0, 120.0)
    }


SEEDS = st.integers(0, 10**6)

TWINS = [
    Twin(
        "gpu-types",
        "change-based path vs decide_full on mixed GPU types with speed factors",
        sims(st.builds(GpuTyped, SEEDS), GPU_TYPE_ALGORITHMS),
        validated,
        incremental_run(False),
        SAME,
        examples=10,
        features=slower_features,
        must_see=frozenset({"queued", "suspended", "slower"}),
        named=named(GpuTyped, GPU_TYPE_ALGORITHMS),
    ),
    Twin(
        "spread-slowdown",
        "change-based path vs decide_full under network.spread_slowdown",
        sims(st.builds(Spread, SEEDS), SPREAD_ALGORITHMS),
        validated,
        incremental_run(False),
        SAME,
        examples=10,
        features=slower_features,
        must_see=frozenset({"queued", "suspended", "slower"}),
        named=named(Spread, SPREAD_ALGORITHMS),
    ),
    Twin(
        "restart-costs",
        "change-based path vs decide_full with restart costs by model, GPUs and job",
        st.builds(costed, SEEDS, st.sampled_from(PREEMPTING)),
        validated,
        incremental_run(False),
        SAME,
        examples=8,
        features=own_cost_features,
        must_see=frozenset({"suspended", "restarted", "own cost"}),
        named={f"seed {seed}, {a} {p or ''}": costed(seed, (a, p)) for seed in (1, 2) for a, p in PREEMPTING},
    ),
]
