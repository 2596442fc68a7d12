"""The paper algorithms at real-window sizes: CPU time and peak RSS of one ``simulate`` per
(algorithm, preset, jobs), for this checkout and, side by side in the same run, an older one.

    .venv/bin/python bench/paper_speed.py --runs zhou:zhou-ps:300,zhou:zhou-ps:2000 \
        --before /tmp/before-checkout [--seed 1] [--timeout 900]

Each run is a fresh ``python -m scheduling simulate`` process (``nice -n 10``) on the preset's
instance, generated once by this checkout (``generate --preset P --jobs N --seed S``, the preset's
default load and size) and shared by both checkouts. CPU time (user + system) and peak RSS come
from the child's own rusage (``os.wait4``), so other work on the machine does not count. The two
result documents are compared on everything but ``code`` and ``inputs`` (provenance): "same" means
the same placements, progress, prices, per-round report and metrics. A run over ``--timeout``
seconds of wall time is stopped and reported as such. Record the table in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiresias_common import machine

HERE = Path(__file__).resolve().parent.parent


def generate(preset: str, jobs: int, seed: int, out: Path) -> None:
    cmd = [sys.executable, "-m", "scheduling", "generate", "--preset", preset, "--jobs", str(jobs)]
    subprocess.run([*cmd, "--seed", str(seed), "--out", str(out)], check=True, cwd=HERE, capture_output=True)


def measured(
    cmd: list[str], cwd: Path, timeout: float, stderr: Any, env: dict[str, str] | None = None
) -> tuple[int, float, float, float]:
    """Run ``cmd`` to its end or until ``timeout`` wall seconds (then kill it): its exit code, its own
    CPU seconds (user + system, from ``os.wait4``) and peak RSS (MiB), and the wall seconds."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - t0 > timeout:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.2)
    code = os.waitstatus_to_exitcode(status)
    return code, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, time.perf_counter() - t0


def simulate(
    checkout: Path, data: Path, algorithm: str, out: Path, timeout: float, params: list[str]
) -> dict[str, object]:
    """One simulate process: CPU seconds, peak RSS (MiB), wall seconds, digest (None if it failed)."""
    trace = next(p for p in data.iterdir() if p.name.startswith("trace."))
    cmd = ["nice", "-n", "10", sys.executable, "-m", "scheduling", "simulate", "--cluster", str(data / "cluster.json")]
    cmd += ["--trace", str(trace), "--algorithm", algorithm, "--out", str(out)]
    cmd += [arg for p in params for arg in ("--param", p)]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    err = out.with_suffix(".err")
    with err.open("wb") as sink:
        code, cpu, rss, wall = measured(cmd, checkout, timeout, sink, env)
    row: dict[str, object] = {
        "cpu": cpu,
        "rss_mib": rss,
        "wall": wall,
        "status": "ok" if code == 0 else f"exit {code}",
        "digest": None,
    }
    if code == 0:
        doc = json.loads(out.read_text())
        kept = {k: v for k, v in doc.items() if k not in ("code", "inputs")}
        row["digest"] = hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:12]
    elif wall > timeout:
        row["status"] = f"stopped after {timeout:.0f} s"
    else:
        lines = err.read_text(errors="replace").strip().splitlines()
        row["status"] = f"{row['status']}: {lines[-1][:120] if lines else ''}"
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", required=True, help="ALGORITHM:PRESET:JOBS, comma separated")
    ap.add_argument("--before", type=Path, help="an older checkout to run beside this one")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--param", action="append", default=[], help="KEY=VALUE for every run's algorithm")
    ap.add_argument("--only", choices=("after", "before"), help="run one of the two checkouts only")
    ap.add_argument("--timeout", type=float, default=900.0, help="wall seconds per simulate")
    args = ap.parse_args()
    print(machine())
    checkouts = [("after", HERE)] + ([("before", args.before.resolve())] if args.before else [])
    if args.only:
        checkouts = [c for c in checkouts if c[0] == args.only]
    for name, path in checkouts:
        head = subprocess.run(
            ["git", "log", "-1", "--format=%h"], check=False, cwd=path, capture_output=True, text=True
        )
        print(f"{name}: {path} at {head.stdout.strip() or '?'}")
    print(
        "| algorithm | preset, jobs, seed | " + " | ".join(f"{n} CPU s / peak RSS" for n, _ in checkouts) + " | same |"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.runs.split(","):
            algorithm, preset, jobs = spec.split(":")
            data = Path(tmp) / f"{preset}-{jobs}"
            if not data.exists():
                generate(preset, int(jobs), args.seed, data)
            rows = [
                simulate(path, data, algorithm, Path(tmp) / f"{name}.json", args.timeout, args.param)
                for name, path in checkouts
            ]
            cells = [
                f"{r['cpu']:.1f} s / {r['rss_mib']:.0f} MiB" + ("" if r["status"] == "ok" else f" ({r['status']})")
                for r in rows
            ]
            same = (
                "-"
                if len(rows) < 2 or None in (r["digest"] for r in rows)
                else str(rows[0]["digest"] == rows[1]["digest"])
            )
            print(f"| {algorithm} | {preset}, {jobs}, {args.seed} | " + " | ".join(cells) + f" | {same} |", flush=True)
            print(f"  load average now {os.getloadavg()[0]:.2f}; digests {[r['digest'] for r in rows]}", flush=True)


if __name__ == "__main__":
    main()
