"""A-SRPT at the paper's Fig. 6 scale: the asrpt preset with up to 150,000 jobs on 250 x 8 GPUs.

For each job count N the preset is drawn with N + H jobs (one seed, so the jobs recur in the same
groups); the H earliest arrivals are written as the history trace, the N later ones as the trace.
The predictor is fitted on the history only (no look-ahead: no simulated job is fitted on).

Two measurements per N:

* end to end: ``python -m scheduling simulate`` in a child process (load, prediction, simulation,
  result document, validation, writing the result): wall, CPU (user + system), peak RSS of the
  child, size of the result file (the 150,000-job trace is 65 MiB, its jobs carry up to 64
  stages; the CLI reads files of up to 256 MiB, docs/formats.md);
* the same run split into its phases (reading and parsing the trace and history without the size
  limit, predictor + profiles, engine, result document, validation, writing the result), in a
  child process of its own (wall, CPU and peak RSS of that process), with every Heavy-Edge
  placement timed: the scheduler's ``Gpus.select``
  (which servers give the GPUs, Alg. 1 lines 9/22) and ``mapping`` (Heavy-Edge and eq. (7), lines
  10-11/23) are wrapped here, in the bench, not in the package. A placement is one select plus
  one mapping call; a delayed communication-heavy job is placed again at every event it waits.

    PYTHONPATH=. nice .venv/bin/python bench/asrpt_scale.py --jobs 37500,150000 --history 5000
    PYTHONPATH=. .venv/bin/python bench/asrpt_scale.py --jobs 2000 --history 1000 --no-cli
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine_scale import GcPauses

from scheduling import presets, registry, results
from scheduling.algorithms.asrpt import cluster as asrpt_cluster
from scheduling.algorithms.asrpt import scheduler as asrpt_scheduler
from scheduling.engine import simulate
from scheduling.loaders import MAX_INPUT_BYTES, load_cluster, parse_trace
from scheduling.model import Instance
from scheduling.validator import validate

ROOT = Path(__file__).resolve().parent.parent


def write_instance(folder: Path, jobs: int, history: int, seed: int) -> tuple[Path, Path, Path]:
    """cluster.json, trace.json (the N latest jobs) and history.json (the H earliest) in ``folder``."""
    files = presets.build("asrpt", jobs=jobs + history, seed=seed)
    every = sorted(json.loads(files.trace), key=lambda j: (j["arrival"], j["job_id"]))
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / "cluster.json", folder / "trace.json", folder / "history.json"
    paths[0].write_text(files.cluster, encoding="utf-8")
    paths[1].write_text(json.dumps(every[history:]), encoding="utf-8")
    paths[2].write_text(json.dumps(every[:history]), encoding="utf-8")
    return paths


def end_to_end(paths: tuple[Path, Path, Path], algorithm: str, params: list[str], out: Path) -> dict[str, float]:
    """The CLI's simulate in a child process: wall, CPU and peak RSS (os.wait4), result size."""
    cmd = [sys.executable, "-m", "scheduling", "simulate", "--cluster", str(paths[0]), "--trace", str(paths[1])]
    cmd += ["--history", str(paths[2]), "--algorithm", algorithm, "--out", str(out)]
    for p in params:
        cmd += ["--param", p]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    err = child.stderr.read().decode() if child.stderr else ""
    if status != 0:
        raise SystemExit(f"simulate failed ({status}): {err[-2000:]}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
        "result_mib": out.stat().st_size / 2**20,
    }


class PlacementTimer:
    """Wraps ``Gpus.select`` and the scheduler's ``mapping`` for the duration of a run."""

    def __init__(self) -> None:
        self.select: list[float] = []
        self.mapping: list[float] = []
        self.placement: list[float] = []  # select + the mapping call that follows it
        self.gpus: list[int] = []
        self._last_select = 0.0
        self._orig_select: Callable[..., Any] = asrpt_cluster.Gpus.select
        self._orig_mapping: Callable[..., Any] = asrpt_scheduler.mapping
        self._orig_heavy_edge: Callable[..., Any] = asrpt_cluster.heavy_edge_fast
        self.new_shape: list[float] = []  # heavy_edge_fast calls: a graph on a free-GPU shape not seen before

    def __enter__(self) -> PlacementTimer:
        orig_select, orig_mapping = self._orig_select, self._orig_mapping

        def select(gpus: Any, n: int, how: str) -> Any:
            t0 = time.perf_counter()
            out = orig_select(gpus, n, how)
            self._last_select = time.perf_counter() - t0
            self.select.append(self._last_select)
            return out

        def mapping(p: Any, servers: Any, gpus: Any) -> Any:
            t0 = time.perf_counter()
            out = orig_mapping(p, servers, gpus)
            dt = time.perf_counter() - t0
            self.mapping.append(dt)
            self.placement.append(dt + self._last_select)
            self.gpus.append(p.gpus)
            return out

        orig_heavy_edge = self._orig_heavy_edge

        def heavy_edge_fast(graph: Any, servers: Any) -> Any:
            t0 = time.perf_counter()
            out = orig_heavy_edge(graph, servers)
            self.new_shape.append(time.perf_counter() - t0)
            return out

        asrpt_cluster.Gpus.select = select  # type: ignore[method-assign]
        asrpt_scheduler.mapping = mapping  # type: ignore[assignment]
        asrpt_cluster.heavy_edge_fast = heavy_edge_fast
        return self

    def __exit__(self, *exc: object) -> None:
        asrpt_cluster.Gpus.select = self._orig_select  # type: ignore[method-assign]
        asrpt_scheduler.mapping = self._orig_mapping  # type: ignore[assignment]
        asrpt_cluster.heavy_edge_fast = self._orig_heavy_edge


def quantiles_ms(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return f"{statistics.median(ordered) * 1e3:.3f} / {p99 * 1e3:.3f} / {ordered[-1] * 1e3:.2f}"


def in_process(
    paths: tuple[Path, Path, Path], algorithm: str, params: list[str], out: Path, freeze: bool = False
) -> dict[str, Any]:
    """The phases of ``simulate`` timed one by one, with the placements and the garbage collector's
    pauses (all generations, summed over the run) timed."""
    r: dict[str, Any] = {}
    pauses = GcPauses()
    gc.callbacks.append(pauses)
    t0 = time.perf_counter()
    cluster = load_cluster(paths[0])
    trace = parse_trace(paths[1].read_text(encoding="utf-8"), cluster, paths[1].name, "json")
    history = parse_trace(paths[2].read_text(encoding="utf-8"), cluster, paths[2].name, "json")
    instance = Instance(cluster, trace, history=history)
    r["load"] = time.perf_counter() - t0
    spec = registry.get(algorithm)
    parsed = spec.parse_params(dict(p.split("=", 1) for p in params))
    t0 = time.perf_counter()
    algo = spec.build(instance, parsed, 0)
    r["prepare"] = time.perf_counter() - t0
    if freeze:  # experiment: what a gc.freeze() in the caller after loading would save
        gc.freeze()
    with PlacementTimer() as timer:
        t0 = time.perf_counter()
        run = simulate(instance, algo)
        r["engine"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    doc = results.build(instance, run, algorithm, parsed, 0)
    r["document"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    problems = validate(instance, doc)
    r["validate"] = time.perf_counter() - t0
    if problems:
        raise SystemExit(f"invalid schedule: {problems[:3]}")
    t0 = time.perf_counter()
    results.write(doc, out)
    r["write"] = time.perf_counter() - t0
    gc.callbacks.remove(pauses)
    r["gc"], r["gc_max"] = pauses.seconds, pauses.longest
    usage = resource.getrusage(resource.RUSAGE_SELF)
    r["cpu"] = usage.ru_utime + usage.ru_stime
    r["rss_mib"] = usage.ru_maxrss / 1024
    r["result_mib"] = out.stat().st_size / 2**20
    r["total_jct"] = doc["metrics"].get("total_jct")
    r["completed"] = sum(1 for j in doc["jobs"] if j.get("completion") is not None)
    r["mae"] = doc.get("prediction", {}).get("mean_abs_error")
    r["placement"], r["mapping"], r["select"], r["gpus"] = timer.placement, timer.mapping, timer.select, timer.gpus
    r["new_shape"] = timer.new_shape
    return r


def phases_child(folder: Path, algorithm: str, params: list[str], freeze: bool) -> dict[str, Any]:
    """``in_process`` in a child process (its own CPU time and peak RSS)."""
    cmd = [sys.executable, __file__, "--child", str(folder), "--algorithm", algorithm] + (
        ["--gc-freeze"] if freeze else []
    )
    for p in params:
        cmd += ["--param", p]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    done = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"phases failed: {done.stderr[-2000:]}")
    r: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    r["wall"] = wall
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", default="37500,150000", help="job counts, comma-separated")
    ap.add_argument("--history", type=int, default=5000, help="history jobs (the earliest arrivals)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--algorithm", default="asrpt")
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--no-cli", action="store_true", help="skip the end-to-end child process")
    ap.add_argument("--no-phases", action="store_true", help="skip the timed phases and placements")
    ap.add_argument("--dir", type=Path, default=None, help="where to write the instances (default: a temp dir)")
    ap.add_argument("--gc-freeze", action="store_true", help="experiment: gc.freeze() after the predictor")
    ap.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--generate", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate is not None:
        write_instance(args.generate, int(args.jobs), args.history, args.seed)
        return
    if args.child is not None:
        paths = args.child / "cluster.json", args.child / "trace.json", args.child / "history.json"
        out = args.child / "result-phases.json"
        print(json.dumps(in_process(paths, args.algorithm, args.param, out, args.gc_freeze)))
        return
    base = args.dir or Path(tempfile.mkdtemp(prefix="asrpt_scale_"))
    print(f"machine load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    for n in (int(x) for x in args.jobs.split(",")):
        t0 = time.perf_counter()
        # In a child process: Linux charges a child's peak RSS from its parent's at fork, so the
        # parent stays small (it never holds a trace).
        folder = base / f"n{n}"
        cmd = [sys.executable, __file__, "--generate", str(folder), "--jobs", str(n)]
        cmd += ["--history", str(args.history), "--seed", str(args.seed)]
        subprocess.run(cmd, check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        paths = folder / "cluster.json", folder / "trace.json", folder / "history.json"
        took = time.perf_counter() - t0
        size = max(p.stat().st_size for p in paths[1:]) / 2**20
        print(f"\n## {n} jobs after {args.history} history jobs, seed {args.seed} ({took:.1f} s to generate)")
        if args.no_cli:
            pass
        elif size > MAX_INPUT_BYTES / 2**20:
            limit = MAX_INPUT_BYTES >> 20
            print(f"end to end (CLI simulate): not run, the trace is {size:.1f} MiB (CLI limit {limit} MiB)")
        else:
            e = end_to_end(paths, args.algorithm, args.param, base / f"n{n}" / "result.json")
            print(
                f"end to end (CLI simulate): wall {e['wall']:.1f} s, CPU {e['cpu']:.1f} s, "
                f"peak RSS {e['rss_mib']:.0f} MiB, result {e['result_mib']:.1f} MiB; "
                f"load after {os.getloadavg()[0]:.2f}"
            )
        if args.no_phases:
            continue
        r = phases_child(folder, args.algorithm, args.param, args.gc_freeze)
        total = sum(r[k] for k in ("load", "prepare", "engine", "document", "validate", "write"))
        print(
            f"phases (child process): wall {r['wall']:.1f} s (phases {total:.1f} s), CPU {r['cpu']:.1f} s, "
            f"peak RSS {r['rss_mib']:.0f} MiB, result {r['result_mib']:.1f} MiB; load after {os.getloadavg()[0]:.2f}"
        )
        print(
            f"  read + parse {r['load']:.1f} s, predictor + profiles {r['prepare']:.1f} s, "
            f"engine + scheduler {r['engine']:.1f} s, result document {r['document']:.1f} s, "
            f"validation {r['validate']:.1f} s, write {r['write']:.1f} s; garbage collector pauses "
            f"{r['gc']:.1f} s in all (longest {r['gc_max']:.2f} s)"
        )
        print(f"  total JCT {r['total_jct']}, completed {r['completed']}, predictor MAE {r['mae']:.0f}")
        multi = [t for t, g in zip(r["placement"], r["gpus"], strict=True) if g > 1]
        print(f"  placements: {len(r['placement'])} ({len(multi)} of multi-GPU jobs); median / p99 / max in ms:")
        print(f"    select + Heavy-Edge mapping: {quantiles_ms(r['placement'])}")
        print(f"    Heavy-Edge mapping only:     {quantiles_ms(r['mapping'])}")
        print(f"    select only:                 {quantiles_ms(r['select'])}")
        print(f"    multi-GPU jobs (select + mapping): {quantiles_ms(multi)}")
        shapes = r["new_shape"]
        mean = sum(shapes) / max(1, len(shapes)) * 1e3
        print(
            f"    Heavy-Edge on a new free-GPU shape: {len(shapes)} calls, mean {mean:.3f} ms, {quantiles_ms(shapes)}"
        )


if __name__ == "__main__":
    main()
