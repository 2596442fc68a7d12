"""Why `zhou` wins or loses on a preset: sum w_j c_j split into arrival, wait and run parts, per
algorithm, and zhou's rounds (tau, jobs, sub-rounds used, scheduled, start) and configurations.

    PYTHONPATH=. .venv/bin/python bench/zhou_diagnose.py --preset zhou-ps --seeds 0,1,2 \
        --algos "zhou,zhou:tie=loop;start=paper,fifo,drf" [--window 1]

sum_j w_j c_j = sum_j w_j a_j (arrival, the same for every algorithm) + sum_j w_j (s_j - a_j) (wait
before the first start) + sum_j w_j (c_j - s_j) (run, including any suspension); in 10^6.
"""

from __future__ import annotations

import argparse
import collections
import statistics

from bench.zhou_compare import instance, parse
from scheduling import api


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="zhou-allreduce")
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--algos", default="zhou,zhou:tie=loop;start=paper,fifo,drf,antman,tiresias")
    ap.add_argument("--window", type=int, default=None)
    args = ap.parse_args()
    rows: dict[str, list[tuple[float, ...]]] = collections.defaultdict(list)
    for seed in (int(s) for s in args.seeds.split(",")):
        inst = instance(args.preset, args.jobs, seed, args.window)
        jobs = {j.job_id: j for j in inst.jobs}
        for spec in args.algos.split(","):
            name, params = parse(spec)
            doc = api.run(inst, name, params, seed=seed)
            arr = wait = run = 0.0
            waits, runs, workers = [], [], []
            for j in doc["jobs"]:
                w, a = jobs[j["job_id"]].weight, jobs[j["job_id"]].arrival
                arr += w * a
                wait += w * (j["start"] - a)
                run += w * (j["completion"] - j["start"])
                waits.append(j["start"] - a)
                runs.append(j["completion"] - j["start"])
            first: dict[str, int] = {}
            for p in doc["placements"]:  # workers of each job's first placement interval
                if p["role"] == "worker" and p["start"] == doc_start(doc, p["job_id"]):
                    first[p["job_id"]] = first.get(p["job_id"], 0) + p["count"]
            workers = list(first.values())
            rows[spec].append(
                (
                    doc["metrics"]["total_weighted_completion"] / 1e6,
                    arr / 1e6,
                    wait / 1e6,
                    run / 1e6,
                    statistics.mean(waits),
                    statistics.mean(runs),
                    statistics.mean(workers) if workers else 0.0,
                )
            )
            if name == "zhou":
                used = [
                    (r["tau"], r["jobs"], r["subrounds"], r["scheduled"], r["start"])
                    for r in doc["zhou"]["rounds"]
                    if r["jobs"]
                ]
                print(f"seed {seed} {spec}: rounds (tau, jobs, sub-rounds used, scheduled, start) {used}")
    window = args.window or "150 (preset)"
    print(f"\n### {args.preset}, {args.jobs} jobs, seeds {args.seeds}, arrival window {window}\n")
    print("| algorithm | sum w_j c_j | arrival part | wait part | run part | mean wait | mean run | mean workers |")
    print("|---|---|---|---|---|---|---|---|")
    for spec, values in rows.items():
        m = [statistics.mean(v[i] for v in values) for i in range(7)]
        print(f"| {spec} | {m[0]:.2f} | {m[1]:.2f} | {m[2]:.2f} | {m[3]:.2f} | {m[4]:.1f} | {m[5]:.1f} | {m[6]:.1f} |")


def doc_start(doc: dict, job_id: str) -> int:  # type: ignore[type-arg]
    return int(next(j["start"] for j in doc["jobs"] if j["job_id"] == job_id))


if __name__ == "__main__":
    main()
