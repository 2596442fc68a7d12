"""Golden schedules: every registered algorithm on a few seeded small instances, fingerprinted.

The fingerprints are kept one file per algorithm, ``tests/fixtures/golden/<algorithm>.json``
(a variant such as "drf fixed=false" lives in its algorithm's file); ``tests/test_golden.py``
re-runs every case and compares. A fingerprint keeps, per job, (start, completion, preemptions),
and a SHA-256 of the sorted placement and progress segments, so any change of schedule shows up.

``python -m tests.golden.make_golden`` (from the project root) records only the cases not recorded
yet (a new algorithm, a new instance) and leaves every recorded file byte for byte as it is.
``--rerecord NAME [NAME ...]`` records the named algorithms' cases again (their files only): do it
only after a deliberate, documented change of that algorithm's semantics. ``--split GOLDEN_JSON``
moves the cases of one file of every case (the former ``golden.json``, e.g. a branch's) into the
algorithms' files, unchanged.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scheduling import api, presets, registry
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance

GOLDEN = Path(__file__).resolve().parent.parent / "fixtures" / "golden"  # one <algorithm>.json each
RECORD = "python -m tests.golden.make_golden"

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


# Algorithms that refuse an instance without a history by default, with the parameters that keep
# their behaviour from before the refusal (asrpt: predict 0 iterations for every job); the golden
# instances have no history, so these runs are recorded under the parameters.
WITHOUT_HISTORY: dict[str, dict[str, str]] = {"asrpt": {"no_history": "zero"}}


def cases() -> Iterator[tuple[str, str, Instance]]:
    """(instance name, run, instance) for every algorithm that supports the instance, and every
    variant; a run is an algorithm name, or a name with its parameters ("drf fixed=false")."""
    for inst_name, inst in instances():
        for algo, spec in sorted(registry.all_specs(plugins=False).items()):
            if spec.unsupported(inst) is None:
                extra = WITHOUT_HISTORY.get(algo, {}) if not inst.history else {}
                yield inst_name, " ".join([algo, *(f"{k}={v}" for k, v in extra.items())]), inst
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


def algorithm_of(case: str) -> str:
    """The algorithm of a case "instance/run" ("demo-12-s1/drf fixed=false" -> "drf")."""
    return case.partition("/")[2].split()[0]


def path_of(algorithm: str, folder: Path = GOLDEN) -> Path:
    return folder / f"{algorithm}.json"


def load(folder: Path = GOLDEN) -> dict[str, Any]:
    """Every recorded case, from every algorithm's file."""
    recorded: dict[str, Any] = {}
    for path in sorted(folder.glob("*.json")):
        recorded.update(json.loads(path.read_text(encoding="utf-8")))
    return recorded


def dump(cases: dict[str, Any]) -> str:
    return json.dumps(cases, indent=1, sort_keys=True) + "\n"


def not_recorded(case: str) -> str:
    """What tests/test_golden.py says of a case that has no fingerprint yet."""
    return f"{case}: not recorded yet; record it with `{RECORD}` (records only the missing cases)"


def record(folder: Path = GOLDEN, rerecord: Iterable[str] = ()) -> list[Path]:
    """Fingerprint the cases not recorded yet, and every case of the algorithms in ``rerecord``;
    write only the files of the algorithms that gained or changed a case. Returns those files."""
    again = set(rerecord)
    unknown = again - set(registry.all_specs(plugins=False))
    if unknown:
        raise SystemExit(f"not a registered algorithm: {', '.join(sorted(unknown))}")
    files: dict[str, dict[str, Any]] = {}
    for inst_name, run, inst in cases():
        case, algorithm = f"{inst_name}/{run}", run.split()[0]
        if algorithm not in files:
            path = path_of(algorithm, folder)
            kept = json.loads(path.read_text(encoding="utf-8")) if path.exists() and algorithm not in again else {}
            files[algorithm] = kept
        if case not in files[algorithm]:
            files[algorithm][case] = run_case(run, inst)
    written = []
    folder.mkdir(parents=True, exist_ok=True)
    for algorithm, recorded in files.items():
        path, text = path_of(algorithm, folder), dump(recorded)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def split(single: Path, folder: Path = GOLDEN) -> list[Path]:
    """Move the fingerprints of one file of every case (the former golden.json) into the
    algorithms' files, unchanged; returns the files written."""
    by_algorithm: dict[str, dict[str, Any]] = {}
    for case, recorded in json.loads(single.read_text(encoding="utf-8")).items():
        by_algorithm.setdefault(algorithm_of(case), {})[case] = recorded
    folder.mkdir(parents=True, exist_ok=True)
    for algorithm, recorded in by_algorithm.items():
        path_of(algorithm, folder).write_text(dump(recorded), encoding="utf-8")
    return [path_of(algorithm, folder) for algorithm in by_algorithm]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=RECORD, description="Record the golden cases not recorded yet.")
    parser.add_argument(
        "--rerecord", nargs="+", default=(), metavar="NAME", help="record these algorithms' cases again"
    )
    parser.add_argument(
        "--split", type=Path, metavar="GOLDEN_JSON", help="move the cases of one file (the former golden.json) here"
    )
    args = parser.parse_args(argv)
    if args.split is not None:
        for path in split(args.split):
            print(f"wrote {path}")
        return
    written = record(GOLDEN, args.rerecord)
    for path in written:
        print(f"wrote {path}")
    print(f"{len(written)} files written, the others untouched")


if __name__ == "__main__":
    main()
