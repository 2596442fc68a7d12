"""A-SRPT (Alg. 1), its predictors and baselines, run through the engine and the validator."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from scheduling import api, presets, registry
from scheduling.algorithms.asrpt.predictors import predict
from scheduling.algorithms.asrpt.scheduler import VirtualSRPT
from scheduling.errors import UnsupportedInstance
from scheduling.model import Cluster, Instance, Job, Resource, Server, Stage
from scheduling.pipeline import stage_index

ALGORITHMS = ("asrpt", "spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime")


@pytest.fixture(scope="module")
def preset_instance(tmp_path_factory: pytest.TempPathFactory) -> Instance:
    out = tmp_path_factory.mktemp("asrpt")
    # with the preset's own history: asrpt's fitted predictors refuse an instance without one
    cluster_path, trace_path, history_path = presets.generate(
        "asrpt", jobs=60, seed=2, size=0.02, out=out, history=True
    )
    return api.load_instance(cluster_path, trace_path, history_path)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_job_completes_with_each_replica_placed_once(preset_instance: Instance, algorithm: str) -> None:
    doc = api.run(preset_instance, algorithm, seed=4)  # api.run validates the result
    assert doc["metrics"]["completed"] == len(preset_instance.jobs)
    replicas: dict[tuple[str, int, int], int] = defaultdict(int)  # (job, start, stage) -> replicas
    for p in doc["placements"]:
        s = stage_index(p["type"])
        assert s is not None
        replicas[(p["job_id"], p["start"], s)] += p["count"]
    for (job_id, _start, s), n in replicas.items():
        assert n == preset_instance.job(job_id).stages[s].replicas


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_the_same_seed_gives_the_same_result(preset_instance: Instance, algorithm: str) -> None:
    a = api.run(preset_instance, algorithm, seed=7)
    b = api.run(preset_instance, algorithm, seed=7)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_asrpt_refuses_a_fitted_predictor_without_a_history(preset_instance: Instance) -> None:
    alone = Instance(preset_instance.cluster, preset_instance.jobs)
    spec = registry.get("asrpt")
    with pytest.raises(UnsupportedInstance, match="needs a history of past jobs"):
        spec.build(alone, spec.parse_params({}), 0)
    for params in ({"predictor": "perfect"}, {"no_history": "zero"}):
        assert api.run(alone, "asrpt", params, seed=0)["metrics"]["completed"] == len(alone.jobs)


def test_asrpt_without_a_history_and_no_history_zero_predicts_zero_and_keeps_arrival_order(
    preset_instance: Instance,
) -> None:
    alone = Instance(preset_instance.cluster, preset_instance.jobs)
    doc = api.run(alone, "asrpt", {"no_history": "zero"}, seed=0)
    assert doc["prediction"]["history_jobs"] == 0
    starts = [j["start"] for j in sorted(doc["jobs"], key=lambda j: (j["arrival"], j["job_id"]))]
    assert starts == sorted(starts)


def test_asrpt_rejects_parameter_server_jobs() -> None:
    cluster = Cluster(60, (Resource("gpu"),), (Server("n", {"gpu": 8.0}),))
    instance = Instance(cluster, (Job("j", 0, arch="ps"),))
    with pytest.raises(UnsupportedInstance, match="neither a pipeline job"):
        registry.get("asrpt").build(instance, registry.get("asrpt").parse_params({}), 0)


def test_virtual_srpt_completes_jobs_in_srpt_order() -> None:
    vm = VirtualSRPT()
    vm.add("long", 0, 10.0)
    vm.advance(2.0)  # long has 8 left
    vm.add("short", 2, 3.0)  # preempts long
    vm.add("instant", 2, 0.0)  # predicted 0 iterations: done on arrival
    vm.advance(20.0)
    assert list(vm.done) == ["instant", "short", "long"]
    assert vm.now == pytest.approx(20.0)


def small_cluster(servers: int = 2, gpus: int = 4) -> Cluster:
    nodes = tuple(Server(f"n{i}", {"gpu": float(gpus)}, nic_bw=10.0, intra_bw=10_000.0) for i in range(servers))
    return Cluster(60, (Resource("gpu"),), nodes)


def heavy_stages() -> tuple[Stage, ...]:
    # Two replicas with 100 MB of parameters: alpha_min = 1 + 0.01, alpha_max = 1 + 100/(1/4 * 10) = 41.
    return (Stage(replicas=2, forward=0.5, backward=0.5, params=100.0),)


def blocked_heavy_job() -> tuple[Job, ...]:
    # Two communication-heavy 3-GPU blockers (predicted short, so they start at slot 1, each
    # consolidated on its own server) leave one GPU free per server; the heavy job (arriving at 2,
    # virtually done at 2.5) could only be split at slot 3.
    blocker = (Stage(replicas=3, forward=1, backward=0, params=100.0),)
    return (
        Job("b0", 0, arch="pipeline", stages=blocker, work=5, gpus=3, predicted_iterations=1),
        Job("b1", 0, arch="pipeline", stages=blocker, work=50, gpus=3, predicted_iterations=1),
        Job("heavy", 2, arch="pipeline", stages=heavy_stages(), work=2, gpus=2, predicted_iterations=2),
    )


def test_a_communication_heavy_job_waits_for_a_consolidated_placement() -> None:
    cluster = small_cluster()
    jobs = blocked_heavy_job()
    doc = api.run(Instance(cluster, jobs), "asrpt", {"predictor": "trace", "tau": 100.0}, seed=0)
    start = {j["job_id"]: j["start"] for j in doc["jobs"]}
    completion = {j["job_id"]: j["completion"] for j in doc["jobs"]}
    # It waits for b0 to finish (a whole server free) instead of starting split at slot 3.
    assert start["b0"] == 1 and start["heavy"] == completion["b0"] == 7
    servers = {p["server"] for p in doc["placements"] if p["job_id"] == "heavy"}
    assert len(servers) == 1


def test_with_no_delay_a_communication_heavy_job_starts_split_at_once() -> None:
    cluster = small_cluster()
    jobs = blocked_heavy_job()
    doc = api.run(Instance(cluster, jobs), "asrpt", {"predictor": "trace", "tau": 0.0}, seed=0)
    heavy = next(j for j in doc["jobs"] if j["job_id"] == "heavy")
    assert heavy["start"] == 3
    servers = {p["server"] for p in doc["placements"] if p["job_id"] == "heavy"}
    assert len(servers) == 2


def test_light_jobs_go_to_the_fullest_servers() -> None:
    cluster = small_cluster()
    one = (Stage(replicas=1, forward=1, backward=0),)
    jobs = (
        Job("a", 0, arch="pipeline", stages=(Stage(replicas=1, forward=1, backward=0),) * 1, work=100, gpus=1),
        Job("b", 1, arch="pipeline", stages=one, work=100, gpus=1),
    )
    doc = api.run(Instance(cluster, jobs), "asrpt", {"predictor": "perfect"}, seed=0)
    servers = {p["job_id"]: p["server"] for p in doc["placements"]}
    assert servers["a"] == servers["b"]  # fragmentation-aware: b joins a's server, n1 stays whole


def test_spjf_orders_by_predicted_duration_and_blocks() -> None:
    cluster = small_cluster(servers=1)
    one = (Stage(replicas=1, forward=1, backward=0),)
    four = (Stage(replicas=4, forward=1, backward=0),)
    jobs = (
        Job("run", 0, arch="pipeline", stages=one, work=10, gpus=1),
        Job("big", 1, arch="pipeline", stages=four, work=1, gpus=4),
        Job("small", 1, arch="pipeline", stages=one, work=5, gpus=1),
    )
    spjf = api.run(Instance(cluster, jobs), "spjf", {"predictor": "perfect"}, seed=0)
    wcs = api.run(Instance(cluster, jobs), "wcs-workload", {"predictor": "perfect"}, seed=0)
    start = {j["job_id"]: j["start"] for j in spjf["jobs"]}
    assert start["big"] == 10 and start["small"] == 11  # big (1 slot) first; small waits behind it
    start = {j["job_id"]: j["start"] for j in wcs["jobs"]}
    assert start["small"] == 1  # workload 4 vs 5: big heads the queue, but small backfills


def recurring_jobs() -> list[Job]:
    rng = np.random.default_rng(0)
    jobs = []
    for i in range(120):
        g = int(rng.integers(4))
        jobs.append(Job(f"j{i:03d}", i, group=f"g{g}", user=f"u{g}", work=float(100 * 10**g + rng.integers(10))))
    jobs.append(Job("new", 200, group="unseen", user="u0", work=50.0))
    return jobs


def test_perfect_predictions_have_no_error() -> None:
    pred = predict(recurring_jobs()[:60], recurring_jobs(), "perfect", 1.0, np.random.default_rng(0))
    assert pred.errors(recurring_jobs())["mean_abs_error"] == 0.0


def test_random_forest_learns_groups_and_predicts_zero_for_unseen_ones() -> None:
    jobs = recurring_jobs()
    past, now = jobs[:60], jobs[60:]
    forest = predict(past, now, "random-forest", 1.0, np.random.default_rng(0))
    mean = predict(past, now, "mean", 1.0, np.random.default_rng(0))
    median = predict(past, now, "median", 1.0, np.random.default_rng(0))
    assert forest.values["new"] == 0.0
    jobs = now
    rf_err = forest.errors(jobs)["mean_abs_error_after_history"]
    assert rf_err is not None and rf_err < 100
    for other in (mean, median):
        err = other.errors(jobs)["mean_abs_error_after_history"]
        assert err is not None and err > rf_err


def test_the_absolute_error_forest_predicts_a_groups_median_where_the_squared_error_forest_predicts_its_mean() -> None:
    # One group whose history is four short jobs and one very long one: mean 208, median 10.
    history = [Job(f"h{i}", i, group="g", user="u", work=w) for i, w in enumerate([10, 10, 10, 10, 1000])]
    jobs = [Job(f"n{i}", 10 + i, group="g", user="u", work=10.0) for i in range(5)]
    squared = predict(history, jobs, "random-forest", 1.0, np.random.default_rng(0))
    absolute = predict(history, jobs, "random-forest-mae", 1.0, np.random.default_rng(0))
    # Bootstrap samples of a one-group history: each tree's leaf is its sample's mean / median.
    assert 100 < squared.values["n0"] < 1000
    assert absolute.values["n0"] < 100
    assert absolute.errors(jobs)["mean_abs_error_after_history"] < squared.errors(jobs)["mean_abs_error_after_history"]


def test_predictors_fit_only_the_separate_history_never_the_scored_trace() -> None:
    jobs = recurring_jobs()
    alone = predict((), jobs, "random-forest", 1.0, np.random.default_rng(0))
    assert set(alone.values.values()) == {0.0}  # nothing seen: the paper's 0 for unseen jobs
    assert predict((), jobs, "mean", 1.0, np.random.default_rng(0)).values["j000"] == 0.0
    # the latest `history` fraction of the history trace
    latest = predict(jobs[:60], jobs, "mean", 0.5, np.random.default_rng(0))
    assert latest.values["j000"] == pytest.approx(float(np.mean([j.work_required for j in jobs[30:60]])))
    assert latest.errors(jobs)["history_jobs"] == 30


def test_results_report_the_predictors_errors(preset_instance: Instance, tmp_path: Path) -> None:
    doc = api.run(preset_instance, "asrpt", {"predictor": "mean"}, seed=0)
    assert doc["prediction"]["predictor"] == "mean"
    assert doc["prediction"]["mean_abs_error"] > 0


def one_gpu_jobs() -> tuple[Job, ...]:
    # One GPU each, 1 slot per iteration, predictions exact. On one 1-GPU server the virtual machine
    # runs run (0-2), short (2-7), run (7-15), long (15-65).
    one = (Stage(replicas=1, forward=1, backward=0),)
    return (
        Job("run", 0, arch="pipeline", stages=one, work=10, gpus=1, predicted_iterations=10),
        Job("long", 1, arch="pipeline", stages=one, work=50, gpus=1, predicted_iterations=50),
        Job("short", 2, arch="pipeline", stages=one, work=5, gpus=1, predicted_iterations=5),
    )


@pytest.mark.parametrize("release", ["completion", "arrival"])
def test_release_decides_when_a_job_may_start_in_an_idle_cluster(release: str) -> None:
    cluster = small_cluster(servers=2, gpus=4)  # G = 8: run's virtual time is 10/8 slots
    doc = api.run(Instance(cluster, one_gpu_jobs()[:1]), "asrpt", {"predictor": "trace", "release": release}, seed=0)
    assert doc["jobs"][0]["start"] == (2 if release == "completion" else 0)


@pytest.mark.parametrize("release", ["completion", "arrival"])
def test_both_releases_follow_the_virtual_srpt_order(release: str) -> None:
    cluster = small_cluster(servers=1, gpus=1)
    doc = api.run(Instance(cluster, one_gpu_jobs()), "asrpt", {"predictor": "trace", "release": release}, seed=0)
    start = {j["job_id"]: j["start"] for j in doc["jobs"]}
    # short (virtually done at 7) goes before long, which arrived earlier; with release=arrival a job
    # may start as soon as the GPU is free, literally only after its virtual completion.
    if release == "arrival":
        assert start == {"run": 0, "short": 10, "long": 15}
    else:
        assert start == {"short": 7, "run": 15, "long": 65}  # the GPU idles until short's virtual completion


def test_release_at_arrival_completes_every_job_validly_and_deterministically(preset_instance: Instance) -> None:
    a = api.run(preset_instance, "asrpt", {"release": "arrival"}, seed=3)  # api.run validates the result
    b = api.run(preset_instance, "asrpt", {"release": "arrival"}, seed=3)
    assert a["metrics"]["completed"] == len(preset_instance.jobs)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
