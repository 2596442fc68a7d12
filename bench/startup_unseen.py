"""A short run's CPU time against the Tiresias authors' simulator on 300-job Philly windows not used before.

    TIRESIAS_PYTHON2=/path/to/python2.7 nice -n 10 .venv/bin/python bench/startup_unseen.py /path/to/Tiresias \
        [--rounds 5] [--root <other checkout> --root .]

The window rule is fixed here, before any measurement with it: **15 windows of 300 jobs, the k-th
starting at 12:00 on 2017-09-11 + 7k days** (Mondays at noon, 2017-09-11 to 2017-12-18; ``--rule
thursdays``, a second set fixed after the first had been measured once and before its own first
measurement: 14 windows from 12:00 on 2017-09-14 + 7k days, Thursdays at noon to 2017-12-14), on 4 x 8
GPUs as bench/tiresias_windows.py's 300-job windows; a window holding a job larger than the
cluster is skipped and reported, as there. No earlier bench started a window at noon or
on a Monday: bench/tiresias_windows.py's start at 00:00 on Tuesdays (2017-09-05 + 7k),
bench/tiresias_speed.py's and bench/tiresias_crosscheck.py's at 00:00 on 2017-10-04, 10-05, 10-20,
11-01, 11-10, 12-05, bench/paper_adapted_speed.py's on 2017-10-10. The script prints how many jobs
of each window were also in one of the earlier 300- or 600-job windows, the sizes whose start-up
was tuned (it uses the Tuesday windows only for its own quick checks, none of these).

Per window and pair (their ``fifo`` / our `fifo` by default; ``--pairs`` adds ``srtf``,
``tiresias``), ``--rounds`` rounds; in each round their process and one of ours per ``--root`` run
back to back in a rotating order, each timed by os.wait4 (CPU = user + system time of the whole
process, and wall). The paired ratio of a window is the median over rounds of our CPU / their CPU
within the round. Over the windows: the median paired ratio with its 95% bootstrap CI
(scheduling.stats.interval) and the distribution-free CI of a median (order statistics: the
k-th smallest and largest of n windows, with k the largest for which P(Binomial(n, 1/2) < k) <=
2.5%; 96.5% for 15 windows), and the windows where ours took less CPU. Completions are compared
job by job with theirs in every window.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # scheduling.stats, after the timing

import tiresias_common as common
from tiresias_speed import PAIRS, timed

RULES = {  # name -> (first day, windows); each fixed before its first measurement
    "mondays": (dt.date(2017, 9, 11), 15),  # the first rule (2026-12-02, 04:05 UTC)
    "thursdays": (dt.date(2017, 9, 14), 14),  # a second set (fixed 04:30 UTC, after the first was measured)
}
EVERY_DAYS = 7
AT = "12:00:00"
FIRST, WINDOWS = RULES["mondays"]
JOBS = 300
NODES = 4

EARLIER = [  # (start, jobs) of the 300- and 600-job windows of the earlier benches
    *((f"{dt.date(2017, 9, 5) + dt.timedelta(days=7 * k)} 00:00:00", n) for k in range(15) for n in (300, 600)),
    ("2017-10-05 00:00:00", 300),
    ("2017-10-20 00:00:00", 600),
    ("2017-11-01 00:00:00", 300),
]


def starts() -> list[str]:
    return [f"{FIRST + dt.timedelta(days=k * EVERY_DAYS)} {AT}" for k in range(WINDOWS)]


def use_rule(name: str) -> None:
    global FIRST, WINDOWS
    FIRST, WINDOWS = RULES[name]


def window_jobs(rows: list[tuple[int, str]], first_submit: dt.datetime, start: str, n: int) -> set[str]:
    """The ids of the ``n`` jobs an import with ``--start start --limit n`` keeps, from the whole
    trace imported with 1-s slots (``rows``: (arrival, job id) in the import's order)."""
    offset = (dt.datetime.fromisoformat(start) - first_submit).total_seconds()
    return {job for _, job in [r for r in rows if r[0] >= offset][:n]}


def overlaps(folder: Path) -> dict[str, int]:
    """Per new window start: its jobs that an earlier window also held."""
    whole = folder / "whole.csv"
    subprocess.run(
        [common.OUR_PYTHON, "-m", "scheduling", "import", "--format", "generic-gpu", "--input", str(common.PHILLY),
         "--out", str(whole), "--slot-seconds", "1"],
        check=True, cwd=common.ROOT, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    with common.PHILLY.open(newline="") as f:
        first_submit = min(dt.datetime.fromisoformat(r["timestamp"]) for r in csv.DictReader(f))
    with whole.open(newline="") as f:
        rows = [(int(r["arrival"]), r["job_id"]) for r in csv.DictReader(f)]
    seen: set[str] = set()
    for start, n in EARLIER:
        seen |= window_jobs(rows, first_submit, start, n)
    return {start: len(window_jobs(rows, first_submit, start, JOBS) & seen) for start in starts()}


def order_ci(values: list[float]) -> tuple[float, float, float]:
    """(low, high, coverage) of the distribution-free CI of the median (see the module docstring)."""
    n = len(values)
    xs = sorted(values)
    k = 0
    while k + 1 <= n and sum(math.comb(n, i) for i in range(k + 1)) / 2**n <= 0.025:
        k += 1  # P(X < k+1) <= 2.5%: the (k+1)-th order statistic is still a lower bound
    if k == 0:
        return xs[0], xs[-1], 1.0
    coverage = 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2**n
    return xs[k - 1], xs[n - k], coverage


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path, help="the authors' repository (SymbioticLab/Tiresias), outside this one")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--root", action="append", type=Path, help="our checkouts (default: this one)")
    ap.add_argument("--rule", choices=sorted(RULES), default="mondays", help="the set of windows (RULES)")
    ap.add_argument("--pairs", default="fifo", help="ours of the pairs to run (fifo, srtf, tiresias)")
    args = ap.parse_args()
    use_rule(args.rule)
    roots = [r.resolve() for r in (args.root or [common.ROOT])]
    pairs = [(theirs, ours) for theirs, ours in PAIRS if ours in args.pairs.split(",")]
    common.prepare(args.checkout)
    for root in roots[1:] if roots[0] == common.ROOT else roots:
        subprocess.run([common.OUR_PYTHON, "-m", "compileall", "-q", str(root / "scheduling")], check=True)
    print(
        f"rule: {WINDOWS} windows of {JOBS} jobs from {AT[:5]} on {FIRST} every {EVERY_DAYS} days, {NODES} x 8 GPUs; "
        f"{args.rounds} rounds per window; roots: {', '.join(str(r) for r in roots)}"
    )
    skipped: list[str] = []
    ratios: dict[tuple[str, int], list[float]] = {(ours, i): [] for _, ours in pairs for i in range(len(roots))}
    with tempfile.TemporaryDirectory() as tmp:
        shared = overlaps(Path(tmp))
        head = " | ".join(f"ours {i} CPU (s) | paired CPU ratio {i} | max diff {i}" for i in range(len(roots)))
        print(f"\n| window start | load | jobs in earlier windows | pair | their CPU (s) | {head} |")
        print("|---|---|---|---|---|" + "---|---|---|" * len(roots))
        for k, start in enumerate(starts()):
            window = common.Window(str(k), start, JOBS, NODES, 8)
            try:
                inputs = common.build(window, Path(tmp) / window.name)
            except SystemExit as exc:  # a job larger than the cluster: skipped and reported, as tiresias_windows.py
                skipped.append(f"{start[:16]} ({exc})")
                continue
            for theirs_name, ours_name in pairs:
                log = Path(tmp) / window.name / theirs_name
                t_cmd, t_cwd = common.authors_cmd(args.checkout, inputs, theirs_name, log)
                cmds = []
                for i, root in enumerate(roots):
                    out = Path(tmp) / window.name / f"{ours_name}-{i}.json"
                    cmd = common.our_cmd(inputs, ours_name, (), out)
                    cmds.append(([str(root / ".venv" / "bin" / "python"), *cmd[1:]], root))
                theirs_cpu: list[float] = []
                ours_cpu: list[list[float]] = [[] for _ in roots]
                for r in range(args.rounds):
                    order: list[int] = [-1, *range(len(roots))]
                    order = order[r % len(order) :] + order[: r % len(order)]
                    for i in order:
                        if i < 0:
                            theirs_cpu.append(timed(t_cmd, t_cwd)[1])
                        else:
                            ours_cpu[i].append(timed(*cmds[i])[1])
                theirs_done = common.run_authors(args.checkout, inputs, theirs_name, log)
                cells = []
                for i, root in enumerate(roots):
                    out = Path(tmp) / window.name / f"{ours_name}-{i}.json"
                    subprocess.run(cmds[i][0], check=True, cwd=root, stdout=subprocess.DEVNULL)
                    doc = json.loads(out.read_text())
                    done = {j["job_id"]: j["completion"] for j in doc["jobs"]}
                    diff = max(abs(done[j] - v["completion"]) for j, v in theirs_done.items())
                    paired = statistics.median(o / t for o, t in zip(ours_cpu[i], theirs_cpu, strict=True))
                    ratios[ours_name, i].append(paired)
                    cells.append(f"{statistics.median(ours_cpu[i]):.3f} | {paired:.2f} | {diff}")
                print(
                    f"| {start[:16]} | {inputs.load:.2f} | {shared[start]} | {theirs_name} / {ours_name} | "
                    f"{statistics.median(theirs_cpu):.3f} | {' | '.join(cells)} |",
                    flush=True,
                )
    from scheduling.stats import interval  # NumPy only now: the timed processes are forked from this one

    print("\n| pair | root | windows | median paired CPU ratio | 95% bootstrap CI | order-stat. CI | ours less CPU |")
    print("|---|---|---|---|---|---|---|")
    for theirs_name, ours_name in pairs:
        for i, root in enumerate(roots):
            values = ratios[ours_name, i]
            ci = interval(values, "median")
            boot = f"[{ci.low:.2f}, {ci.high:.2f}]" if ci is not None else "-"
            low, high, cover = order_ci(values)
            wins = sum(1 for x in values if x < 1)
            print(
                f"| {theirs_name} / {ours_name} | {root} | {len(values)} | {statistics.median(values):.2f} | {boot} | "
                f"[{low:.2f}, {high:.2f}] ({cover:.1%}) | {wins}/{len(values)} |"
            )
    for line in skipped:
        print(f"skipped: {line}")
    print(f"\nfinished; load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
