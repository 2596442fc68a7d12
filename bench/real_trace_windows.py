"""Each paper's algorithm against its paper's baselines on 10 windows of the real Philly trace.

Every model runs the same command shape (`python -m scheduling compare --adapt MODEL --windows 10`)
on one import of the Philly trace and one rigid GPU cluster; the statistics are the ones `compare`
writes (DIR/MODEL/stats.csv, scheduling/stats.py). Prints the markdown tables of
docs/results-real-traces.md, with the exact commands run.

    nice -n 10 python bench/real_trace_windows.py --out /tmp/real-trace [--jobs 300] [--servers 16]

Window rule (fixed before measuring): the `--windows` x `--jobs` earliest Philly jobs submitted at or
after `--start` (import's --start/--limit), cut by `compare --windows K` into K consecutive windows of
equal job count in arrival order; window i is adapted with seed `--seed` + i.
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = next((p for p in (ROOT.parent / "shared" / "traces", Path("/work/shared/traces")) if p.exists()), ROOT)
PHILLY = SHARED / "philly" / "philly.csv"

# model -> (paper, algorithms (the paper's first), headline metric, history fraction)
MODELS: dict[str, tuple[str, list[str], str, float | None]] = {
    "zhou-ps": ("Zhou et al. (PS)", ["zhou", "fifo", "drf", "antman", "tiresias"], "total_weighted_completion", None),
    "zhou-allreduce": (
        "Zhou et al. (all-reduce)",
        ["zhou", "fifo", "drf", "antman", "tiresias"],
        "total_weighted_completion",
        None,
    ),
    "oasis": ("OASiS", ["oasis", "fifo", "drf", "rrh", "dorm"], "total_utility", None),
    "edge-cloud": ("Edge-cloud", ["edge-cloud", "srtf", "tiresias-l", "batchsche"], "total_jct", None),
    "asrpt": (
        "A-SRPT",
        ["asrpt", "spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime"],
        "total_jct",
        0.3,
    ),
}


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "scheduling", *args]


def show(cmd: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in ["python", *cmd[1:]])


def read_stats(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    with path.open(newline="") as f:
        return {(r["metric"], r["algorithm"]): r for r in csv.DictReader(f)}


def num(text: str | None, digits: int = 4) -> str:
    if text in (None, ""):
        return "-"
    x = float(text)
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def ci(row: dict[str, str], key: str) -> str:
    return f"{num(row[key])} [{num(row[key + '_ci_low'])}, {num(row[key + '_ci_high'])}]"


def verdict_of_reference(row: dict[str, str], ref: str) -> str:
    """compare's verdict is the row algorithm's against the reference; this is the reference's."""
    v = row["verdict"]
    v = {"better": f"**{ref} loses**", "worse": f"**{ref} wins**"}.get(v, v)
    return v + (f" ({row['note']})" if row["not_comparable"] not in ("", "0") else "")


def slots(d: Path) -> str:
    """The adapted slot lengths of the windows (adapt.json), e.g. '1 h' or '1-3 h'."""
    values = set()
    for a in sorted(d.glob("adapted/window-*/adapt.json")):
        doc = json.loads(a.read_text())
        values |= {x["value"] for x in doc["assumptions"] if x["name"] == "slot_seconds"}
    if not values:
        return "?"
    lo, hi = min(values), max(values)
    unit, div = ("h", 3600) if lo >= 3600 else ("s", 1)
    return f"{lo // div:g} {unit}" if lo == hi else f"{lo // div:g}-{hi // div:g} {unit}"


def table(model: str, stats: dict[tuple[str, str], dict[str, str]], frame: str) -> tuple[str, list[str]]:
    """The model's table, and its rows of the headline table (one per baseline)."""
    paper, algorithms, metric, _ = MODELS[model]
    ref = algorithms[0]
    lines = [
        f"`{model}` ({paper}); metric `{metric}`; frame: {frame}",
        "",
        f"| algorithm | completed, median [CI] | `{metric}` median [95% CI] | ratio to {ref} [95% CI] "
        f"| {ref} W/T/L (not comparable) | `{metric}_censored`: ratio [CI] | verdict for {ref} |",
        "|---|---|---|---|---|---|---|",
    ]
    censored = f"{metric}_censored" if (f"{metric}_censored", ref) in stats else None
    head: list[str] = []
    done_ref = ci(stats[("completed", ref)], "median")
    for algo in algorithms:
        done, row = stats[("completed", algo)], stats[(metric, algo)]
        crow = stats.get((censored, algo)) if censored else None
        if algo == ref:
            wtl, ratio, cratio, verdict = "(reference)", "1", "1" if crow else "-", ""
        else:
            # compare counts wins of the row's algorithm; the table shows the paper algorithm's
            wtl = f"{row['losses']}/{row['ties']}/{row['wins']} ({row['not_comparable'] or 0})"
            ratio = ci(row, "median_ratio") if row["median_ratio"] else "-"
            cratio = ci(crow, "median_ratio") if crow and crow["median_ratio"] else "-"
            verdict = verdict_of_reference(row, ref)
            head.append(
                f"| {model}: {ref} vs {algo} | `{metric}` | {done_ref} / {ci(done, 'median')} "
                f"| {ratio} | {wtl} | {verdict} |"
            )
        lines.append(
            f"| {algo} | {ci(done, 'median')} | {ci(row, 'median')} | {ratio} | {wtl} | {cratio} | {verdict} |"
        )
    return "\n".join(lines), head


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--windows", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=300, help="jobs per window")
    ap.add_argument("--start", default="2017-10-10")
    ap.add_argument("--servers", type=int, default=16, help="8-GPU servers of the rigid cluster")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--cluster", type=Path, help="a rigid GPU cluster spec (e.g. a node-list import) instead of --servers"
    )
    ap.add_argument("--timeout", type=float, help="seconds per compare; a compare that takes longer is reported")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--reuse", action="store_true", help="print the tables of compare runs already in --out")
    ap.add_argument("--param", action="append", default=[], help="ALGO.KEY=VALUE, passed to every compare")
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    cluster = out / "cluster.json"
    spec: dict[str, Any] = {
        "slot_seconds": 60,
        "resources": [{"name": "gpu", "unit": "GPU"}],
        "servers": [{"id": "node", "count": args.servers, "capacity": {"gpu": 8}}],
    }
    if args.cluster is not None:
        spec = json.loads(args.cluster.read_text())
    cluster.write_text(json.dumps(spec, indent=1) + "\n")
    gpus = sum(x["capacity"].get("gpu", 0) * x.get("count", 1) for x in spec["servers"])
    nodes = sum(x.get("count", 1) for x in spec["servers"])
    shape = f"{args.servers}x8 GPUs" if args.cluster is None else f"{args.cluster.name} ({nodes} servers, {gpus} GPUs)"
    trace = out / "philly.csv"
    n = args.windows * args.jobs
    what = json.dumps(spec) if args.cluster is None else f"a copy of {args.cluster}"
    cmds: list[str] = [f"# {cluster}: {what}"]
    imp = cli("import", "--format", "generic-gpu", "--input", str(PHILLY), "--out", str(trace))
    imp += ["--start", args.start, "--limit", str(n), "--slot-seconds", "60"]
    if not (args.reuse and trace.exists()):
        subprocess.run(imp, check=True, cwd=ROOT, capture_output=True)
    cmds.append(show(imp))
    frame = (
        f"{shape if args.cluster else shape + ' (one GPU model, taken as V100)'}, restart cost 0 s, input slot 60 s "
        f"(adapted slot: the model's rule), Philly jobs {n} earliest from {args.start}, "
        f"{args.windows} consecutive windows of {args.jobs} jobs, adapt seed {args.seed} + window"
    )
    if args.param:
        frame += ", " + ", ".join(f"`{p}`" for p in args.param)
    tables: list[str] = []
    headline: list[str] = []
    for model in args.models.split(","):
        _, algorithms, _, fraction = MODELS[model]
        d = out / model
        cmd = cli("compare", "--cluster", str(cluster), "--trace", str(trace), "--adapt", model)
        cmd += ["--windows", str(args.windows), "--seed", str(args.seed), "--algorithms", ",".join(algorithms)]
        if fraction is not None:
            cmd += ["--history-fraction", str(fraction)]
        for p in args.param:
            cmd += ["--param", p]
        cmd += ["--out", str(d)]
        cmds.append(show(cmd))
        t0 = _children_cpu()
        start = time.monotonic()
        log = out / f"{model}.log"
        if args.reuse and (d / "stats.csv").exists():
            proc = subprocess.CompletedProcess(cmd, 0, log.read_text() if log.exists() else "", "")
        else:
            try:
                proc = subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, text=True, timeout=args.timeout)
            except subprocess.TimeoutExpired as e:
                out_ = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                proc = subprocess.CompletedProcess(cmd, -1, out_, f"timed out after {args.timeout:g} s")
            log.write_text(proc.stdout + proc.stderr)
        wall = time.monotonic() - start
        cpu = _children_cpu() - t0
        head = f"### {model}\n\nwall {wall:.0f} s, CPU {cpu:.0f} s (children; 0 with --reuse)"
        if proc.returncode != 0:
            tables.append(
                f"{head}\n\n**failed** (exit {proc.returncode}): `{show(cmd)}`\n\n```\n{proc.stderr[-2000:]}\n```"
            )
            continue
        f = f" History: the leading {fraction} of each window's jobs (not evaluated)." if fraction else ""
        mframe = f"{frame}; adapted slot {slots(d)}.{f}"
        text, rows = table(model, read_stats(d / "stats.csv"), mframe)
        tables.append(f"{head}\n\n{text}")
        # elastic jobs take at most their recorded GPUs; fixed-size baselines follow worker_rule (default drawn)
        short = f"{shape}, workers: at most the recorded GPUs, baselines worker_rule, restart 0 s, slot {slots(d)}, "
        short += f"{args.windows} x {args.jobs} jobs"
        if fraction:
            short += f", history {fraction}"
        if args.param:
            short += ", " + ", ".join(args.param)
        headline += [r.replace("| `", f"| {short} | `", 1) for r in rows]
    print("## Commands\n\n```sh\n" + "\n".join(cmds) + "\n```\n")
    print("## Headline (ratio = baseline / paper algorithm, medians over windows)\n")
    print("| pair | frame | metric | completed (paper / baseline) | ratio [95% CI] | paper W/T/L (n.c.) | verdict |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(headline) + "\n")
    print("\n\n".join(tables))
    return 0


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


if __name__ == "__main__":
    raise SystemExit(main())
