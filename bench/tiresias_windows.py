"""Our whole `simulate` process vs the Tiresias authors' simulator over many Philly windows of one size.

    TIRESIAS_PYTHON2=/path/to/python2.7 nice .venv/bin/python bench/tiresias_windows.py /work/ext/Tiresias \
        --jobs 300 --nodes 4 --windows 15 --rounds 7

bench/tiresias_speed.py measures one window per size; this script asks whether its verdict holds
across the trace. The windows follow a rule fixed before any measurement: ``--windows`` windows of
``--jobs`` jobs, the k-th starting at 00:00 on ``--first`` + k x ``--every`` days (by default 15
windows a week apart from 2017-09-05, spanning the trace, which runs from 2017-09-04 to 2017-12-22),
on ``--nodes`` x 8 GPUs (4 x 8 for 300 jobs and 8 x 8 for 600, as in bench/tiresias_speed.py). A
window holding a job larger than the cluster is skipped and reported as such (9 of the trace's
82,247 jobs ask for more than 32 GPUs); every other window is reported.

With ``--scheme yarn`` their runs use ``--scheme=yarn`` (through bench/tiresias_run_fixed.py, see
there) and ours ``placement=consolidated``; ``dlas-gpu`` is left out then (it counts GPUs whatever
the scheme).

Per window and pair (their ``fifo`` / our `fifo`, ``shortest`` / `srtf`, ``dlas-gpu`` / `tiresias`):
``--rounds`` interleaved rounds of both whole processes (tiresias_speed.timed), the paired ratio (the
median over rounds of our wall / their wall within a round) and the largest completion difference.
Per pair over the windows: the median of the windows' paired ratios with its 95% bootstrap CI
(scheduling.stats.interval, over windows) and the windows where ours was faster (ratio < 1).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # scheduling.stats, after the timing

import tiresias_common as common
from tiresias_speed import PAIRS, timed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path, help="the authors' repository (SymbioticLab/Tiresias), outside this one")
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--nodes", type=int, default=4, help="servers of 8 GPUs")
    ap.add_argument("--windows", type=int, default=15)
    ap.add_argument("--first", default="2017-09-05", help="day of the first window's start (00:00)")
    ap.add_argument("--every", type=int, default=7, help="days between window starts")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--pairs", default=",".join(ours for _, ours in PAIRS), help="ours of the pairs to run")
    ap.add_argument("--scheme", choices=("count", "yarn"), default="count", help="their placement scheme")
    args = ap.parse_args()
    pairs = [(theirs, ours) for theirs, ours in PAIRS if ours in args.pairs.split(",")]
    yarn = args.scheme == "yarn"
    if yarn:
        pairs = [(theirs, ours) for theirs, ours in pairs if theirs != "dlas-gpu"]
    params = ("placement=consolidated",) if yarn else ()
    common.prepare(args.checkout)
    print(
        f"{args.windows} windows of {args.jobs} jobs on {args.nodes} x 8 GPUs, from {args.first} every "
        f"{args.every} days; {args.rounds} interleaved rounds per window and pair; their scheme {args.scheme}"
    )
    print(
        "\n| window start | load | theirs / ours | their wall (s) | our wall (s) | paired ratio | "
        "max completion diff (slots) |"
    )
    print("|---|---|---|---|---|---|---|")
    first = dt.date.fromisoformat(args.first)
    ratios: dict[str, list[float]] = {ours: [] for _, ours in pairs}
    skipped: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.windows):
            start = f"{first + dt.timedelta(days=k * args.every)} 00:00:00"
            window = common.Window(str(k), start, args.jobs, args.nodes, 8)
            try:
                inputs = common.build(window, Path(tmp) / window.name)
            except SystemExit as exc:  # a job larger than the cluster
                skipped.append(f"{start[:10]} ({exc})")
                continue
            for theirs_name, ours_name in pairs:
                log = Path(tmp) / window.name / theirs_name
                out = Path(tmp) / window.name / f"{ours_name}.json"
                t_cmd, t_cwd = common.authors_cmd(args.checkout, inputs, theirs_name, log, args.scheme, yarn)
                o_cmd = common.our_cmd(inputs, ours_name, params, out)
                theirs_wall, ours_wall = [], []
                for r in range(args.rounds):
                    order = ((t_cmd, t_cwd, theirs_wall), (o_cmd, common.ROOT, ours_wall))
                    for cmd, cwd, walls in order if r % 2 == 0 else reversed(order):
                        walls.append(timed(cmd, cwd)[0])
                theirs_done = common.run_authors(args.checkout, inputs, theirs_name, log, args.scheme, yarn)
                ours_done = common.run_ours(inputs, ours_name, params, out)
                diff = max(abs(ours_done[j]["completion"] - v["completion"]) for j, v in theirs_done.items())
                paired = statistics.median(o / t for o, t in zip(ours_wall, theirs_wall, strict=True))
                ratios[ours_name].append(paired)
                walls = f"{statistics.median(theirs_wall):.3f} | {statistics.median(ours_wall):.3f}"
                pair = f"{theirs_name} / {ours_name}"
                print(f"| {start[:10]} | {inputs.load:.2f} | {pair} | {walls} | {paired:.2f} | {diff} |", flush=True)
    # NumPy and SciPy only now: every timed process is forked from this one (see tiresias_speed.py).
    from scheduling.stats import interval

    print("\n| theirs / ours | windows | median paired ratio [95% CI over windows] | windows ours faster |")
    print("|---|---|---|---|")
    for theirs_name, ours_name in pairs:
        values = ratios[ours_name]
        if not values:
            continue
        ci = interval(values, "median")
        shown = f" [{ci.low:.2f}, {ci.high:.2f}]" if ci is not None else ""
        faster = sum(1 for x in values if x < 1)
        middle = f"{statistics.median(values):.2f}{shown}"
        print(f"| {theirs_name} / {ours_name} | {len(values)} | {middle} | {faster}/{len(values)} |")
    for s in skipped:
        print(f"skipped: {s}")
    print(f"\nfinished; load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
