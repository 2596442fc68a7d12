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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scheduling.errors import InputError
from scheduling.model import Cluster, Instance, Job

if TYPE_CHECKING:
    from scheduling import repeat

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


@dataclass
class Files:
    """What ``adapt`` writes: the cluster spec, the evaluated and history rows, the record."""

    cluster: dict[str, Any]
    evaluated: list[dict[str, Any]]
    history: list[dict[str, Any]]
    record: dict[str, Any]

    def instance(self) -> Instance:
        """The adapted instance, loaded as ``simulate`` would load the written files."""
        from scheduling.adapt.common import dumps
        from scheduling.loaders import cluster_from_dict, parse_trace

        c = cluster_from_dict(self.cluster)
        history = parse_trace(dumps(self.history), c, "history.json", "json") if self.history else ()
        return Instance(c, parse_trace(dumps(self.evaluated), c, "trace.json", "json"), history=history)


def _check(model: str, history_fraction: float | None) -> None:
    if model not in MODELS:
        raise InputError(f"unknown model {model!r} (models: {', '.join(MODELS)})", field="--model")
    if history_fraction is not None and not (math.isfinite(history_fraction) and 0 < history_fraction < 1):
        raise InputError(f"{history_fraction!r} must be between 0 and 1 (exclusive)", field="--history-fraction")


def adapt_jobs(
    model: str,
    cluster: Cluster,
    jobs: Sequence[Job],
    seed: int,
    history_fraction: float | None,
    inputs: Mapping[str, str],
) -> Files:
    """``jobs`` (sorted by arrival, on ``cluster``) as ``model``; ``inputs`` names the input files."""
    from scheduling.adapt.common import gpu_servers, split

    _check(model, history_fraction)
    label = inputs.get("cluster", "cluster.json")
    gpu_servers(cluster, label)
    adapted = _adapter(model)(cluster, jobs, seed, label)
    n_history = 0 if history_fraction is None else math.floor(history_fraction * len(jobs))
    history, evaluated = split(adapted.jobs, {j.job_id for j in jobs[:n_history]})
    if not evaluated:
        refused = ", ".join(f"{r['job_id']}: {r['reason']}" for r in adapted.refused[:3])
        raise InputError(
            f"no job is left to evaluate ({len(history)} in the history, {len(adapted.refused)} refused"
            + (f": {refused}" if refused else "")
            + ")",
            file=inputs.get("trace"),
        )
    if cluster.restart_seconds:  # a cost real clusters pay, charged to every algorithm alike (DESIGN section 9)
        adapted.cluster["restart_seconds"] = cluster.restart_seconds
    if adapted.finish is not None:
        adapted.finish(adapted.cluster, evaluated)
    record = {
        "model": model,
        "paper": MODELS[model],
        "seed": seed,
        "input": {**inputs, "jobs": len(jobs)},
        "history_fraction": history_fraction,
        "jobs": {
            "input": len(jobs),
            "evaluated": len(evaluated),
            "history": len(history),
            "refused": len(adapted.refused),
            "changed": len(adapted.changed),
        },
        "assumptions": [{"name": a.name, "value": a.value, "source": a.source} for a in adapted.assumptions],
        "refused": adapted.refused,
        "changed": adapted.changed,
    }
    files = Files(adapted.cluster, evaluated, history, record)
    files.instance()  # the files must load together (an adapter bug is not the user's bad input)
    return files


def write_files(files: Files, out: Path) -> list[Path]:
    from scheduling.adapt.common import write

    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", file=str(out), field="--out")
    slot = files.cluster["slot_seconds"]
    for name in ("trace.csv", "history.csv"):  # another format's files from an earlier run would be read first
        (out / name).unlink(missing_ok=True)
    written = [write(out, "cluster.json", files.cluster)]
    written.append(write(out, "trace.json", {"slot_seconds": slot, "jobs": files.evaluated}))
    stale = out / "history.json"
    if files.history:
        written.append(write(out, "history.json", {"slot_seconds": slot, "jobs": files.history}))
    elif stale.exists():  # a history from an earlier run into the same folder would be taken for this one's
        stale.unlink()
    written.append(write(out, "adapt.json", files.record))
    return written


def run(
    model: str, cluster_path: Path, trace_path: Path, out: Path, seed: int = 0, history_fraction: float | None = None
) -> list[Path]:
    """Adapt the instance and write the files; return their paths (InputError on bad input)."""
    from scheduling.adapt.common import gpu_servers
    from scheduling.loaders import load_cluster, load_trace

    _check(model, history_fraction)
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", file=str(out), field="--out")
    cluster = load_cluster(cluster_path)
    gpu_servers(cluster, str(cluster_path))  # a GPU cluster, checked before the trace is read against it
    jobs = load_trace(trace_path, cluster)
    inputs = {"cluster": str(cluster_path), "trace": str(trace_path)}
    return write_files(adapt_jobs(model, cluster, jobs, seed, history_fraction, inputs), out)


def compare_instance(args: argparse.Namespace) -> Instance:
    """``compare --adapt M``: the one adapted instance every algorithm of the comparison runs, written
    to ``DIR/adapted/`` (its adapt.json lists the assumptions) and loaded with its history. With
    ``--windows``: the rigid instance, whose windows ``window_cases`` adapts one by one."""
    from scheduling import api

    for flag, given in (("--history", args.history), ("--convert-slots", args.convert_slots)):
        if given:
            raise InputError("not with --adapt (the history comes from --history-fraction)", field=flag)
    if args.adapt not in MODELS:
        raise InputError(f"unknown model {args.adapt!r} (models: {', '.join(MODELS)})", field="--adapt")
    _check(args.adapt, args.history_fraction)
    if args.windows is not None:
        return api.load_instance(args.cluster, args.trace)
    folder = args.out / "adapted"
    run(args.adapt, args.cluster, args.trace, folder, args.seed, args.history_fraction)
    history = folder / "history.json"
    return api.load_instance(folder / "cluster.json", folder / "trace.json", history if history.exists() else None)


def window_cases(args: argparse.Namespace, rigid: Instance, seeds: Sequence[int]) -> list[repeat.Case]:
    """``compare --adapt M --windows ...``: the windows of the rigid trace (``repeat.window_cases``),
    each adapted on its own with seed ``--seed`` + its index (re-seeded per window; the leading
    ``--history-fraction`` of the window's jobs is its history), written to ``DIR/adapted/window-I/``."""
    import dataclasses

    from scheduling import repeat

    cases = repeat.window_cases(rigid, repeat.parse_windows(args.windows), seeds)
    adapted: dict[str, Instance] = {}
    out = []
    for case in cases:
        assert case.window is not None
        if case.window not in adapted:
            i = len(adapted)
            inputs = {"cluster": str(args.cluster), "trace": str(args.trace), "window": case.window}
            files = adapt_jobs(
                args.adapt, rigid.cluster, case.instance.jobs, args.seed + i, args.history_fraction, inputs
            )
            write_files(files, args.out / "adapted" / f"window-{i}")
            adapted[case.window] = files.instance()
        out.append(dataclasses.replace(case, instance=adapted[case.window]))
    return out


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
