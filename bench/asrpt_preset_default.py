"""asrpt vs fifo and spjf on the asrpt preset as the dashboard's one-click preset builds it: the
preset's default job count at ``--size``, with the preset's own history for the fitted predictor
(``repeat.preset_instance(..., history=True)``), over seeds 0..N-1 (trace seed = algorithm seed).
Prints one line per seed and then the median [95% CI] of the average JCT, the ratio to fifo with its
CI and W/T/L (scheduling.stats); docs/results-asrpt.md, "The dashboard's default asrpt instance".

    PYTHONPATH=. python bench/asrpt_preset_default.py [--size 1.0] [--seeds 10]
"""

from __future__ import annotations

import argparse

from scheduling import api, repeat, stats

ALGORITHMS = ("asrpt", "fifo", "spjf")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=float, default=1.0)
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    table: dict[str, dict[str, float | None]] = {a: {} for a in ALGORITHMS}
    for seed in range(args.seeds):
        inst = repeat.preset_instance("asrpt", None, seed, args.size, history=True)
        line = []
        for alg in ALGORITHMS:
            m = api.run(inst, alg, seed=seed)["metrics"]
            table[alg][f"seed={seed}"] = m["avg_jct"]
            line.append(f"{alg} {m['avg_jct']:.3f} ({m['completed']} of {len(inst.jobs)} completed)")
        print(f"seed {seed}: " + ", ".join(line), flush=True)
    report = stats.compare(table, reference="fifo", metric="avg_jct")
    for alg, s in report.summaries.items():
        ci = s.median_ci
        text = f"{alg}: median {s.median:.1f}" + (f" [{ci.low:.1f}, {ci.high:.1f}]" if ci else "")
        p = report.paired.get(alg)
        if p is not None and p.median_ratio is not None:
            r = p.median_ratio_ci
            text += f"; ratio to fifo {p.median_ratio:.3f}" + (f" [{r.low:.3f}, {r.high:.3f}]" if r else "")
            text += f", W/T/L {p.wins}/{p.ties}/{p.losses}, {p.verdict}"
        print(text)


if __name__ == "__main__":
    main()
