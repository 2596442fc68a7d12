"""Zhou et al. Sec. 7.1 (2), Fig. 7: run time of `zhou` at the paper's scale -- H servers of EC2
P3/P2/G3 shapes, 8 worker types, 10 PS types, arrivals over T slots -- for several job counts, with
the numpy path and (where affordable) the transcription side by side, and peak RSS.

    PYTHONPATH=. .venv/bin/python bench/zhou_scale.py --jobs 100,200,300 --servers 150 --T 300
    PYTHONPATH=. .venv/bin/python bench/zhou_scale.py --jobs 8 --servers 12 --T 60 --transcription
    PYTHONPATH=. .venv/bin/python bench/zhou_scale.py --jobs 100 --against f3122a6

``--against COMMIT`` also runs the numpy path as it was at COMMIT on the same instance and compares
SHA-256 digests of the whole result documents (placements, price log, ``zhou`` report, metrics; not
``params``). The commit's ``scheduling/algorithms/zhou/`` is extracted with ``git archive`` into a
temporary folder and its ``fast`` loaded from there beside the current one, under the name
``zhou_fast_<COMMIT>``: the single module ``fast.py`` of older commits, or the package ``fast/``
(whose modules import each other relatively, so they come from the same folder). Either way its
other imports (``mincost``, ``duals``, ``spec``) are the current ones, and it is swapped into
``online.fast`` for its run.
"""

from __future__ import annotations

import argparse
import atexit
import dataclasses
import hashlib
import importlib.util
import io
import json
import pathlib
import re
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from types import ModuleType

import numpy as np

from scheduling import api, presets
from scheduling.algorithms.zhou import online
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance


def instance(jobs: int, servers: int, horizon: int, seed: int, arch: str) -> Instance:
    files = presets.build(f"zhou-{arch}", jobs=jobs, seed=seed)
    spec = json.loads(files.cluster)
    rng = np.random.default_rng(seed)
    shapes = presets.EC2_GPU_SERVERS
    spec["servers"] = [
        {"id": f"{name}-{i:03d}", "capacity": {"gpu": g, "cpu": c, "bw": bw}}
        for i, (name, g, c, bw) in enumerate(
            [shapes[5]] + [shapes[int(k)] for k in rng.integers(len(shapes), size=servers - 1)]
        )
    ]
    cluster = cluster_from_dict(spec)
    scale = horizon / presets.ZHOU_T  # the preset's arrivals span ZHOU_T slots
    jobs_ = [
        dataclasses.replace(j, arrival=int(j.arrival * scale))
        for j in parse_trace(files.trace, cluster, files.trace_name)
    ]
    return Instance(cluster, tuple(sorted(jobs_, key=lambda j: (j.arrival, j.job_id))))


CALLS: list[tuple[float, int]] = []  # (seconds, jobs) of every A_maxweight call
_maxweight = online.Zhou.a_maxweight


def _timed(self: online.Zhou, jobs: list, *args: object) -> object:  # type: ignore[type-arg]
    t0 = time.perf_counter()
    out = _maxweight(self, jobs, *args)  # type: ignore[arg-type]
    CALLS.append((time.perf_counter() - t0, len(jobs)))
    return out


online.Zhou.a_maxweight = _timed  # type: ignore[method-assign,assignment]


def old_fast(commit: str) -> ModuleType:
    """The numpy path (``scheduling/algorithms/zhou/fast.py`` or ``fast/``) as it was at ``commit``,
    as a separate module or package (see the module docstring)."""
    tar = subprocess.run(
        ["git", "archive", "--format=tar", commit, "scheduling/algorithms/zhou/"], check=True, capture_output=True
    ).stdout
    root = tempfile.mkdtemp(prefix="zhou_fast_")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(root, filter="data")
    zhou = pathlib.Path(root, "scheduling", "algorithms", "zhou")
    name = "zhou_fast_" + re.sub(r"\W", "_", commit)
    package = zhou / "fast" / "__init__.py"
    if package.is_file():  # after the split: its modules load as name.tables, name.workers, ...
        spec = importlib.util.spec_from_file_location(name, package, submodule_search_locations=[str(package.parent)])
    else:
        spec = importlib.util.spec_from_file_location(name, zhou / "fast.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def digest(doc: dict) -> str:  # type: ignore[type-arg]
    """SHA-256 of the whole result document (placements, prices, report, metrics) but its
    ``params`` (which differ between the numpy path and the transcription: ``fast``)."""
    rest = {k: v for k, v in doc.items() if k != "params"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True).encode()).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default="100,200,300")
    ap.add_argument("--servers", type=int, default=150)
    ap.add_argument("--T", type=int, default=300)
    ap.add_argument("--arch", default="ps")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--transcription", action="store_true", help="also run fast=false and compare")
    ap.add_argument("--against", default="", help="also run the numpy path of this git commit and compare")
    args = ap.parse_args()
    current = online.fast
    reference = old_fast(args.against) if args.against else None
    print(
        "| jobs | servers | path | wall (s) | A_maxweight calls | per call mean / max (s) | jobs in the "
        "largest call | sum w_j c_j | peak RSS (MiB) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.jobs.split(",")):
        inst = instance(n, args.servers, args.T, args.seed, args.arch)
        paths = [("numpy", True, current)] + ([("transcription", False, current)] if args.transcription else [])
        if reference is not None:
            paths.append((f"numpy@{args.against}", True, reference))
        docs = []
        for label, fast, module in paths:
            online.fast = module  # type: ignore[attr-defined]
            CALLS.clear()
            t0 = time.perf_counter()
            doc = api.run(inst, "zhou", {"fast": fast})
            wall = time.perf_counter() - t0
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            docs.append(doc)
            wc = doc["metrics"]["total_weighted_completion"]
            secs = [c[0] for c in CALLS]
            big = max(CALLS, default=(0.0, 0))
            print(
                f"| {n} | {args.servers} | {label} | {wall:.1f} | {len(CALLS)} | "
                f"{sum(secs) / max(1, len(secs)):.2f} / {max(secs, default=0):.2f} | {big[1]} | {wc:.4g} | {rss:.0f} |",
                flush=True,
            )
        online.fast = current  # type: ignore[attr-defined]
        for (label, _, _), doc in zip(paths, docs, strict=True):
            print(f"\n{n} jobs, {label}: sha256 {digest(doc)}")
        for (label, _, _), doc in zip(paths[1:], docs[1:], strict=True):
            same = docs[0]["placements"] == doc["placements"]
            print(f"same placements (numpy vs {label}): {same}; same document: {digest(doc) == digest(docs[0])}\n")


if __name__ == "__main__":
    main()
