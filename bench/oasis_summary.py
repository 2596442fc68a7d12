"""Summarise bench/oasis_compare.py output: mean [min-max] total utility per (jobs, algorithm) and,
per (jobs, seed) pair, how often each `oasis` variant is >= each baseline.

Usage: PYTHONPATH=. python bench/oasis_summary.py [bench/oasis_compare.json ...]
Several files are merged; a later file's row replaces an earlier one with the same
(jobs, seed, algorithm).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from statistics import mean

BASELINES = ("fifo", "drf", "rrh", "dorm")


def main() -> None:
    rows: dict[tuple[int, int, str], float] = {}
    for path in sys.argv[1:] or ["bench/oasis_compare.json"]:
        for r in json.loads(Path(path).read_text()):
            rows[(r["jobs"], r["seed"], r["algorithm"])] = r["total_utility"]
    algorithms = list(dict.fromkeys(a for _, _, a in rows))
    sizes = sorted({n for n, _, _ in rows})
    print("| jobs | " + " | ".join(algorithms) + " |")
    print("|---|" + "---|" * len(algorithms))
    for n in sizes:
        cells = []
        for a in algorithms:
            v = [u for (m, _, b), u in rows.items() if m == n and b == a]
            cells.append(f"{mean(v):.0f} [{min(v):.0f}-{max(v):.0f}] (n={len(v)})" if v else "-")
        print(f"| {n} | " + " | ".join(cells) + " |")
    print()
    for a in (a for a in algorithms if a.startswith("oasis")):
        for base in BASELINES:
            for n in sizes:
                mine = [(s, u) for (m, s, b), u in rows.items() if m == n and b == a]
                pairs = [(u, rows[(n, s, base)]) for s, u in mine if (n, s, base) in rows]
                if pairs:
                    wins = sum(x >= y for x, y in pairs)
                    ratio = mean(x / y for x, y in pairs if y > 0)
                    print(f"{a} >= {base} at {n} jobs: {wins}/{len(pairs)} seeds (mean ratio {ratio:.2f})")


if __name__ == "__main__":
    main()
