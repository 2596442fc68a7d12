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

Also probed: the time our process spends making its classes (``@record``, scheduling/records.py,
generates each class's ``__init__`` at import; until 2026-11-27 they were dataclasses, whose
``@dataclass`` generated six methods per class: about 0.7 ms a class here).

A lower bound for any version of our process that keeps its work (load, simulate, build, validate,
write): the interpreter, plus the standard-library modules without those only ``dataclasses``
brings (``inspect``, ``ast``, ``dis``, ``tokenize``, ...), plus the same command run warm in one
process (``cli.main`` again after a first run: every module loaded, the git lookup cached). This is
what remains if our own modules, dataclasses included, imported in no time at all.
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


WARM = """
import statistics, sys, time
from scheduling.cli import main
argv = sys.argv[1:]
main(argv)  # the first run loads every module and looks up the code version
times = []
for _ in range({rounds}):
    t = time.perf_counter()
    main(argv)
    times.append(time.perf_counter() - t)
print(statistics.median(times), file=sys.stderr)
"""


CLASSES = """
import sys, time
from scheduling import records
process = records._make  # what @record runs per class (generates its __init__)
spent = [0.0, 0]
def timed(cls, *args, **kwargs):
    t = time.perf_counter()
    try:
        return process(cls, *args, **kwargs)
    finally:
        spent[0] += time.perf_counter() - t
        spent[1] += 1
records._make = timed
from scheduling.cli import main
main(sys.argv[1:])
print(spent[0], spent[1], file=sys.stderr)
"""


def dataclass_ms(cmd: list[str]) -> tuple[float, int]:
    """Time ``cmd``'s process spends making its record classes (scheduling/records.py), and how many
    (until 2026-11-27 the same classes were dataclasses, and this probed ``@dataclass``)."""
    proc = subprocess.run([OUR_PYTHON, "-c", CLASSES, *cmd[3:]], cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=True)  # fmt: skip
    seconds, count = proc.stderr.strip().splitlines()[-1].split()
    return float(seconds) * 1000, int(count)


def only_for_dataclasses(stdlib: list[str]) -> set[str]:
    """The modules of ``stdlib`` that ``import dataclasses`` brings and nothing else in ``stdlib`` needs."""

    def loaded(code: str) -> set[str]:
        probe = f"import sys\nbefore = set(sys.modules)\n{code}\nprint(' '.join(set(sys.modules) - before))"
        out = subprocess.run([OUR_PYTHON, "-c", probe], capture_output=True, text=True, check=True)
        return set(out.stdout.split())

    if "dataclasses" not in stdlib:  # since the records (scheduling/records.py)
        return set()
    brought = loaded("import dataclasses")
    rest = [n for n in stdlib if n not in brought]
    return brought - loaded(f"import importlib\nfor n in {rest!r}: importlib.import_module(n)")


def warm_ms(cmd: list[str], rounds: int) -> float:
    """Median wall of ``cmd``'s work in one process after a first run (stdout discarded)."""
    proc = subprocess.run([OUR_PYTHON, "-c", WARM.format(rounds=rounds), *cmd[3:]], cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)  # fmt: skip
    return float(proc.stderr.strip().splitlines()[-1]) * 1000


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
        dataclasses_only = only_for_dataclasses(stdlib)
        without = [n for n in stdlib if n not in dataclasses_only]
        theirs, their_cwd = authors_cmd(args.checkout, inputs, "fifo", Path(tmp) / "log")
        commands = {
            "ours: -c pass": ([OUR_PYTHON, "-c", "pass"], ROOT),
            f"ours: import the {len(stdlib)} stdlib modules of simulate": (
                [OUR_PYTHON, "-c", f"import importlib\nfor n in {stdlib!r}: importlib.import_module(n)"],
                ROOT,
            ),
            f"ours: the same without the {len(dataclasses_only)} that only dataclasses needs": (
                [OUR_PYTHON, "-c", f"import importlib\nfor n in {without!r}: importlib.import_module(n)"],
                ROOT,
            ),
            "ours: python -m scheduling --help": ([OUR_PYTHON, "-m", "scheduling", "--help"], ROOT),
            "ours: simulate --algorithm fifo (300 jobs)": (ours, ROOT),
            "theirs: python2.7 -c pass": ([*python2(), "-c", "pass"], ROOT),
            "theirs: fifo (300 jobs)": (theirs, their_cwd),
        }
        walls: dict[str, list[float]] = {name: [] for name in commands}
        names = list(commands)
        warm: list[float] = []
        making: list[float] = []
        classes = dataclass_ms(ours)[1]
        for r in range(args.rounds):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                cmd, cwd = commands[name]
                walls[name].append(timed(cmd, cwd)[0])
            warm.append(warm_ms(ours, 5))
            making.append(dataclass_ms(ours)[0])
    med = {name: statistics.median(v) * 1000 for name, v in walls.items()}
    print("\n| command | median wall (ms) | min (ms) |\n|---|---|---|")
    for name, values in walls.items():
        print(f"| {name} | {med[name]:.1f} | {min(values) * 1000:.1f} |")
    floor = med[names[1]]
    theirs_ms = med["theirs: fifo (300 jobs)"]
    simulate_ms = med["ours: simulate --algorithm fifo (300 jobs)"]
    warm_work = statistics.median(warm)
    print(f"| ours: simulate's work, warm in one process (medians of 5, {args.rounds} rounds) | {warm_work:.1f} | "
          f"{min(warm):.1f} |")  # fmt: skip
    print(f"| ours: making the {classes} record classes of simulate (within its process, probed) | "
          f"{statistics.median(making):.1f} | {min(making):.1f} |")  # fmt: skip
    print(
        f"\nbudget for a tie: their fifo {theirs_ms:.1f} ms - our stdlib floor {floor:.1f} ms = "
        f"{theirs_ms - floor:.1f} ms; ours spends {simulate_ms - floor:.1f} ms beyond the floor"
    )
    bound = med[names[2]] + warm_work
    print(
        f"lower bound with our modules free, dataclasses' modules dropped, the work kept: {med[names[2]]:.1f} + "
        f"{warm_work:.1f} = {bound:.1f} ms = {bound / theirs_ms:.2f} x their fifo "
        f"(ours now: {simulate_ms / theirs_ms:.2f})"
    )
    print(f"standard-library modules: {' '.join(stdlib)}")
    print(f"only for dataclasses: {' '.join(sorted(dataclasses_only))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
