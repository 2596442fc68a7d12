"""Cross-check `tiresias` job by job against the Tiresias authors' simulator (`dlas-gpu`).

    TIRESIAS_PYTHON2=/path/to/python2.7 .venv/bin/python bench/tiresias_crosscheck.py /work/ext/Tiresias

Builds the same Philly windows for both simulators (bench/tiresias_common.py), runs theirs
(``--schedule=dlas-gpu --scheme=count``, 1-s slots) and ours (`tiresias` default, and the earlier
reading `order=start` with thresholds 3600,36000 for comparison), and `srtf` against their
``--schedule=shortest`` (shortest remaining time first), and prints per window: jobs whose
completion differs by more than one slot, the largest difference, average JCT and total
preemptions. Exit code 1 if the default, promote_knob=2 or srtf misses the target (every job
within one slot, preemptions within 5%).
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiresias_common import Window, build, machine, run_authors, run_ours

WINDOWS = (
    Window("A", "2017-10-05 00:00:00", 300, 4, 8),
    Window("B", "2017-10-20 00:00:00", 600, 8, 8),
    Window("C", "2017-11-10 00:00:00", 2000, 16, 8),
    Window("D", "2017-12-05 00:00:00", 1000, 32, 8),
)

VARIANTS: dict[str, tuple[str, tuple[str, ...], str]] = {
    # name: (our algorithm, its --param values, the authors' --schedule it is compared with)
    "default": ("tiresias", (), "dlas-gpu"),
    "promote_knob=2 vs dlas-gpu-2": ("tiresias", ("promote_knob=2",), "dlas-gpu-2"),
    "order=start, 3600,36000 (before)": ("tiresias", ("order=start", "queue_thresholds=3600,36000"), "dlas-gpu"),
    "srtf vs shortest": ("srtf", (), "shortest"),
}
CHECKED = ("default", "promote_knob=2 vs dlas-gpu-2", "srtf vs shortest")  # the variants held to the target


def compare(
    theirs: dict[str, dict[str, int]],
    ours: dict[str, dict[str, int]],
    arrival: dict[str, int],
    duration: dict[str, int],
) -> dict[str, float]:
    diffs = [abs(ours[j]["completion"] - theirs[j]["completion"]) for j in theirs]
    jct_t = statistics.fmean(theirs[j]["completion"] - arrival[j] for j in theirs)
    jct_o = statistics.fmean(ours[j]["completion"] - arrival[j] for j in theirs)
    pre_t = sum(v["preemptions"] for v in theirs.values())
    pre_o = sum(ours[j]["preemptions"] for j in theirs)
    return {
        "off": sum(d > 1 for d in diffs),
        "max": max(diffs),
        "jct_t": jct_t,
        "wait_t": statistics.fmean(theirs[j]["completion"] - arrival[j] - duration[j] for j in theirs),
        "jct_o": jct_o,
        "pre_t": pre_t,
        "pre_o": pre_o,
        "missing": len(set(ours) - set(theirs)),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path, help="the authors' repository (SymbioticLab/Tiresias), outside this one")
    ap.add_argument("--windows", default=",".join(w.name for w in WINDOWS), help="window names, comma-separated")
    args = ap.parse_args()
    chosen = [w for w in WINDOWS if w.name in args.windows.split(",")]
    print(f"machine: {machine()}")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for w in chosen:
            inputs = build(w, Path(tmp) / w.name)
            runs = {
                schedule: run_authors(args.checkout, inputs, schedule, Path(tmp) / w.name / schedule)
                for schedule in sorted({schedule for _, _, schedule in VARIANTS.values()})
            }
            for schedule, theirs in runs.items():
                if len(theirs) != len(inputs.ids):
                    print(f"window {w.name}: {schedule} completed {len(theirs)} of {len(inputs.ids)} jobs")
                    ok = False
            with inputs.trace.open(newline="") as f:
                rows = list(csv.DictReader(f))
            arrival = {r["job_id"]: int(r["arrival"]) for r in rows}
            duration = {r["job_id"]: math.ceil(float(r["duration"])) for r in rows}
            print(
                f"\nwindow {w.name}: {len(inputs.ids)} jobs from {w.start}, {w.nodes} x {w.gpus_per_node} GPUs, "
                f"offered load over the arrival span {inputs.load:.2f}"
            )
            print(
                "| variant | jobs off by > 1 slot | max diff (slots) | avg JCT ours / theirs (s) "
                "| theirs: avg wait (s) | preemptions ours / theirs |"
            )
            print("|---|---|---|---|---|---|")
            for k, (name, (algorithm, params, schedule)) in enumerate(VARIANTS.items()):
                ours = run_ours(inputs, algorithm, params, Path(tmp) / w.name / f"ours-{k}.json")
                c = compare(runs[schedule], ours, arrival, duration)
                print(
                    f"| {name} | {c['off']} | {c['max']} | {c['jct_o']:.1f} / {c['jct_t']:.1f} "
                    f"({100 * (c['jct_o'] / c['jct_t'] - 1):+.2f}%) | {c['wait_t']:.0f} | {c['pre_o']} / {c['pre_t']} |"
                )
                if name in CHECKED:
                    pre_ok = abs(c["pre_o"] - c["pre_t"]) <= 0.05 * max(c["pre_t"], 1)
                    ok = ok and c["off"] == 0 and pre_ok and c["missing"] == 0
    print(
        "\ntarget (default, promote_knob and srtf: every job within one slot, preemptions within 5%): "
        + ("met" if ok else "MISSED")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
