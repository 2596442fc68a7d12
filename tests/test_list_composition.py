"""The list baselines are one list scheduler composed of an order, a placement and a walk, and the
modes are checked names.

The A-SRPT baselines (spjf, spwf, wcs-*) are ListScheduler with a predicted-work order and the
Heavy-Edge placement; the placement composes with any other order, and a misspelt mode is refused
where the scheduler is built instead of silently running another path.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from scheduling import api, presets, registry
from scheduling.algorithms.asrpt.baselines import PredictedList, gpu_configs, predicted_order
from scheduling.algorithms.asrpt.cluster import heavy_edge_placement, profiles
from scheduling.algorithms.asrpt.scheduler import Asrpt
from scheduling.algorithms.baselines import fixed_configs
from scheduling.algorithms.common import planned_rate
from scheduling.algorithms.priority import ListScheduler, fifo_key
from scheduling.engine import simulate
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import Instance
from scheduling.policy import list_algorithm
from tests.scenarios import RIGID_TRACE, TINY_CLUSTER


def asrpt_instance(seed: int = 0) -> Instance:
    files = presets.build("asrpt", jobs=60, seed=seed, size=0.02, load=6.0)
    cluster = cluster_from_dict(json.loads(files.cluster))
    return Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, "json"))


def perfect(inst: Instance) -> dict[str, float]:
    return {job.job_id: job.work_required for job in inst.jobs}


def test_the_asrpt_baselines_are_the_one_list_scheduler() -> None:
    inst = asrpt_instance()
    spec = registry.get("wcs-duration")
    algo = spec.make(inst, spec.parse_params({"predictor": "perfect"}), np.random.default_rng(0))
    assert isinstance(algo, PredictedList) and isinstance(algo, ListScheduler)
    assert algo.placement.name == "heavy-edge"


def test_heavy_edge_placement_with_the_fifo_order_is_wcs_subtime() -> None:
    inst = asrpt_instance(1)
    profs = profiles(inst, perfect(inst), "ring")
    composed = ListScheduler(
        inst,
        gpu_configs(profs),
        fifo_key,
        preemptive=False,
        backfill=True,
        placement=heavy_edge_placement(inst.cluster, profs, "most", fast=True),
    )
    spec = registry.get("wcs-subtime")
    wcs = spec.make(inst, spec.parse_params({"predictor": "perfect"}), np.random.default_rng(0))
    a, b = simulate(inst, composed), simulate(inst, wcs)
    assert (a.placements, a.jobs) == (b.placements, b.jobs)
    assert any(j.start is not None and j.start > j.arrival for j in a.jobs)  # jobs did queue


def test_a_misspelt_running_key_is_refused_when_the_scheduler_is_built() -> None:
    inst = asrpt_instance()
    spec = registry.get("srtf")
    configs = fixed_configs(inst, spec.parse_params({}), np.random.default_rng(0))
    with pytest.raises(ValueError, match="running_key 'remainig'"):
        ListScheduler(inst, configs, fifo_key, preemptive=True, backfill=True, running_key="remainig")  # type: ignore[arg-type]


def test_a_misspelt_server_selection_is_refused() -> None:
    inst = asrpt_instance()
    profs = profiles(inst, perfect(inst), "ring")
    with pytest.raises(ValueError, match="selection 'most-free'"):
        heavy_edge_placement(inst.cluster, profs, "most-free", fast=True)  # type: ignore[arg-type]


def test_a_misspelt_order_or_release_is_refused() -> None:
    inst = asrpt_instance()
    profs = profiles(inst, perfect(inst), "ring")
    with pytest.raises(ValueError, match="order 'durations'"):
        predicted_order(profs, "durations")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="release 'arrivals'"):
        Asrpt(inst, profs, 1.5, 1.0, "arrivals", {})  # type: ignore[arg-type]


def test_heavy_edge_never_places_on_a_server_a_srpt_does_not_use() -> None:
    # An unlimited server accepts workers but is not one A-SRPT places on (cluster.usable): the
    # baselines' schedule is the one without it.
    files = presets.build("asrpt", jobs=60, seed=2, size=0.02, load=6.0)
    doc = json.loads(files.cluster)
    plain = cluster_from_dict(doc)
    doc["servers"] = [{"id": "cloud", "capacity": {}, "unlimited": True, "nic_bw_gbps": 10.0}, *doc["servers"]]
    extra = cluster_from_dict(doc)
    runs = []
    for cluster in (plain, extra):
        inst = Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, "json"))
        for name in ("wcs-workload", "spjf"):
            spec = registry.get(name)
            algo = spec.make(inst, spec.parse_params({"predictor": "perfect"}), np.random.default_rng(0))
            runs.append(simulate(inst, algo))
    assert all(p.server != "cloud" for run in runs for p in run.placements)
    assert [(r.placements, r.jobs) for r in runs[:2]] == [(r.placements, r.jobs) for r in runs[2:]]


def test_a_preemptive_plugin_declaring_remaining_time_runs_srtf_s_schedule() -> None:
    # srtf through the public interface: remaining time at the planned rate, preemptive, its key
    # falling by one per slot run (the change-based path); ties by arrival as srtf ties=arrival.
    cluster = cluster_from_dict(TINY_CLUSTER)
    inst = Instance(cluster, parse_trace(RIGID_TRACE, cluster, "trace.csv", "csv"))

    def remaining(job, config):  # type: ignore[no-untyped-def]
        r = planned_rate(cluster, job.job, config)
        return job.remaining / r

    spec = list_algorithm("srtf-again", "srtf", remaining, preemptive=True, running="remaining")
    registry.REGISTRY[spec.name] = spec
    try:
        mine = api.run(inst, spec.name, {}, seed=0)
        srtf = api.run(inst, "srtf", {"ties": "arrival"}, seed=0)
    finally:
        del registry.REGISTRY[spec.name]
    assert mine["jobs"] == srtf["jobs"] and mine["placements"] == srtf["placements"]
    with pytest.raises(ValueError, match="running 'remaining-time'"):
        list_algorithm("typo", "typo", remaining, preemptive=True, running="remaining-time")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["spjf", "wcs-duration", "wcs-subtime"])
def test_the_asrpt_baselines_run_under_server_failures_on_the_engine_s_ledger(name: str) -> None:
    # They place on the list scheduler's ledger, where a down server is booked in full, and re-place
    # the jobs a failure killed (registry.FAILURE_AWARE).
    files = presets.build("asrpt", jobs=60, seed=0, size=0.02, load=6.0)
    doc = json.loads(files.cluster)
    doc["failures"] = [
        {"server": "gpu-node-1", "start": 30, "end": 200},
        {"server": "gpu-node-3", "start": 100, "end": 400},
    ]
    cluster = cluster_from_dict(doc)
    inst = Instance(cluster, parse_trace(files.trace, cluster, files.trace_name, "json"))
    result = api.run(inst, name, {"predictor": "perfect"}, seed=0)  # validated by api.run
    assert result["metrics"]["completed"] == 60 and result["failure_kills"]
    down = {f["server"]: (f["start"], f["end"]) for f in doc["failures"]}
    for p in result["placements"]:
        if p["server"] in down:
            start, end = down[p["server"]]
            assert p["end"] <= start or p["start"] >= end
