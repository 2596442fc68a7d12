"""Where the CPU time of one short `simulate` process goes, phase by phase, on Philly windows.

    nice .venv/bin/python bench/simulate_breakdown.py [--runs 5] [--windows 300,600] [--algorithms fifo,srtf]

Each run is a fresh interpreter (the bytecode of ``scheduling/`` compiled first, as in
bench/tiresias_speed.py) doing what ``python -m scheduling simulate`` does, step by step, with the
process CPU time (``time.process_time``) taken between the steps:

- "standard library": the standard-library modules the run imports (the list is taken from a full
  run of the same command in another process: ``runpy``, ``argparse``, ``dataclasses``, ...);
- "our modules": importing ``scheduling`` (the CLI and what it imports, then the algorithm's
  module), with, on its own line, the part spent making the record classes (scheduling/records.py;
  the dataclasses' methods before 2026-11-27);
- loading the cluster and trace, building the algorithm, the simulation, the code version (git),
  building the result document, validating it and writing it.

Also timed as whole processes: an empty interpreter, and one that only imports those
standard-library modules. The median over ``--runs`` is printed (CPU s, so that the load of a
shared machine weighs less than on wall times).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiresias_common import OUR_PYTHON, ROOT, build, machine
from tiresias_speed import WINDOWS

# The standard-library modules a run imports (printed by a first run of the same command).
MODULES = """
import sys
from scheduling.cli import main
main(sys.argv[1:])
print(" ".join(sorted(m for m in sys.modules if m.partition(".")[0] not in ("scheduling", "__main__"))))
"""

PHASES = """
import json, sys, time
c = time.process_time
t = [c()]
for name in sys.argv[5].split():
    __import__(name)
t.append(c())
from scheduling import records
generating = []
plain = records._make
def timed(*args, **kwargs):
    t0 = c()
    try:
        return plain(*args, **kwargs)
    finally:
        generating.append(c() - t0)
records._make = timed
import scheduling.cli
from scheduling import api, provenance, registry, results
from scheduling.engine import simulate
from scheduling.validator import validate
cluster, trace, algorithm, out = sys.argv[1:5]
spec = registry.get(algorithm)
spec.make
t.append(c())
instance = api.load_instance(cluster, trace)
t.append(c())
params = spec.parse_params({})
algo = spec.build(instance, params, 0)
t.append(c())
run = simulate(instance, algo)
t.append(c())
provenance.code()
t.append(c())
doc = results.build(instance, run, algorithm, params, 0)
t.append(c())
assert validate(instance, doc) == []
t.append(c())
results.write(doc, out)  # a string, as cli_quick passes it (no pathlib)
t.append(c())
print(json.dumps([b - a for a, b in zip(t, t[1:])] + [sum(generating)]))
"""
NAMES = ("standard library", "our modules", "load inputs", "build algorithm", "simulate", "code version (git)",
         "result document", "validate", "write JSON")  # fmt: skip


def cpu_of(cmd: list[str]) -> float:
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--windows", default="300,600")
    ap.add_argument("--algorithms", default="fifo,srtf")
    args = ap.parse_args()
    subprocess.run(
        [OUR_PYTHON, "-m", "compileall", "-q", str(ROOT / "scheduling")], check=True, stdout=subprocess.DEVNULL
    )
    print(f"machine: {machine()}")
    empty = statistics.median(cpu_of([OUR_PYTHON, "-c", "pass"]) for _ in range(args.runs))
    print(f"empty interpreter: {empty:.3f} s CPU (median)")
    with tempfile.TemporaryDirectory() as tmp:
        for w in (w for w in WINDOWS if w.name in args.windows.split(",")):
            inputs = build(w, Path(tmp) / w.name)
            for algorithm in args.algorithms.split(","):
                out = Path(tmp) / w.name / f"{algorithm}.json"
                argv = ["simulate", "--cluster", str(inputs.cluster), "--trace", str(inputs.trace),
                        "--algorithm", algorithm, "--out", str(out)]  # fmt: skip
                listed = subprocess.run([OUR_PYTHON, "-c", MODULES, *argv], cwd=ROOT, check=True, capture_output=True,
                                        text=True)  # fmt: skip
                stdlib = listed.stdout.strip().splitlines()[-1]
                cmd = [OUR_PYTHON, "-c", PHASES, str(inputs.cluster), str(inputs.trace), algorithm, str(out), stdlib]
                runs = []
                for _ in range(args.runs):
                    proc = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True)
                    runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
                whole = [cpu_of([OUR_PYTHON, "-m", "scheduling", *argv]) for _ in range(args.runs)]
                imports_only = [cpu_of([OUR_PYTHON, "-c", f"for m in {stdlib.split()!r}: __import__(m)"])
                                for _ in range(args.runs)]  # fmt: skip
                medians = [statistics.median(r[i] for r in runs) for i in range(len(NAMES) + 1)]
                print(
                    f"\n{w.name} jobs, {algorithm}: `python -m scheduling simulate`, whole process "
                    f"{statistics.median(whole):.3f} s CPU (median); an interpreter importing only its "
                    f"{len(stdlib.split())} standard-library modules {statistics.median(imports_only):.3f} s"
                )
                print("| phase | CPU ms (median) | share of the phases |")
                print("|---|---|---|")
                total = sum(medians[: len(NAMES)])
                for name, value in zip(NAMES, medians, strict=False):
                    print(f"| {name} | {1000 * value:.1f} | {100 * value / total:.0f}% |")
                    if name == "our modules":
                        print(f"| (of which: making the record classes) | {1000 * medians[-1]:.1f} | |")
    print(f"\nfinished; load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
