"""Tiny literal clusters and traces for the core tests (importable helpers, not fixtures)."""

from __future__ import annotations

import json

from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance

TINY_CLUSTER = {
    "slot_seconds": 60,
    "resources": ["gpu", "cpu", "bw"],
    "servers": [{"id": "s", "count": 2, "capacity": {"gpu": 4, "cpu": 16, "bw": 20}}],
    "worker_types": [
        {"id": "w1", "demand": {"gpu": 1, "cpu": 2, "bw": 1}},
        {"id": "w2", "demand": {"gpu": 2, "cpu": 4, "bw": 2}},
    ],
    "ps_types": [{"id": "p1", "demand": {"cpu": 2, "bw": 5}}],
}

ELASTIC_TRACE = """job_id,arrival,epochs,chunks,minibatches,batch_time,ps_update,gradient_mb,weight
a,0,2,4,10,6,1,100,1
b,1,1,8,20,3,1,100,2
c,1,3,2,5,6,1,50,1
d,5,1,3,10,6,0.5,10,3
"""

RIGID_TRACE = """job_id,arrival,gpus,duration
r1,0,4,600
r2,0,8,300
r3,2,6,120
r4,3,1,60
"""


def instance(trace: str = ELASTIC_TRACE, cluster: dict | None = None, fmt: str = "csv") -> Instance:
    c = cluster_from_dict(cluster or TINY_CLUSTER)
    return Instance(c, parse_trace(trace, c, "trace." + fmt, fmt))


def preset_instance(name: str, jobs: int, seed: int, size: float = 1.0) -> Instance:
    """A preset's instance, read through the loaders as the CLI reads the generated files."""
    from scheduling import presets  # only the tests that use presets pay for their import

    files = presets.build(name, jobs, seed, size)
    cluster = cluster_from_dict(json.loads(files.cluster))
    fmt = files.trace_name.rsplit(".", 1)[1]
    return Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, fmt))
