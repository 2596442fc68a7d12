"""The dashboard benchmarks' inputs are what they claim to be."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from dashboard_common import rigid_inputs
from engine_scale import philly_like

from scheduling.loaders import parse_cluster, parse_trace


def test_the_rigid_benchmark_trace_loads_with_the_generators_durations_in_slots():
    cluster_text, trace_text = rigid_inputs(300, 4, seed=3)
    cluster = parse_cluster(cluster_text)
    loaded = {j.job_id: j.duration for j in parse_trace(trace_text, cluster)}
    generated = {j.job_id: j.duration for j in philly_like(300, 3, 4).jobs}
    assert loaded == generated
