"""GPU types on the Alibaba openb cluster: the same pods with and without per-type speed factors.

The cluster is the openb node list (1,213 GPU nodes of 7 types: P100, T4, V100M16, V100M32, A10,
G2, G3; ``../shared/traces/alibaba-openb``), imported with ``node-list`` (``model`` -> each server's
``gpu_model``). The jobs are the openb pods that request GPUs, imported with ``generic-gpu``
(duration = deletion_time - creation_time), the first ``--jobs`` of them by arrival.

Speed factors: Gavel's measured throughputs (Narayanan et al., OSDI'20; repository
stanford-futuredata/gavel, ``scheduler/combined_throughputs_with_p100.json``, the isolated
``"null"`` entries, iterations per second) give P100/V100 ratios for five models; their median is
the ``*`` row's P100 factor, V100 (both memory sizes) the reference 1. Gavel measured no T4, A10 or
internal G2/G3 GPUs: they keep factor 1 (the engine's default), so this example slows the P100 pods
only. The pods' recorded durations are taken as V100 times (the trace does not say which type a
pod ran on): the figures illustrate the mechanism, not Alibaba's cluster.

Run: ``PYTHONPATH=. python bench/gpu_types_openb.py [--jobs 1000]`` (about half a minute).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from scheduling import api, importers
from scheduling.loaders import load_cluster, load_trace
from scheduling.model import Instance
from scheduling.validator import validate

OPENB_PARTS = ("shared", "traces", "alibaba-openb")
OPENB = next(  # the repository's ../shared (as the other bench scripts), else /work/shared
    (p.joinpath(*OPENB_PARTS) for p in Path(__file__).resolve().parents if p.joinpath(*OPENB_PARTS).exists()),
    Path("/work").joinpath(*OPENB_PARTS),
)

# Gavel, combined_throughputs_with_p100.json (commit 7109d445), "null" (isolated) throughputs.
GAVEL = {  # model: (P100, V100) iterations per second
    "ResNet-18": (28.549915726558712, 46.81725852189685),
    "Transformer": (4.412275522827714, 8.741806494725642),
    "A3C": (4.54639530927856, 7.237954214304961),
    "LM": (71.7231524678731, 96.24638978858054),
    "CycleGAN": (2.4219174145471927, 3.675618512816215),
}
P100 = statistics.median(p / v for p, v in GAVEL.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cluster_path, trace_path = Path(tmp) / "openb.json", Path(tmp) / "pods.csv"
        importers.run("node-list", OPENB / "openb_node_list_gpu_node.csv", cluster_path)
        importers.run(
            "generic-gpu",
            OPENB / "openb_pod_list_default.csv",
            trace_path,
            mapping={"duration": "deletion_time-creation_time"},
            limit=args.jobs,
        )
        spec = json.loads(cluster_path.read_text())
        plain = load_cluster(cluster_path)
        spec["gpu_speeds"] = {"*": {"P100": P100, "V100M16": 1.0, "V100M32": 1.0}}
        typed_path = Path(tmp) / "openb-typed.json"
        typed_path.write_text(json.dumps(spec))
        typed = load_cluster(typed_path)
        print(f"P100 factor (median of Gavel's P100/V100 ratios over {len(GAVEL)} models): {P100:.3f}")
        print("| cluster | algorithm | jobs | avg JCT (slots) | jobs on a P100 | valid |")
        print("|---|---|---|---|---|---|")
        for label, cluster in (("no speeds", plain), ("gpu_speeds", typed)):
            inst = Instance(cluster, load_trace(trace_path, cluster))
            types = {s.id: s.gpu_model for s in cluster.servers}
            for algorithm in ("fifo", "srtf"):
                doc = api.run(inst, algorithm)
                on_p100 = len({p["job_id"] for p in doc["placements"] if types.get(p["server"]) == "P100"})
                ok = "yes" if not validate(inst, doc) else "NO"
                avg = doc["metrics"]["avg_jct"]
                print(f"| {label} | {algorithm} | {len(inst.jobs)} | {avg:.1f} | {on_p100} | {ok} |")


if __name__ == "__main__":
    main()
