"""`tiresias` of two checkouts on the cross-check's Philly windows, job by job, and the second
checkout's full walk alone (the change-based path turned off).

    PHILLY_CSV=/path/to/philly.csv .venv/bin/python bench/tiresias_before_after.py --before DIR

DIR is a checkout of an earlier commit (e.g. ``git archive <commit> | tar -x -C DIR``); the second
checkout is this one. For each window of bench/tiresias_crosscheck.py and each variant (defaults,
``promote_knob=2``, ``order=start`` with thresholds 3600,36000) it prints whether every job's
(start, completion, preemptions) is the same in both checkouts, whether this checkout's full walk
gives the same, and the preemptions. Use it where the authors' simulator cannot run: our schedules
before a change matched theirs job by job (bench/RESULTS-tiresias.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiresias_common import OUR_PYTHON, ROOT, build
from tiresias_crosscheck import WINDOWS

VARIANTS = {
    "default": [],
    "promote_knob=2": ["promote_knob=2"],
    "order=start": ["order=start", "queue_thresholds=3600,36000"],
}

FULL_WALK = """
import json, sys
from scheduling import registry
from scheduling.engine import simulate
from scheduling.loaders import parse_cluster, parse_trace
from scheduling.model import Instance
cluster = parse_cluster(open(sys.argv[1]).read())
inst = Instance(cluster, parse_trace(open(sys.argv[2]).read(), cluster, "trace.csv"))
spec = registry.get("tiresias")
algo = spec.build(inst, spec.parse_params(dict(p.split("=", 1) for p in sys.argv[3:])), 0)
algo.incremental = False
print(json.dumps({r.job_id: [r.start, r.completion, r.preemptions] for r in simulate(inst, algo).jobs}))
"""


def outcomes(root: Path, cluster: Path, trace: Path, params: list[str], out: Path) -> dict[str, list[int | None]]:
    cmd = [OUR_PYTHON, "-m", "scheduling", "simulate", "--cluster", str(cluster), "--trace", str(trace)]
    cmd += ["--algorithm", "tiresias", "--out", str(out), *(a for p in params for a in ("--param", p))]
    subprocess.run(cmd, cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, check=True, capture_output=True)
    doc = json.loads(out.read_text())
    return {j["job_id"]: [j["start"], j["completion"], j["preemptions"]] for j in doc["jobs"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True, help="a checkout of the earlier commit")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for w in WINDOWS:
            inputs = build(w, Path(tmp) / w.name)
            for name, params in VARIANTS.items():
                before = outcomes(args.before.resolve(), inputs.cluster, inputs.trace, params, Path(tmp) / "b.json")
                after = outcomes(ROOT, inputs.cluster, inputs.trace, params, Path(tmp) / "a.json")
                full = subprocess.run(
                    [OUR_PYTHON, "-c", FULL_WALK, str(inputs.cluster), str(inputs.trace), *params],
                    cwd=ROOT,
                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                    check=True,
                    capture_output=True,
                    text=True,
                )
                print(
                    f"window {w.name} ({w.jobs} jobs) tiresias {name}: before == after: {before == after}; "
                    f"full walk == before: {json.loads(full.stdout) == before}; "
                    f"preemptions {sum(int(v[2] or 0) for v in after.values())}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
