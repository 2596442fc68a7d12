"""What a whole `simulate` process costs before any of our code runs, beside the Tiresias authors'
`fifo` on the 300-job Philly window (the one pair of bench/tiresias_speed.py where ours is slower).

    TIRESIAS_PYTHON2=/path/to/python2.7 .venv/bin/python bench/startup_floor.py /work/ext/Tiresias [--rounds 21]

Each command is a fresh process timed from spawn to exit (tiresias_speed.timed), the commands
interleaved round by round (the order rotates), medians reported:

* our interpreter doing nothing (``-c pass``), and importing exactly the standard-library modules
  that our ``simulate --algorithm fifo`` process ends up with (read from a probe run), none of ours;
* ``python -m scheduling --help`` (argparse and our CLI module, no engine) and the 300-job
  ``simulate --algorithm fifo`` itself;
* the authors' Python 2.7 doing nothing, and their ``fifo`` on the same window.

"budget" = their fifo minus our standard-library floor: what our own modules, loading the inputs,
simulating, building and validating the result and writing it would have to fit in for a tie.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiresias_common import OUR_PYTHON, ROOT, Window, authors_cmd, build, machine, our_cmd, python2
from tiresias_speed import timed

WINDOW = Window("300", "2017-10-05 00:00:00", 300, 4, 8)

PROBE = """
import sys
from scheduling.cli import main
main(sys.argv[1:])
loaded = dict(sys.modules)  # before this probe imports anything of its own
import json, sysconfig
lib = sysconfig.get_paths()["stdlib"]
names = [n for n, m in loaded.items()
         if (getattr(m, "__file__", None) or "").startswith(lib) and "site-packages" not in m.__file__]
print(json.dumps(sorted(names)), file=sys.stderr)
"""


def stdlib_of(cmd: list[str]) -> list[str]:
    """The standard-library modules (files under the stdlib folder) a run of our CLI imports."""
    proc = subprocess.run([OUR_PYTHON, "-c", PROBE, *cmd[3:]], cwd=ROOT, capture_output=True, text=True, check=True)
    names: list[str] = json.loads(proc.stderr.strip().splitlines()[-1])
    return [n for n in names if not n.startswith("__")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path, help="the authors' repository (SymbioticLab/Tiresias), outside this one")
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args()
    subprocess.run([OUR_PYTHON, "-m", "compileall", "-q", str(ROOT / "scheduling")], check=True)
    subprocess.run([*python2(), "-m", "compileall", "-q", str(args.checkout / "simulator")], check=True)
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        inputs = build(WINDOW, Path(tmp) / "w")
        ours = our_cmd(inputs, "fifo", (), Path(tmp) / "fifo.json")
        stdlib = stdlib_of(ours)
        theirs, their_cwd = authors_cmd(args.checkout, inputs, "fifo", Path(tmp) / "log")
        commands = {
            "ours: -c pass": ([OUR_PYTHON, "-c", "pass"], ROOT),
            f"ours: import the {len(stdlib)} stdlib modules of simulate": (
                [OUR_PYTHON, "-c", f"import importlib\nfor n in {stdlib!r}: importlib.import_module(n)"],
                ROOT,
            ),
            "ours: python -m scheduling --help": ([OUR_PYTHON, "-m", "scheduling", "--help"], ROOT),
            "ours: simulate --algorithm fifo (300 jobs)": (ours, ROOT),
            "theirs: python2.7 -c pass": ([*python2(), "-c", "pass"], ROOT),
            "theirs: fifo (300 jobs)": (theirs, their_cwd),
        }
        walls: dict[str, list[float]] = {name: [] for name in commands}
        names = list(commands)
        for r in range(args.rounds):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                cmd, cwd = commands[name]
                walls[name].append(timed(cmd, cwd)[0])
    med = {name: statistics.median(v) * 1000 for name, v in walls.items()}
    print("\n| command | median wall (ms) | min (ms) |\n|---|---|---|")
    for name, values in walls.items():
        print(f"| {name} | {med[name]:.1f} | {min(values) * 1000:.1f} |")
    floor = med[names[1]]
    theirs_ms = med["theirs: fifo (300 jobs)"]
    print(
        f"\nbudget for a tie: their fifo {theirs_ms:.1f} ms - our stdlib floor {floor:.1f} ms = "
        f"{theirs_ms - floor:.1f} ms; ours spends {med[names[3]] - floor:.1f} ms beyond the floor"
    )
    print(f"standard-library modules: {' '.join(stdlib)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
