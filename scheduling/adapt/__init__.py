"""``python -m scheduling adapt``: a rigid GPU instance as one paper's model (DESIGN section 4).

``adapt --model M --cluster C --trace T [--seed S] [--history-fraction F] --out DIR`` writes
``DIR/cluster.json``, ``DIR/trace.json``, ``DIR/history.json`` (with F: the leading fraction F of
the trace's jobs by arrival; the evaluated jobs are the others) and ``DIR/adapt.json`` (every
assumption with its value and source, and every job refused or changed). The mapping of each
model, field by field, is in docs/formats.md ("Adapting a rigid trace to a paper's model").
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from scheduling.errors import InputError
from scheduling.model import Cluster, Instance, Job

MODELS: dict[str, str] = {
    "zhou-ps": "Zhou et al. (TCC'23) Sec. 7, parameter-server jobs on typed workers and PSs",
    "zhou-allreduce": "Zhou et al. (TCC'23) Sec. 7, Ring-AllReduce jobs on typed workers",
    "oasis": "OASiS (INFOCOM'18) Sec. V-A: worker and PS server pools, horizon T, sigmoid utilities",
    "edge-cloud": "the edge-cloud paper Sec. V-A: edge servers with pre-deployed workers, an unlimited cloud",
    "asrpt": "A-SRPT Sec. V-A-1-b: Philly jobs as stage graphs of Table I models (algorithms/asrpt/philly.py)",
}

Adapter = Callable[[Cluster, Sequence[Job], int, str], Any]


def _adapter(model: str) -> Adapter:
    if model in ("zhou-ps", "zhou-allreduce"):
        from scheduling.adapt import zhou

        arch = "ps" if model == "zhou-ps" else "allreduce"
        return lambda c, j, s, label: zhou.adapt(c, j, s, label, arch)
    if model == "oasis":
        from scheduling.adapt import oasis

        return oasis.adapt
    if model == "edge-cloud":
        from scheduling.adapt import edge

        return edge.adapt
    from scheduling.adapt import asrpt

    return asrpt.adapt


def run(
    model: str, cluster_path: Path, trace_path: Path, out: Path, seed: int = 0, history_fraction: float | None = None
) -> list[Path]:
    """Adapt the instance and write the files; return their paths (InputError on bad input)."""
    from scheduling.adapt.common import gpu_servers, split, write
    from scheduling.loaders import load_cluster, load_trace

    if model not in MODELS:
        raise InputError(f"unknown model {model!r} (models: {', '.join(MODELS)})", field="--model")
    if history_fraction is not None and not (math.isfinite(history_fraction) and 0 < history_fraction < 1):
        raise InputError(f"{history_fraction!r} must be between 0 and 1 (exclusive)", field="--history-fraction")
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", file=str(out), field="--out")
    cluster = load_cluster(cluster_path)
    gpu_servers(cluster, str(cluster_path))  # a GPU cluster, checked before the trace is read against it
    instance = Instance(cluster, load_trace(trace_path, cluster))
    adapted = _adapter(model)(instance.cluster, instance.jobs, seed, str(cluster_path))
    n_history = 0 if history_fraction is None else math.floor(history_fraction * len(instance.jobs))
    history, evaluated = split(adapted.jobs, {j.job_id for j in instance.jobs[:n_history]})
    if not evaluated:
        refused = ", ".join(f"{r['job_id']}: {r['reason']}" for r in adapted.refused[:3])
        raise InputError(
            f"no job is left to evaluate ({len(history)} in the history, {len(adapted.refused)} refused"
            + (f": {refused}" if refused else "")
            + ")",
            file=str(trace_path),
        )
    if cluster.restart_seconds:  # a cost real clusters pay, charged to every algorithm alike (DESIGN section 9)
        adapted.cluster["restart_seconds"] = cluster.restart_seconds
    if adapted.finish is not None:
        adapted.finish(adapted.cluster, evaluated)
    _check_loads(adapted.cluster, evaluated, history)
    slot = adapted.cluster["slot_seconds"]
    record = {
        "model": model,
        "paper": MODELS[model],
        "seed": seed,
        "input": {"cluster": str(cluster_path), "trace": str(trace_path), "jobs": len(instance.jobs)},
        "history_fraction": history_fraction,
        "jobs": {
            "input": len(instance.jobs),
            "evaluated": len(evaluated),
            "history": len(history),
            "refused": len(adapted.refused),
            "changed": len(adapted.changed),
        },
        "assumptions": [{"name": a.name, "value": a.value, "source": a.source} for a in adapted.assumptions],
        "refused": adapted.refused,
        "changed": adapted.changed,
    }
    written = [write(out, "cluster.json", adapted.cluster)]
    written.append(write(out, "trace.json", {"slot_seconds": slot, "jobs": evaluated}))
    stale = out / "history.json"
    if history:
        written.append(write(out, "history.json", {"slot_seconds": slot, "jobs": history}))
    elif stale.exists():  # a history from an earlier run into the same folder would be taken for this one's
        stale.unlink()
    written.append(write(out, "adapt.json", record))
    return written


def _check_loads(cluster: dict[str, Any], evaluated: list[dict[str, Any]], history: list[dict[str, Any]]) -> None:
    """The files to be written must load together (an adapter bug is not the user's bad input)."""
    from scheduling.adapt.common import dumps
    from scheduling.loaders import cluster_from_dict, parse_trace

    c = cluster_from_dict(cluster)
    for name, rows in (("trace.json", evaluated), ("history.json", history)):
        if rows:
            parse_trace(dumps(rows), c, name, "json")


def compare_instance(args: argparse.Namespace) -> Instance:
    """``compare --adapt M``: the one adapted instance every algorithm of the comparison runs, written
    to ``DIR/adapted/`` (its adapt.json lists the assumptions) and loaded with its history."""
    from scheduling import api

    for flag, given in (
        ("--history", args.history),
        ("--windows", args.windows),
        ("--convert-slots", args.convert_slots),
    ):
        if given:
            raise InputError(
                "not with --adapt (the history comes from --history-fraction; windows are not re-adapted yet)",
                field=flag,
            )
    if args.adapt not in MODELS:
        raise InputError(f"unknown model {args.adapt!r} (models: {', '.join(MODELS)})", field="--adapt")
    folder = args.out / "adapted"
    run(args.adapt, args.cluster, args.trace, folder, args.seed, args.history_fraction)
    history = folder / "history.json"
    return api.load_instance(folder / "cluster.json", folder / "trace.json", history if history.exists() else None)


def declare(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, choices=list(MODELS))
    p.add_argument("--cluster", required=True, type=Path, help="a rigid GPU cluster spec (servers with gpu)")
    p.add_argument("--trace", required=True, type=Path, help="a rigid trace (gpus, duration), e.g. import's output")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--history-fraction",
        type=float,
        default=None,
        metavar="F",
        help="write the leading fraction F of the jobs (by arrival) as DIR/history.json; the rest is evaluated",
    )
    p.add_argument("--out", required=True, type=Path)
    p.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    import sys

    if args.seed < 0:
        raise InputError(f"{args.seed} must be >= 0", field="--seed")
    written = run(args.model, args.cluster, args.trace, args.out, args.seed, args.history_fraction)
    for path in written:
        print(path)
    if args.model == "asrpt" and args.history_fraction is None:
        print(
            "note: no --history-fraction: asrpt's fitted predictors have no history and refuse the instance "
            "(give --history-fraction F, or --param predictor=perfect)",
            file=sys.stderr,
        )
    return 0
