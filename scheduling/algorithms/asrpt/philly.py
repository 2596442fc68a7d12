"""Turn an imported production trace (rigid GPU jobs) into A-SRPT stage-graph jobs (Sec. V-A-1-b).

"We assign each model and the derived distributed training configuration to a job group [...]
If a job in a group requires only a single GPU, we pair the group with a model with a single-GPU
training configuration. Otherwise [...] we randomly select a model and one of its training
configurations for the group. The number of job training iterations is computed by dividing the
job duration in the trace by its approximate minimum per-iteration training time alpha~_i^min."

Here a "group" is a (group id, GPUs) pair, since one trace group may hold jobs of several sizes; a
job without a group id is its own group. A GPU count no profile configuration matches (e.g. 12
or 24 in Philly) gets a data-parallel configuration (one stage, g replicas) of a model that fits
one GPU. Models and configurations: the ``asrpt`` preset's Table I profiles. alpha~_min is
Heavy-Edge on the fewest servers of the target cluster (eq. (7)); iterations = max(1,
round(duration / alpha~_min)). Input and output rows are trace JSON objects (times in seconds).

Usage: python -m scheduling.algorithms.asrpt.philly --input IMPORTED.json --cluster CLUSTER.json
--out TRACE.json [--seed S]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scheduling.algorithms.asrpt.mapping import alpha_min_estimate, job_graph
from scheduling.model import Stage
from scheduling.pipeline import Link
from scheduling.presets import ASRPT_MODELS, ModelProfile, pipeline_stages


def _stages(rows: list[dict[str, float]]) -> tuple[Stage, ...]:
    keys = ("forward", "backward", "activation_in", "activation_out", "params")
    return tuple(Stage(int(r["replicas"]), *(float(r[k]) for k in keys)) for r in rows)


def _choose(gpus: int, rng: np.random.Generator) -> tuple[ModelProfile, int, int]:
    options = [(m, s, r) for m in ASRPT_MODELS for s, r in m.configs if s * r == gpus]
    if not options:  # data parallelism of a model that fits one GPU
        options = [(m, 1, gpus) for m in ASRPT_MODELS if (1, 1) in m.configs]
    return options[int(rng.integers(len(options)))]


def convert(rows: Sequence[Mapping[str, Any]], cluster: Mapping[str, Any], seed: int = 0) -> list[dict[str, Any]]:
    """Stage-graph pipeline jobs for the imported rigid ``rows`` on ``cluster`` (spec dict)."""
    server = max(cluster["servers"], key=lambda s: s["capacity"].get("gpu", 0))
    link = Link(float(server["capacity"]["gpu"]), server["nic_bw_gbps"] * 125.0, server["intra_bw_gbps"] * 125.0)
    rng = np.random.default_rng(seed)
    groups: dict[tuple[str, int], dict[str, Any]] = {}
    out = []
    for row in rows:
        gpus = int(row["gpus"])
        key = (str(row.get("group") or f"job:{row['job_id']}"), gpus)
        if key not in groups:
            model, n_stages, replicas = _choose(gpus, rng)
            stages = pipeline_stages(model, n_stages, replicas)
            alpha = alpha_min_estimate(job_graph(_stages(stages)), link)  # seconds
            groups[key] = {"model": model.name, "stages": stages, "alpha": alpha}
        grp = groups[key]
        iterations = max(1, round(float(row["duration"]) / grp["alpha"]))
        job = {
            "job_id": row["job_id"],
            "arrival": row["arrival"],
            "arch": "pipeline",
            "model": grp["model"],
            "gpus": gpus,
            "iterations": iterations,
            "work": iterations,
            "batch_time": round(grp["alpha"], 6),
            "stages": grp["stages"],
        }
        for field in ("group", "user"):
            if row.get(field) not in (None, ""):
                job[field] = row[field]
        out.append(job)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--input", required=True, help="trace JSON written by `python -m scheduling import`")
    parser.add_argument("--cluster", required=True, help="cluster JSON with nic_bw_gbps and intra_bw_gbps")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = json.loads(Path(args.input).read_text())
    cluster = json.loads(Path(args.cluster).read_text())
    Path(args.out).write_text(json.dumps(convert(rows, cluster, args.seed), indent=1) + "\n")


if __name__ == "__main__":
    main()
