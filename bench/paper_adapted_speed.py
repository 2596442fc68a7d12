"""The paper algorithms on adapted real-trace windows: CPU time and peak RSS of one ``simulate`` per
(model, algorithm, jobs), each result checked by ``check``.

    .venv/bin/python bench/paper_adapted_speed.py --jobs 2000,10000 [--timeout 900]

For each size N: the first N Philly jobs from 2017-10-10 (``import --format generic-gpu --start
2017-10-10 --limit N --slot-seconds 60``) on N / 125 servers of 8 GPUs (16 x 8 for 2,000 jobs),
adapted by ``adapt --model M --seed 0`` (asrpt with ``--history-fraction 0.2``: the leading fifth
of the window is its history), then one fresh ``python -m scheduling simulate`` process per paper
algorithm (and dorm beside oasis). CPU time (user + system) and peak RSS come from the child's own
rusage (``os.wait4``), so other work on the machine does not count. A run over ``--timeout`` seconds
of wall time is stopped and reported as such. Prints a Markdown table; record it in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paper_speed import measured

HERE = Path(__file__).resolve().parent.parent
PHILLY = HERE.parent / "shared" / "traces" / "philly" / "philly.csv"
RUNS = {  # model -> the algorithms measured on its adapted instance
    "zhou-ps": ("zhou",),
    "zhou-allreduce": ("zhou",),
    "oasis": ("oasis", "dorm"),
    "edge-cloud": ("edge-cloud",),
    "asrpt": ("asrpt",),
}


def cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "scheduling", *args], check=True, cwd=HERE, capture_output=True)


def simulate(d: Path, algorithm: str, timeout: float) -> dict[str, object]:
    trace = next(p for p in d.iterdir() if p.name.startswith("trace."))
    history = [p for p in d.iterdir() if p.name.startswith("history.")]
    out = d / f"{algorithm}.json"
    cmd = [sys.executable, "-m", "scheduling", "simulate", "--cluster", str(d / "cluster.json"), "--trace", str(trace)]
    cmd += [*(["--history", str(history[0])] if history else []), "--algorithm", algorithm, "--out", str(out)]
    code, cpu, rss, wall = measured(cmd, HERE, timeout, subprocess.DEVNULL)
    if code != 0 and wall > timeout:
        return {"status": f"stopped after {timeout:.0f} s wall"}
    if code != 0:
        return {"status": f"exit {code}", "cpu": cpu, "rss": rss}
    files = ["--cluster", str(d / "cluster.json"), "--trace", str(trace), "--result", str(out)]
    cmd = [sys.executable, "-m", "scheduling", "check", *files]
    check = subprocess.run(cmd, cwd=HERE, capture_output=True, check=False)
    metrics = json.loads(out.read_text())["metrics"]
    valid = "valid" if check.returncode == 0 else "INVALID"
    return {"status": valid, "cpu": cpu, "rss": rss, "done": f"{metrics['completed']}/{metrics['jobs']}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", default="2000,10000", help="window sizes, comma separated")
    ap.add_argument("--timeout", type=float, default=900.0, help="wall seconds per simulate")
    ap.add_argument("--models", default=",".join(RUNS), help="models, comma separated")
    a = ap.parse_args()
    print("| model | algorithm | jobs (evaluated) | servers | CPU s | peak RSS MiB | completed | check |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        w = Path(tmp)
        for n in (int(x) for x in a.jobs.split(",")):
            servers = max(16, n // 125)
            trace, cluster = w / f"philly{n}.csv", w / f"rigid{n}.json"
            window = ["--start", "2017-10-10", "--limit", str(n), "--slot-seconds", "60"]
            cli("import", "--format", "generic-gpu", "--input", str(PHILLY), "--out", str(trace), *window)
            spec = {"slot_seconds": 60, "resources": [{"name": "gpu", "unit": "GPU"}],
                    "servers": [{"id": "node", "count": servers, "capacity": {"gpu": 8}}]}  # fmt: skip
            cluster.write_text(json.dumps(spec))
            for model in a.models.split(","):
                d = w / f"{model}-{n}"
                extra = ["--history-fraction", "0.2"] if model == "asrpt" else []
                cli("adapt", "--model", model, "--cluster", str(cluster), "--trace", str(trace), "--seed", "0",
                    *extra, "--out", str(d))  # fmt: skip
                evaluated = json.loads((d / "adapt.json").read_text())["jobs"]["evaluated"]
                for algorithm in RUNS[model]:
                    r = simulate(d, algorithm, a.timeout)
                    cpu = f"{r['cpu']:.1f}" if "cpu" in r else "-"
                    rss = f"{r['rss']:.0f}" if "rss" in r else "-"
                    print(f"| {model} | {algorithm} | {n} ({evaluated}) | {servers} x 8 | {cpu} | {rss} "
                          f"| {r.get('done', '-')} | {r['status']} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
