"""Our whole `simulate` process vs the Tiresias authors' simulator, same inputs, same machine.

    TIRESIAS_PYTHON2=/path/to/python2.7 nice .venv/bin/python bench/tiresias_speed.py /work/ext/Tiresias

Pairs: their ``fifo`` / ours `fifo`, ``shortest`` / `srtf`, ``dlas-gpu`` / `tiresias`, each on
Philly windows of 300, 600 and 5,000 jobs (bench/tiresias_common.py builds both inputs). Every
command is a separate process timed from spawn to exit (wall), with its CPU time and peak RSS from
wait4; rounds are interleaved (theirs then ours, then ours then theirs, ...) and the median of
``--rounds`` is reported, with ratio = our wall / their wall (below 1: ours is faster). The paired
ratio is the median over rounds of (our wall / their wall) within a round, the two processes run back
to back, with its 95% bootstrap CI (scheduling.stats.interval) and the rounds ours was faster: this
machine's speed drifts over minutes (an empty interpreter 9-17 ms), which moves the ratio of medians
between runs of the same code; the two runs of one round see the same state. Each pair's
completions are also compared job by job (the largest difference, in slots).

Both sides run from compiled bytecode, as an installed package does: before timing, this script
byte-compiles our ``scheduling/`` and the authors' ``simulator/`` (``compileall``), so that the
result does not depend on whether earlier runs could write ``__pycache__`` (with
PYTHONDONTWRITEBYTECODE set, as in this project's Docker image and some shells, every process would
otherwise compile our ~40 modules again, ~0.1 s, while the authors' ``.pyc`` files sit beside their
sources).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # scheduling.stats, for the paired CI

from tiresias_common import (
    ROOT,
    Window,
    authors_cmd,
    build,
    our_cmd,
    prepare,
    run_authors,
    run_ours,
)

WINDOWS = (
    Window("300", "2017-10-05 00:00:00", 300, 4, 8),
    Window("600", "2017-10-20 00:00:00", 600, 8, 8),
    Window("5000", "2017-10-04 00:00:00", 5000, 32, 8),
)

PAIRS = (("fifo", "fifo"), ("shortest", "srtf"), ("dlas-gpu", "tiresias"))


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of one process run to completion."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path, help="the authors' repository (SymbioticLab/Tiresias), outside this one")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--windows", default=",".join(w.name for w in WINDOWS))
    args = ap.parse_args()
    prepare(args.checkout)
    print(
        "\n| window | jobs | theirs / ours | their wall (s) | our wall (s) | ratio ours/theirs | "
        "paired ratio [95% CI], rounds ours faster | their CPU (s) | our CPU (s) | their / our peak RSS (MiB) | "
        "max completion diff (slots) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rows: list[tuple[str, list[float], str]] = []  # (cells before the paired ratio, per-round ratios, cells after)
    with tempfile.TemporaryDirectory() as tmp:
        for w in (w for w in WINDOWS if w.name in args.windows.split(",")):
            inputs = build(w, Path(tmp) / w.name)
            for theirs_name, ours_name in PAIRS:
                log = Path(tmp) / w.name / theirs_name
                out = Path(tmp) / w.name / f"{ours_name}.json"
                t_cmd, t_cwd = authors_cmd(args.checkout, inputs, theirs_name, log)
                o_cmd = our_cmd(inputs, ours_name, (), out)
                theirs_runs, ours_runs = [], []
                for r in range(args.rounds):
                    if r % 2 == 0:
                        theirs_runs.append(timed(t_cmd, t_cwd))
                        ours_runs.append(timed(o_cmd, ROOT))
                    else:
                        ours_runs.append(timed(o_cmd, ROOT))
                        theirs_runs.append(timed(t_cmd, t_cwd))
                theirs_done = run_authors(args.checkout, inputs, theirs_name, log)
                ours_done = run_ours(inputs, ours_name, (), out)
                diff = max(abs(ours_done[j]["completion"] - v["completion"]) for j, v in theirs_done.items())
                tw, tc, tm = (statistics.median(x[i] for x in theirs_runs) for i in range(3))
                ow, oc, om = (statistics.median(x[i] for x in ours_runs) for i in range(3))
                paired = [o[0] / t[0] for o, t in zip(ours_runs, theirs_runs, strict=True)]
                pair = f"{theirs_name} / {ours_name}"
                head = f"| {w.name} | {len(inputs.ids)} | {pair} | {tw:.2f} | {ow:.2f} | {ow / tw:.2f} | "
                tail = f" | {tc:.2f} | {oc:.2f} | {tm:.0f} / {om:.0f} | {diff} |"
                rows.append((head, paired, tail))
                print(f"measured {w.name} {theirs_name} / {ours_name}", file=sys.stderr, flush=True)
    # The CIs need NumPy and SciPy, imported only now: every timed process is forked from this one,
    # and a child's peak RSS counts what it inherited before exec.
    from scheduling.stats import interval

    for head, paired, tail in rows:
        ci = interval(paired, "median")
        shown = f" [{ci.low:.2f}, {ci.high:.2f}]" if ci is not None else ""
        faster = sum(1 for x in paired if x < 1)
        print(f"{head}{statistics.median(paired):.2f}{shown}, {faster}/{len(paired)}{tail}")
    print(f"\nfinished; load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
