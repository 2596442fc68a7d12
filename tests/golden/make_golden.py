"""Golden schedules: every registered algorithm on a few seeded small instances, fingerprinted.

``python -m tests.golden.make_golden`` (from the project root) rewrites
``tests/fixtures/golden/golden.json``; ``tests/test_golden.py`` re-runs the same cases and compares.
A fingerprint keeps, per job, (start, completion, preemptions), and a SHA-256 of the sorted
placement and progress segments, so any change of schedule shows up. Regenerate only after a
deliberate, documented change of an algorithm's semantics.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from scheduling import api, presets, registry
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance

GOLDEN = Path(__file__).resolve().parent.parent / "fixtures" / "golden" / "golden.json"

# (preset, jobs, seed, size): small enough that every algorithm runs in well under a second.
PRESET_CASES = (
    ("demo", 12, 1, 1.0),
    ("zhou-ps", 10, 2, 1.0),
    ("zhou-allreduce", 10, 3, 1.0),
    ("zhou-batch", 8, 4, 1.0),
    ("oasis", 16, 5, 0.2),
    ("oasis", 5, 8, 0.05),
    ("edge-cloud", 16, 6, 0.1),
    ("asrpt", 20, 7, 0.04),
)

RIGID_CLUSTER = {
    "slot_seconds": 60,
    "resources": ["gpu"],
    "servers": [{"id": "m", "count": 4, "capacity": {"gpu": 8}}],
}


def rigid_trace(seed: int, n: int) -> str:
    """A random rigid trace: Poisson-like arrivals, 1-16 GPUs, durations of 1-40 slots."""
    rng = np.random.default_rng(seed)
    rows = ["job_id,arrival,gpus,duration,group"]
    t = 0
    for i in range(n):
        t += int(rng.integers(0, 4))
        gpus = int(rng.choice([1, 1, 2, 4, 8, 16]))
        rows.append(f"r{i},{t},{gpus},{60 * int(rng.integers(1, 41))},g{int(rng.integers(0, 3))}")
    return "\n".join(rows) + "\n"


def instances() -> Iterator[tuple[str, Instance]]:
    for name, jobs, seed, size in PRESET_CASES:
        files = presets.build(name, jobs, seed, size)
        cluster = cluster_from_dict(json.loads(files.cluster))
        fmt = files.trace_name.rsplit(".", 1)[1]
        yield f"{name}-{jobs}-s{seed}", Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, fmt))
    cluster = cluster_from_dict(RIGID_CLUSTER)
    for seed in (11, 12):
        yield f"rigid-40-s{seed}", Instance(cluster, parse_trace(rigid_trace(seed, 40), cluster, "trace.csv", "csv"))


def fingerprint(doc: dict[str, Any]) -> dict[str, Any]:
    segments = {
        "placements": sorted(
            (p["job_id"], p["server"], p["role"], p["type"], p["count"], p["start"], p["end"])
            for p in doc["placements"]
        ),
        "progress": sorted((p["job_id"], p["start"], p["end"], repr(p["rate"])) for p in doc["progress"]),
    }
    digest = hashlib.sha256(json.dumps(segments, separators=(",", ":")).encode()).hexdigest()
    return {
        "jobs": {j["job_id"]: [j["start"], j["completion"], j["preemptions"]] for j in doc["jobs"]},
        "segments_sha256": digest,
    }


# Parameter sets beside the defaults whose code paths the defaults do not reach, run wherever the
# algorithm supports the instance: "drf fixed=false" re-divides every elastic job's workers at every
# event (Drf._elastic from nothing), recorded before that path's own speed-up; "srtf ties=arrival"
# is srtf's tie rule before `ties=previous` became the default (its fingerprints are those srtf had
# then; the default's changed on rigid-40-s12 only, docs/algorithms.md).
VARIANTS: tuple[tuple[str, dict[str, str]], ...] = (("drf", {"fixed": "false"}), ("srtf", {"ties": "arrival"}))


def cases() -> Iterator[tuple[str, str, Instance]]:
    """(instance name, run, instance) for every algorithm that supports the instance, and every
    variant; a run is an algorithm name, or a name with its parameters ("drf fixed=false")."""
    for inst_name, inst in instances():
        for algo, spec in sorted(registry.all_specs().items()):
            if spec.unsupported(inst) is None:
                yield inst_name, algo, inst
        for algo, params in VARIANTS:
            if registry.get(algo).unsupported(inst) is None:
                yield inst_name, " ".join([algo, *(f"{k}={v}" for k, v in params.items())]), inst


def old_frame(algo: str, inst: Instance, params: dict[str, str]) -> dict[str, str]:
    """The worker rule the fixed-size baselines had when the fingerprints were recorded, stated
    explicitly: on a trace with GPU requests (the edge-cloud preset) the requests (batchsche:
    min(D_j, workers_max), worker_rule=most); elsewhere the drawn counts, today's default. The
    restart cost stays the cluster's (0 in every instance here: run_case passes 0)."""
    spec = registry.get(algo)
    if "worker_rule" in params or not any(p.name == "worker_rule" for p in spec.params):
        return params
    if not any(j.gpu_request is not None for j in inst.jobs):
        return params
    return {**params, "worker_rule": "most" if algo == "batchsche" else "request"}


def run_case(run: str, inst: Instance) -> dict[str, Any]:
    algo, *pairs = run.split()
    params = old_frame(algo, inst, dict(pair.split("=", 1) for pair in pairs))
    return fingerprint(api.run(inst, algo, params, seed=3, restart_seconds=0))


def main() -> None:
    out: dict[str, Any] = {}
    for inst_name, run, inst in cases():
        out[f"{inst_name}/{run}"] = run_case(run, inst)
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(out)} fingerprints -> {GOLDEN}")


if __name__ == "__main__":
    main()
